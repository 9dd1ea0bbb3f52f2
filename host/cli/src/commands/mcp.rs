//! `cordon mcp`: the run's tools served to MCP clients over stdio or
//! streamable HTTP. The run is
//! assembled as `cordon run` assembles one, with no model: the client asks
//! for the calls, and each is a committed step of one served run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::operator::Operator;
use anyhow::Context;
use cordon_kernel::{DEFAULT_THREAD, ServedRun};
use cordon_mcp::http::{Listener, PATH};
use cordon_mcp::watch::FolderWatch;
use cordon_mcp::{CordonMcp, Relay};
use cordon_session::Assembly;

use crate::args::{GlobalArgs, McpArgs};

pub(crate) async fn run(global: &GlobalArgs, args: McpArgs) -> anyhow::Result<ExitCode> {
    let launch = super::run::served_launch(
        global,
        args.agent.as_ref(),
        args.permissions.as_ref(),
        &args.sandbox,
        &args.skills,
        &args.plugins,
    )?;
    let agent = launch.agent(&Operator::load(&global.settings())?.defaults)?;
    let relay = Arc::new(Relay::default());
    let assembly = Assembly::open(
        &global.settings(),
        launch,
        agent,
        &args.store.location(global),
        args.strict.strict,
        relay.clone(),
    )
    .await?;
    for notice in &assembly.notices {
        eprintln!("{notice}");
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let run_id = format!("mcp-{}-{:06}", now.as_secs(), now.subsec_micros());
    let _driving = super::run::drive(&args.store.location(global), &run_id)?;
    let runtime = assembly
        .runtime_for_requests(relay.clone())
        .with_commits(args.durability.into());
    let run = ServedRun::open(
        runtime,
        &assembly.agent,
        DEFAULT_THREAD,
        &run_id,
        now.as_secs(),
    )
    .await?;
    let server = CordonMcp::new(run, relay, assembly.unsandboxed.clone()).await?;
    let folders: Vec<PathBuf> = assembly
        .launch
        .plugins
        .present()?
        .into_iter()
        .map(|folder| folder.path.clone())
        .collect();
    let watch = FolderWatch::new(&folders).context("watching the plugins folders for changes")?;
    tokio::spawn(follow(watch, Arc::new(assembly), server.clone()));
    let store = args.store.location(global);
    let served = match args.http {
        None => {
            eprintln!(
                "cordon mcp: {} tool(s) over stdio; each call is a step of run {run_id} in {store}",
                server.tool_count()
            );
            cordon_mcp::serve_stdio(server.clone()).await
        }
        Some(address) => {
            let listener = Listener::bind(address, args.allow_non_loopback).await?;
            eprintln!(
                "cordon mcp: {} tool(s) at http://{}{PATH}; each call is a step of run {run_id} in {store}",
                server.tool_count(),
                listener.local_addr()?
            );
            tokio::select! {
                served = listener.serve(server.clone()) => served.map_err(anyhow::Error::from),
                _ = tokio::signal::ctrl_c() => Ok(()),
            }
        }
    };
    server.close().await?;
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Offer what the plugins folder holds after each change, and tell the
/// clients; a reload that fails keeps the tools in force and says why.
async fn follow(mut watch: FolderWatch, assembly: Arc<Assembly>, server: CordonMcp) {
    while watch.settled().await.is_some() {
        let reloaded = match assembly.reload().await {
            Ok(reloaded) => reloaded,
            Err(error) => {
                eprintln!("error: {error:#}; the tools offered stay as they were");
                continue;
            }
        };
        match server.tools_changed().await {
            Ok(true) => eprintln!(
                "cordon mcp: the plugins folder changed; {} tool(s) offered now{}",
                server.tool_count(),
                if reloaded.left_out.is_empty() {
                    String::new()
                } else {
                    format!(", {} bundle(s) left out", reloaded.left_out.len())
                }
            ),
            Ok(false) => {}
            Err(error) => eprintln!("error: {error}; the tools offered stay as they were"),
        }
    }
}
