//! `cordon tool call`: run one tool in its sandbox and print what it returned.

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use cordon_kernel::{DEFAULT_THREAD, Event, StateStore, ToolError, call_committed};
use cordon_session::Toolbox;
use cordon_store::ThreadState;
use serde::Serialize;
use serde_json::Value;

use crate::args::{GlobalArgs, PluginsArg, StoreArg, StrictArg};
use crate::events::CliEvents;
use crate::store;

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool's name, for example `jq.query`.
    pub tool: String,
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub strict: StrictArg,
    /// Arguments as a JSON object; `@FILE` reads them from a file, `-` from stdin.
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// The thread whose state the tool reads and writes.
    #[arg(long, env = "CORDON_THREAD", default_value = DEFAULT_THREAD)]
    pub thread: String,
    #[command(flatten)]
    pub store: StoreArg,
    /// Print one JSON document with the output or error and every event.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Printed<'a> {
    ok: bool,
    tool: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ToolError>,
    events: Vec<Event>,
}

pub(crate) async fn run(global: &GlobalArgs, args: CallArgs) -> anyhow::Result<ExitCode> {
    let value = parse_args(&args.args)?;
    let events = Arc::new(CliEvents::new(args.json));
    let location = args.store.location(global);
    let Toolbox { plugins, .. } = Toolbox::open(
        &global.settings(),
        |operator| args.plugins.path(operator),
        args.strict.strict,
        location.file(),
        events.clone(),
    )
    .await?;
    let store::RunStore::Sqlite(store) = store::create(&location).await? else {
        bail!(
            "`cordon tool call` keeps thread state in a SQLite store, and {location} is a \
             Postgres store; name a file with --store, or call the tool from a run"
        );
    };
    let state: Arc<dyn StateStore> = Arc::new(ThreadState::new(store, &args.thread));
    let result = call_committed(&plugins, state, &args.tool, value).await;
    let (output, error) = match &result {
        Ok(output) => (Some(&output.content), None),
        Err(error) => (None, Some(error)),
    };
    if args.json {
        let printed = Printed {
            ok: result.is_ok(),
            tool: &args.tool,
            output,
            error,
            events: events.take(),
        };
        println!("{}", serde_json::to_string_pretty(&printed)?);
    } else if let Some(output) = output {
        match output {
            Value::String(text) => println!("{text}"),
            other => println!("{}", serde_json::to_string_pretty(other)?),
        }
    } else if let Some(error) = error {
        eprintln!("error: {}: {}", error.kind, error.message);
    }
    Ok(if result.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The `--args` value: inline JSON, `@FILE` or `-` for stdin. Arguments
/// that cannot be read or are not a JSON object stop the command before
/// anything loads (exit 2): no tool ran.
fn parse_args(raw: &str) -> anyhow::Result<Value> {
    let (text, from) = if raw == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("--args -: reading the arguments from stdin")?;
        (text, "stdin".to_owned())
    } else if let Some(path) = raw.strip_prefix('@') {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--args @{path}: reading the arguments"))?;
        (text, path.to_owned())
    } else {
        (raw.to_owned(), "--args".to_owned())
    };
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("{from}: the arguments are not valid JSON"))?;
    if !value.is_object() {
        anyhow::bail!(
            "{from}: the arguments are a JSON object, such as {{\"path\": \"a.txt\"}}, not {value}"
        );
    }
    Ok(value)
}
