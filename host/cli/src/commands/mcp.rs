//! `cordon mcp`: the run's tools served to MCP clients over stdio or
//! streamable HTTP. The run is
//! assembled as `cordon run` assembles one, with no model: the client asks
//! for the calls, and each is a committed step of one served run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::Args;
use cordon_kernel::{DEFAULT_THREAD, ServedRun};
use cordon_mcp::http::{Listener, PATH};
use cordon_mcp::lanes::Kept;
use cordon_mcp::watch::FolderWatch;
use cordon_mcp::{CordonMcp, Lanes, Opener, Relay};
use cordon_session::Assembly;
use cordon_session::store::StoreLocation;

use crate::args::{GlobalArgs, PluginsArg, SandboxArgs, SkillsArg, StoreArg, StrictArg};
use crate::operator::Operator;

/// How `cordon mcp` serves.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub strict: StrictArg,
    /// Agent file whose `tools`, `[permissions]` and `[state]` the served
    /// calls obey. Without one: every tool, and every call asks for approval
    /// (through the client's elicitation, or denied where it has none).
    #[arg(long, env = "CORDON_AGENT")]
    pub agent: Option<PathBuf>,
    /// A permissions file (`default`, `allow`, `ask`, `deny`) that replaces the
    /// agent's `[permissions]`.
    #[arg(long, env = "CORDON_PERMISSIONS")]
    pub permissions: Option<PathBuf>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub skills: SkillsArg,
    #[command(flatten)]
    pub store: StoreArg,
    /// Serve streamable HTTP at `http://ADDR/mcp` instead of stdio, such as
    /// `127.0.0.1:8750` (port 0 picks one and prints it).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Let `--http` bind an address other than loopback: anyone who reaches
    /// the port can then call the tools.
    #[arg(long, requires = "http")]
    pub allow_non_loopback: bool,
    /// How many calls run at once. Each call running is a step of its own
    /// served run: a call made while every run is busy opens another, up to
    /// this many; past it, calls wait for one to be free.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
    /// How far each call's step commit reaches before the client gets its
    /// answer.
    #[arg(long, env = "CORDON_DURABILITY", value_enum, default_value_t = CommitDurability::Disk)]
    pub durability: CommitDurability,
}

/// How far a served call's step commit reaches before it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CommitDurability {
    /// On the disk: a power loss keeps every answered call's record.
    Disk,
    /// Out of the process: every reader sees it and a crash of Cordon keeps
    /// it; it reaches the disk soon after (within 10 ms for a SQLite store,
    /// within three `wal_writer_delay`s for Postgres), so a power loss may
    /// lose the records of the calls answered last (never part of one). A
    /// call that changes workspace files commits on disk all the same.
    Process,
}

impl From<CommitDurability> for cordon_kernel::Durability {
    fn from(durability: CommitDurability) -> Self {
        match durability {
            CommitDurability::Disk => Self::Disk,
            CommitDurability::Process => Self::Process,
        }
    }
}

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
    let assembly = Assembly::open(
        &global.settings(),
        launch,
        agent,
        &args.store.location(global),
        args.strict.strict,
        Arc::new(Relay),
    )
    .await?;
    for notice in &assembly.notices {
        eprintln!("{notice}");
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let run_id = format!("mcp-{}-{:06}", now.as_secs(), now.subsec_micros());
    crate::telemetry::watch_pool(&assembly);
    let assembly = Arc::new(assembly);
    let lanes = Lanes::new(
        opener(
            Arc::clone(&assembly),
            args.store.location(global),
            run_id.clone(),
            args.durability,
        ),
        usize::from(args.concurrency),
    )
    .await?;
    let server = CordonMcp::new(lanes, assembly.unsandboxed.clone())?;
    let folders: Vec<PathBuf> = assembly
        .launch
        .plugins
        .present()?
        .into_iter()
        .map(|folder| folder.path.clone())
        .collect();
    let watch = FolderWatch::new(&folders).context("watching the plugins folders for changes")?;
    tokio::spawn(follow(watch, Arc::clone(&assembly), server.clone()));
    let store = args.store.location(global);
    let served = match args.http {
        None => {
            eprintln!(
                "cordon mcp: {} tool(s) over stdio; each call is a step of run {run_id} in {store}{}",
                server.tool_count(),
                at_once(args.concurrency)
            );
            cordon_mcp::serve_stdio(server.clone()).await
        }
        Some(address) => {
            let listener = Listener::bind(address, args.allow_non_loopback).await?;
            eprintln!(
                "cordon mcp: {} tool(s) at http://{}{PATH}; each call is a step of run {run_id} in {store}{}",
                server.tool_count(),
                listener.local_addr()?,
                at_once(args.concurrency)
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

/// What the start line says of calls made together, when up to
/// `concurrency` run at once.
fn at_once(concurrency: u16) -> &'static str {
    if concurrency > 1 {
        " (calls made while it runs one are steps of runs named after it: -2, -3, ...)"
    } else {
        ""
    }
}

/// How the server opens run `number` of its runs: the first is `run_id`,
/// the others `run_id-2`, `run_id-3`, ..., each of the same agent and
/// thread, committing as `durability` says, driven by this process alone.
fn opener(
    assembly: Arc<Assembly>,
    store: StoreLocation,
    run_id: String,
    durability: CommitDurability,
) -> Opener {
    Box::new(move |number| {
        let run_id = match number {
            0 => run_id.clone(),
            later => format!("{run_id}-{}", later + 1),
        };
        let (assembly, store) = (Arc::clone(&assembly), store.clone());
        Box::pin(async move {
            let driving = super::run::drive(&store, &run_id)?;
            // A served run asks no model itself; the sub-agents it serves name theirs.
            let runtime = assembly
                .runtime_for_requests(Arc::new(Relay))
                .with_models(Arc::new(cordon_providers::SpecResolver))
                .with_commits(durability.into())
                .with_span_content(crate::telemetry::span_content());
            let created = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            let run =
                ServedRun::open(runtime, &assembly.agent, DEFAULT_THREAD, &run_id, created).await?;
            Ok((run, Box::new(driving) as Kept))
        })
    })
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
