//! The `test` bundle: tools whose behaviour MCP clients and the MCP
//! conformance suite check, built as a real component so that every check
//! exercises the sandbox path. Each travels to clients as `test_NAME`.

use std::time::Duration;

use cordon_sdk::{Annotations, Tool, ToolError, log};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Returns its arguments: the trivial tool a round trip is measured with.
pub struct Echo;

impl Tool for Echo {
    const NAME: &'static str = "test.echo";
    const DESCRIPTION: &'static str = "Return the arguments unchanged.";
    type Args = serde_json::Map<String, Value>;
    type Output = serde_json::Map<String, Value>;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(
        args: serde_json::Map<String, Value>,
    ) -> Result<serde_json::Map<String, Value>, ToolError> {
        Ok(args)
    }
}

/// Reports progress three times, 50 ms apart.
pub struct Progress;

impl Tool for Progress {
    const NAME: &'static str = "test.tool_with_progress";
    const DESCRIPTION: &'static str = "Report progress 0, 50 and 100 of 100, 50 ms apart.";
    type Args = NoArgs;
    type Output = Value;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<Value, ToolError> {
        for done in [0, 50, 100] {
            log::progress(done, Some(100), &format!("{done} of 100"));
            if done < 100 {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(json!({ "done": 100 }))
    }
}

/// Logs three lines at info, 50 ms apart.
pub struct Logging;

impl Tool for Logging {
    const NAME: &'static str = "test.tool_with_logging";
    const DESCRIPTION: &'static str = "Log three info messages, 50 ms apart.";
    type Args = NoArgs;
    type Output = Value;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<Value, ToolError> {
        for (index, message) in [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        .into_iter()
        .enumerate()
        {
            log::info(message);
            if index < 2 {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(json!({ "logged": 3 }))
    }
}

/// Always fails, as a tool (not the protocol) does.
pub struct ErrorHandling;

impl Tool for ErrorHandling {
    const NAME: &'static str = "test.error_handling";
    const DESCRIPTION: &'static str = "Return a tool error, always.";
    type Args = NoArgs;
    type Output = Value;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<Value, ToolError> {
        Err(ToolError::Failed(
            "This tool intentionally returns an error for testing".into(),
        ))
    }
}

/// How long to wait.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// Milliseconds.
    pub ms: u64,
}

/// Waits, for tests of cancellation.
pub struct Wait;

impl Tool for Wait {
    const NAME: &'static str = "test.wait";
    const DESCRIPTION: &'static str = "Wait `ms` milliseconds, reporting progress every 100 ms.";
    type Args = WaitArgs;
    type Output = Value;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(args: WaitArgs) -> Result<Value, ToolError> {
        let mut waited = 0;
        while waited < args.ms {
            log::progress(waited, Some(args.ms), "waiting");
            let step = (args.ms - waited).min(100);
            std::thread::sleep(Duration::from_millis(step));
            waited += step;
        }
        Ok(json!({ "waited": waited }))
    }
}

cordon_sdk::export_tools!(Echo, Progress, Logging, ErrorHandling, Wait);
