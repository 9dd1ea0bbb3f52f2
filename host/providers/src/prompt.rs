//! The parts of a request every hosted provider renders the same way: the
//! system text (the agent's instructions and its visible state) and a tool
//! result as text.

use cordon_kernel::{CallResult, ModelRequest};
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
