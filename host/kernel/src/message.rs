//! The conversation of a run: messages, and the tool calls a model requests.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::ContentBlock;
use crate::tool::error::ToolError;

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The person or system that started the run.
    User,
    /// The model.
    Assistant,
    /// A tool's result, answering one call.
    Tool,
}

/// A tool call as the model requested it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Identifier of the call, unique within the run.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, as the model supplied them.
    pub args: Value,
}

/// What a tool call produced, as the model will see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallResult {
    /// The tool's output.
    Output(Value),
    /// Why there is no output.
    Error(ToolError),
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "kebab-case")]
pub enum Message {
    /// Input to the model.
    User {
        /// The input.
        text: String,
    },
    /// The model's turn: text and the tool calls it requests.
    Assistant {
        /// What the model said.
        text: String,
        /// The tool calls it requests, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// A tool call's result.
    Tool {
        /// The call it answers.
        call_id: String,
        /// What the call produced.
        result: CallResult,
        /// The content blocks its output carries beside its JSON (images,
        /// audio, resources), for models that take them; none when a hook
        /// judged the result, since it saw the JSON alone.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        blocks: Vec<ContentBlock>,
    },
}

impl Message {
    /// Who sent this message.
    pub fn role(&self) -> Role {
        match self {
            Self::User { .. } => Role::User,
            Self::Assistant { .. } => Role::Assistant,
            Self::Tool { .. } => Role::Tool,
        }
    }
}
