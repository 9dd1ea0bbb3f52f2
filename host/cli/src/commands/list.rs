//! `cordon tool list`: every tool of every bundle, and with `--agent` those
//! of the MCP servers the agent lists, marked when they run outside any
//! sandbox.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use cordon_kernel::{AgentDef, EventLog, ToolAnnotations, ToolSet};
use cordon_session::{Toolbox, mcp_servers};
use serde::Serialize;

use crate::args::{GlobalArgs, PluginsArg, StrictArg};
use crate::table;

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub strict: StrictArg,
    /// Also list the tools of the MCP servers this agent file lists,
    /// admitted and connected as a run would.
    #[arg(long, value_name = "FILE")]
    pub agent: Option<PathBuf>,
    /// Print the full tool specs as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One tool, with its annotations as permission rules and resuming treat
/// them: as declared when the operator trusts its bundle, the worst case
/// otherwise.
#[derive(Serialize)]
struct Listed<'a> {
    bundle: String,
    trusted: bool,
    /// Where the tool runs, when that is outside any sandbox.
    #[serde(skip_serializing_if = "Option::is_none")]
    unsandboxed: Option<String>,
    #[serde(flatten)]
    spec: &'a cordon_kernel::ToolSpec,
}

pub(crate) async fn run(global: &GlobalArgs, args: ListArgs) -> anyhow::Result<ExitCode> {
    let Toolbox {
        operator,
        host,
        plugins,
    } = Toolbox::open(
        &global.settings(),
        |operator| args.plugins.path(operator),
        args.strict.strict,
        None,
        Arc::new(EventLog::new()),
    )
    .await?;
    let specs = plugins.specs();
    let mut listed: Vec<Listed<'_>> = specs
        .iter()
        .map(|spec| {
            let bundle = plugins.bundle_of(&spec.name);
            Listed {
                bundle: bundle.map_or_else(String::new, |bundle| bundle.manifest.name.clone()),
                trusted: bundle.is_some_and(|bundle| plugins.trusts(bundle)),
                unsandboxed: None,
                spec,
            }
        })
        .collect();
    let servers = match &args.agent {
        Some(file) => {
            let agent = AgentDef::load(file)?;
            mcp_servers::open(
                &agent,
                Some(file),
                &operator.mcp,
                host.network(),
                &global.workspace,
                args.strict.strict,
            )
            .await?
            .0
        }
        None => None,
    };
    let server_specs = servers.as_ref().map(ToolSet::specs).unwrap_or_default();
    if let Some(servers) = &servers {
        let unsandboxed = servers.unsandboxed();
        listed.extend(server_specs.iter().map(|spec| {
            let server = servers.server_of(&spec.name);
            Listed {
                bundle: format!("mcp:{}", server.map_or("", |server| server.name.as_str())),
                trusted: server.is_some_and(|server| server.trusted),
                unsandboxed: unsandboxed.get(&spec.name).cloned(),
                spec,
            }
        }));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<[String; 4]> = listed
        .iter()
        .map(|tool| {
            let mut effects = if tool.trusted {
                annotations(tool.spec.annotations)
            } else {
                "untrusted".to_owned()
            };
            if tool.unsandboxed.is_some() {
                effects.push_str(",unsandboxed");
            }
            [
                tool.spec.name.clone(),
                tool.bundle.clone(),
                effects,
                first_line(&tool.spec.description).to_owned(),
            ]
        })
        .collect();
    table::print(["TOOL", "BUNDLE", "EFFECTS", "DESCRIPTION"], &rows);
    Ok(ExitCode::SUCCESS)
}

fn annotations(annotations: ToolAnnotations) -> String {
    let words: Vec<&str> = [
        (annotations.read_only, "read-only"),
        (annotations.destructive, "destructive"),
        (annotations.idempotent, "idempotent"),
        (annotations.open_world, "open-world"),
    ]
    .into_iter()
    .filter_map(|(set, word)| set.then_some(word))
    .collect();
    if words.is_empty() {
        "-".into()
    } else {
        words.join(",")
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
