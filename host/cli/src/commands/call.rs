//! `cordon tool call`: run one tool in its sandbox and print what it returned.

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use cordon_kernel::{Event, FileRules, StateStore, ToolError, ToolErrorKind, call_committed};
use cordon_store::ThreadState;
use serde::Serialize;
use serde_json::Value;

use crate::args::{CallArgs, GlobalArgs};
use crate::context;
use crate::events::CliEvents;
use crate::operator::Operator;
use crate::store;

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
    let operator = Operator::load(&global.settings())?;
    let host = context::host(&global.settings(), &operator)?;
    let report = context::load_all(
        &host,
        &operator,
        &global.workspace,
        &args.plugins.dir(),
        args.strict.strict,
    )
    .await?;
    let events = Arc::new(CliEvents::new(args.json));
    let store = store::create(&args.store.store)?;
    let state: Arc<dyn StateStore> = Arc::new(ThreadState::new(Arc::new(store), &args.thread));
    let safeguards = context::safeguards(
        &operator,
        &FileRules::new(),
        &args.store.store,
        &global.workspace,
    );
    let plugins = host
        .plugins_with(report.bundles, events.clone(), safeguards)
        .map_err(|errors| anyhow::anyhow!("{}", errors[0]))?;
    let result = match parse_args(&args.args) {
        Ok(value) => call_committed(&plugins, state, &args.tool, value).await,
        Err(error) => Err(error),
    };
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

/// The `--args` value: inline JSON, `@FILE` or `-` for stdin.
fn parse_args(raw: &str) -> Result<Value, ToolError> {
    let invalid = |message: String| ToolError::new(ToolErrorKind::InvalidInput, message);
    let text = if raw == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading arguments from stdin")
            .map_err(|error| invalid(format!("{error:#}")))?;
        text
    } else if let Some(path) = raw.strip_prefix('@') {
        std::fs::read_to_string(path)
            .with_context(|| format!("reading arguments from {path}"))
            .map_err(|error| invalid(format!("{error:#}")))?
    } else {
        raw.to_owned()
    };
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| invalid(format!("--args is not valid JSON: {error}")))?;
    if !value.is_object() {
        return Err(invalid("--args must be a JSON object".into()));
    }
    Ok(value)
}
