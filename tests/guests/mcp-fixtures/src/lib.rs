//! The `test` bundle: tools whose behaviour MCP clients and the MCP
//! conformance suite check, built as a real component so that every check
//! exercises the sandbox path. Each travels to clients as `test_NAME`.

use std::time::Duration;

use cordon_sdk::{Annotations, Tool, ToolError, content, log};
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

/// Answers with one line of text.
pub struct SimpleText;

impl Tool for SimpleText {
    const NAME: &'static str = "test.simple_text";
    const DESCRIPTION: &'static str = "Answer with one line of text.";
    type Args = NoArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<String, ToolError> {
        Ok("This is a simple text response for testing.".into())
    }
}

/// The smallest PNG: one transparent pixel.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// A WAV header with no samples.
const WAV: &[u8] = &[
    b'R', b'I', b'F', b'F', 36, 0, 0, 0, b'W', b'A', b'V', b'E', b'f', b'm', b't', b' ', 16, 0, 0,
    0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x80, 0x3e, 0, 0, 2, 0, 16, 0, b'd', b'a', b't', b'a', 0, 0,
    0, 0,
];

fn attached(result: Result<(), String>) -> Result<(), ToolError> {
    result.map_err(ToolError::Failed)
}

/// Answers with an image and nothing else.
pub struct ImageContent;

impl Tool for ImageContent {
    const NAME: &'static str = "test.image_content";
    const DESCRIPTION: &'static str = "Answer with a PNG image.";
    type Args = NoArgs;
    type Output = ();

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<(), ToolError> {
        attached(content::image(PNG, "image/png"))
    }
}

/// Answers with audio and nothing else.
pub struct AudioContent;

impl Tool for AudioContent {
    const NAME: &'static str = "test.audio_content";
    const DESCRIPTION: &'static str = "Answer with a WAV clip.";
    type Args = NoArgs;
    type Output = ();

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<(), ToolError> {
        attached(content::audio(WAV, "audio/wav"))
    }
}

/// Answers with an embedded text resource.
pub struct EmbeddedResource;

impl Tool for EmbeddedResource {
    const NAME: &'static str = "test.embedded_resource";
    const DESCRIPTION: &'static str = "Answer with an embedded text resource.";
    type Args = NoArgs;
    type Output = ();

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<(), ToolError> {
        attached(content::resource_text(
            "test://embedded-resource",
            Some("text/plain"),
            "This is an embedded resource content.",
        ))
    }
}

/// Answers with text, an image and a resource, in that order.
pub struct MultipleContentTypes;

impl Tool for MultipleContentTypes {
    const NAME: &'static str = "test.multiple_content_types";
    const DESCRIPTION: &'static str = "Answer with text, an image and a JSON resource.";
    type Args = NoArgs;
    type Output = ();

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<(), ToolError> {
        attached(content::text("Multiple content types test:"))?;
        attached(content::image(PNG, "image/png"))?;
        attached(content::resource_text(
            "test://mixed-content-resource",
            Some("application/json"),
            r#"{"test":"data","value":123}"#,
        ))
    }
}

/// Logs, for the check that nothing is logged to a client that did not ask.
pub struct LoggingTool;

impl Tool for LoggingTool {
    const NAME: &'static str = "test.logging_tool";
    const DESCRIPTION: &'static str = "Log one info message.";
    type Args = NoArgs;
    type Output = Value;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<Value, ToolError> {
        log::info("Logging tool called");
        Ok(json!({ "logged": 1 }))
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

cordon_sdk::export_tools!(
    Echo,
    SimpleText,
    ImageContent,
    AudioContent,
    EmbeddedResource,
    MultipleContentTypes,
    LoggingTool,
    Progress,
    Logging,
    ErrorHandling,
    Wait
);
