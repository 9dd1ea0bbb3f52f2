//! The `test` bundle: tools whose behaviour MCP clients and the MCP
//! conformance suite check, built as a real component so that every check
//! exercises the sandbox path. Each travels to clients as `test_NAME`. The
//! ones that ask questions need the bundle's `elicit` grant.

use std::time::Duration;

use cordon_sdk::elicit::{self, Answer};
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

/// What a person answered, as the conformance suite reads it back.
fn answered(answer: &Answer) -> String {
    match answer {
        Answer::Accept(fields) => {
            format!("action=accept, content={}", Value::Object(fields.clone()))
        }
        Answer::Decline => "action=decline, content={}".to_owned(),
        Answer::Cancel => "action=cancel, content={}".to_owned(),
    }
}

/// The accepted field `name` of `answer`, as text.
fn field(answer: &Answer, name: &str) -> Result<String, ToolError> {
    match answer {
        Answer::Accept(fields) => Ok(match fields.get(name) {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => {
                return Err(ToolError::InvalidInput(format!(
                    "the answer has no `{name}`"
                )));
            }
        }),
        Answer::Decline | Answer::Cancel => Err(ToolError::Failed(format!(
            "the question was not answered ({})",
            answered(answer)
        ))),
    }
}

/// A form of one required field of `kind`.
fn one_field(name: &str, kind: &str) -> Value {
    json!({
        "type": "object",
        "properties": { name: { "type": kind } },
        "required": [name]
    })
}

/// The message to show.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageArgs {
    /// The message to show the user.
    pub message: String,
}

/// Asks for a user name and an email address.
pub struct Elicitation;

impl Tool for Elicitation {
    const NAME: &'static str = "test.elicitation";
    const DESCRIPTION: &'static str = "Ask the user for a user name and an email address.";
    type Args = MessageArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(args: MessageArgs) -> Result<String, ToolError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "username": { "type": "string", "description": "User's response" },
                "email": { "type": "string", "description": "User's email address" }
            },
            "required": ["username", "email"]
        });
        let answer = elicit::ask("user_info", &args.message, &schema)?;
        Ok(format!("User response: {}", answered(&answer)))
    }
}

/// Asks with a default for every primitive type (SEP-1034).
pub struct ElicitationDefaults;

impl Tool for ElicitationDefaults {
    const NAME: &'static str = "test.elicitation_sep1034_defaults";
    const DESCRIPTION: &'static str = "Ask with a default value for every primitive type.";
    type Args = NoArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<String, ToolError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "default": "John Doe" },
                "age": { "type": "integer", "default": 30 },
                "score": { "type": "number", "default": 95.5 },
                "status": {
                    "type": "string",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active"
                },
                "verified": { "type": "boolean", "default": true }
            }
        });
        let answer = elicit::ask(
            "defaults",
            "Please review and update the form fields with defaults",
            &schema,
        )?;
        Ok(format!("Elicitation completed: {}", answered(&answer)))
    }
}

/// Asks with every kind of enum (SEP-1330).
pub struct ElicitationEnums;

impl Tool for ElicitationEnums {
    const NAME: &'static str = "test.elicitation_sep1330_enums";
    const DESCRIPTION: &'static str = "Ask with every kind of single- and multi-select enum.";
    type Args = NoArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<String, ToolError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                "titledSingle": {
                    "type": "string",
                    "oneOf": [
                        { "const": "value1", "title": "First Option" },
                        { "const": "value2", "title": "Second Option" },
                        { "const": "value3", "title": "Third Option" }
                    ]
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]
                },
                "untitledMulti": {
                    "type": "array",
                    "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
                },
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            { "const": "value1", "title": "First Choice" },
                            { "const": "value2", "title": "Second Choice" },
                            { "const": "value3", "title": "Third Choice" }
                        ]
                    }
                }
            }
        });
        let answer = elicit::ask("enums", "Please select from the options", &schema)?;
        Ok(format!("Elicitation completed: {}", answered(&answer)))
    }
}

/// Asks the user's name and greets them.
pub struct AskName;

impl Tool for AskName {
    const NAME: &'static str = "test.input_required_result_elicitation";
    const DESCRIPTION: &'static str = "Ask the user's name, then greet them.";
    type Args = NoArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<String, ToolError> {
        let answer = elicit::ask(
            "user_name",
            "What is your name?",
            &one_field("name", "string"),
        )?;
        Ok(format!("Hello, {}!", field(&answer, "name")?))
    }
}

/// Asks for a confirmation, which comes back with the sealed request state.
pub struct Confirm;

impl Tool for Confirm {
    const NAME: &'static str = "test.input_required_result_request_state";
    const DESCRIPTION: &'static str = "Ask for a confirmation.";
    type Args = NoArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<String, ToolError> {
        confirm()
    }
}

fn confirm() -> Result<String, ToolError> {
    let answer = elicit::ask("confirm", "Please confirm", &one_field("ok", "boolean"))?;
    Ok(format!("state-ok: confirmed={}", field(&answer, "ok")?))
}

/// The same confirmation, for the suite's tampering check.
pub struct ConfirmTampered;

impl Tool for ConfirmTampered {
    const NAME: &'static str = "test.input_required_result_tampered_state";
    const DESCRIPTION: &'static str =
        "Ask for a confirmation; a tampered request state is refused.";
    type Args = NoArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<String, ToolError> {
        confirm()
    }
}

/// Asks two questions, one after the other.
pub struct TwoQuestions;

impl Tool for TwoQuestions {
    const NAME: &'static str = "test.input_required_result_multi_round";
    const DESCRIPTION: &'static str = "Ask a name, then a favourite colour.";
    type Args = NoArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<String, ToolError> {
        let name = elicit::ask(
            "step1",
            "Step 1: What is your name?",
            &one_field("name", "string"),
        )?;
        let name = field(&name, "name")?;
        let color = elicit::ask(
            "step2",
            "Step 2: What is your favorite color?",
            &one_field("color", "string"),
        )?;
        Ok(format!("{name} likes {}", field(&color, "color")?))
    }
}

/// Asks a question while the request's response streams.
pub struct StreamingElicitation;

impl Tool for StreamingElicitation {
    const NAME: &'static str = "test.streaming_elicitation";
    const DESCRIPTION: &'static str = "Report progress, then ask a question.";
    type Args = NoArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<String, ToolError> {
        log::progress(0, Some(1), "about to ask");
        let answer = elicit::ask("go_on", "Go on?", &one_field("go_on", "boolean"))?;
        Ok(format!("Elicitation completed: {}", answered(&answer)))
    }
}

/// Hostile: asks question after question, each under a new key, until the
/// host refuses one.
pub struct AskForever;

impl Tool for AskForever {
    const NAME: &'static str = "test.ask_forever";
    const DESCRIPTION: &'static str = "Ask questions until refused.";
    type Args = NoArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: NoArgs) -> Result<String, ToolError> {
        let mut round = 0u32;
        loop {
            elicit::ask(&format!("q{round}"), "Again?", &one_field("n", "integer"))?;
            round += 1;
        }
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
    Wait,
    Elicitation,
    ElicitationDefaults,
    ElicitationEnums,
    AskName,
    Confirm,
    ConfirmTampered,
    TwoQuestions,
    StreamingElicitation,
    AskForever
);
