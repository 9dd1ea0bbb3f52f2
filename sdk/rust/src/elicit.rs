//! Questions to the person a call runs for, such as an MCP client's user:
//! a message and a form of flat fields. The bundle's manifest grants it
//! with `elicit = true` under `[grants]`; without the grant, or when nobody
//! can be asked (a model's run), [`ask`] fails with the reason.
//!
//! A client may answer between requests rather than during the call: the
//! call then stops at the question and runs again from the start with the
//! answer. So a tool asks its questions before it acts, asks the same ones
//! in the same order for the same arguments and answers, and names each
//! with a `key` of its own.
//!
//! ```ignore
//! let schema = serde_json::json!({
//!     "type": "object",
//!     "properties": { "name": { "type": "string" } },
//!     "required": ["name"]
//! });
//! match cordon_sdk::elicit::ask("name", "What is your name?", &schema)? {
//!     Answer::Accept(fields) => greet(&fields["name"]),
//!     Answer::Decline | Answer::Cancel => Err(ToolError::Failed("no name given".into())),
//! }
//! ```

use serde_json::{Map, Value};

use crate::ToolError;
use crate::bindings::cordon::plugin::elicit as host;

/// What the person did with the form.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// They filled it in: the form's fields.
    Accept(Map<String, Value>),
    /// They said no.
    Decline,
    /// They dismissed it without answering.
    Cancel,
}

/// Ask the person `message`, with the form `schema` describes (a JSON
/// object schema of primitive properties, as MCP elicitation takes). A
/// refusal, or nobody to ask, is [`ToolError::Denied`] with the reason.
pub fn ask(key: &str, message: &str, schema: &Value) -> Result<Answer, ToolError> {
    match host::ask(key, message, &schema.to_string()).map_err(ToolError::Denied)? {
        host::Answer::Accept(fields) => {
            serde_json::from_str(&fields)
                .map(Answer::Accept)
                .map_err(|error| {
                    ToolError::Failed(format!("the answer is not a JSON object: {error}"))
                })
        }
        host::Answer::Decline => Ok(Answer::Decline),
        host::Answer::Cancel => Ok(Answer::Cancel),
    }
}
