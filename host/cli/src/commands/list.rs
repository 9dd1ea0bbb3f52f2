//! `cordon tool list`: every tool of every bundle, and with `--agent` those
//! of the MCP servers the agent lists, marked when they run outside any
//! sandbox.

use std::process::ExitCode;
use std::sync::Arc;

use cordon_kernel::{AgentDef, EventLog, ToolAnnotations, ToolSet};
use cordon_session::mcp_servers;
use cordon_wasm::Safeguards;
use serde::Serialize;

use crate::args::{GlobalArgs, ListArgs};
use crate::context;
use crate::operator::Operator;
use crate::table;

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
    let operator = Operator::load(&global.settings())?;
    let host = context::host(&global.settings(), &operator)?;
    let report = context::load_all(
        &host,
        &operator,
        &global.workspace,
        &args.plugins.path(&operator),
        args.strict.strict,
    )
    .await?;
    let safeguards = Safeguards {
        trust: operator.trust.clone(),
        ..Safeguards::default()
    };
    let plugins = host
        .plugins_with(report.bundles, Arc::new(EventLog::new()), safeguards)
        .map_err(|errors| anyhow::anyhow!("{}", errors[0]))?;
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
