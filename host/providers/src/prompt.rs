//! The parts of a request every hosted provider renders the same way: the
//! system text (the agent's instructions and its visible state), a tool
//! result as text, and the content blocks beside it as images and text.

use cordon_kernel::{CallResult, ContentBlock, ModelRequest, ResourceBody};
use serde_json::Value;

/// The instructions, followed by the agent's state when it has any.
pub(crate) fn system_text(request: &ModelRequest<'_>) -> String {
    if request.state.is_empty() {
        return request.instructions.to_owned();
    }
    let state = serde_json::to_string_pretty(request.state).unwrap_or_default();
    format!(
        "{}\n\nThe agent's state, as of the last step:\n{state}",
        request.instructions
    )
}

/// A tool result as the model reads it, and whether it is an error.
pub(crate) fn result_text(result: &CallResult) -> (String, bool) {
    match result {
        CallResult::Output(Value::String(text)) => (text.clone(), false),
        CallResult::Output(value) => (value.to_string(), false),
        CallResult::Error(error) => (format!("error ({}): {}", error.kind, error.message), true),
    }
}

/// The image types models read.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A tool result's content blocks as a model takes them: the images it is
/// sent, and text for everything else, appended to the result's text.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Attached {
    /// Text to append to the result's text; empty when nothing is.
    pub(crate) text: String,
    /// Each image's MIME type and its base64 bytes.
    pub(crate) images: Vec<(String, String)>,
}

/// What of `blocks` reaches a model that is sent images when `images`:
/// text and text resources as text; images of a type models read as images;
/// anything else as a line saying what was left out and why.
pub(crate) fn attached(blocks: &[ContentBlock], images: bool) -> Attached {
    let mut attached = Attached::default();
    let mut say = |line: String| {
        attached.text.push('\n');
        attached.text.push_str(&line);
    };
    let mut sent = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text } => say(text.clone()),
            ContentBlock::Resource {
                uri,
                body: ResourceBody::Text(text),
                ..
            } => say(format!("[resource {uri}]\n{text}")),
            ContentBlock::Resource { uri, mime_type, .. } => say(format!(
                "[resource {uri} ({}) left out: the model is sent no binary resources]",
                mime_type.as_deref().unwrap_or("bytes")
            )),
            ContentBlock::Image { mime_type, data }
                if images && IMAGE_TYPES.contains(&mime_type.as_str()) =>
            {
                sent.push((mime_type.clone(), data.clone()));
            }
            ContentBlock::Image { mime_type, .. } if images => say(format!(
                "[image ({mime_type}) left out: models read {}]",
                IMAGE_TYPES.join(", ")
            )),
            ContentBlock::Image { mime_type, .. } => say(format!(
                "[image ({mime_type}) left out: this model is not sent images; `images = true` in the agent file sends them]"
            )),
            ContentBlock::Audio { mime_type, .. } => say(format!(
                "[audio ({mime_type}) left out: the model is sent no audio]"
            )),
        }
    }
    attached.images = sent;
    attached
}

/// A tool call's arguments as JSON text: malformed arguments the model sent
/// are kept as the raw text it sent.
pub(crate) fn arguments_text(args: &Value) -> String {
    match args {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// Parse the arguments a model streamed for one call. An empty string is `{}`;
/// anything that is not a JSON object is kept as the raw text, which the loop
/// answers with an `invalid-input` tool error the model sees.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::String(raw.to_owned()),
    }
}
