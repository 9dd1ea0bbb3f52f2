//! The model port: what the loop sends a model provider and what it gets back.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{Message, ToolCall};
use crate::tool::ToolSpec;

/// Everything a model sees for one step.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The agent's instructions.
    pub instructions: &'a str,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The tools it may call; empty when the step must end with an answer.
    pub tools: &'a [ToolSpec],
    /// The run's committed state.
    pub state: &'a BTreeMap<String, Value>,
}

/// A piece of a response, delivered while the model is still producing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelDelta {
    /// More text.
    Text(String),
    /// The response broke off and is being requested again from its start:
    /// the text delivered so far for this step does not count.
    Restart,
    /// The request failed in a way worth another try, which comes after a
    /// wait.
    Retrying(Retry),
}

/// A request about to be tried again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retry {
    /// What went wrong, such as `HTTP 429: rate limited`.
    pub reason: String,
    /// The attempt about to be made, from 2.
    pub attempt: u32,
    /// How many attempts there are at most.
    pub attempts: u32,
    /// How long the wait before it is, in milliseconds.
    pub after_ms: u64,
}

/// Tokens a step consumed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It ran out of output tokens.
    MaxTokens,
}

/// A complete model turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// The assembled text.
    pub text: String,
    /// The tool calls it requests, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used.
    pub usage: Usage,
    /// Why it stopped.
    pub stop: StopReason,
}

/// Why a model step failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// A scripted model has no turn left.
    #[error("the model script has no turn left: {0}")]
    Exhausted(String),
    /// The provider could not be reached, or failed in a way retries did not cure.
    #[error("model request failed: {0}")]
    Request(String),
    /// The provider answered with an error status.
    #[error("the model provider answered HTTP {status}: {message}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The provider's explanation, or the start of the response body.
        message: String,
    },

    /// The provider's answer could not be understood.
    #[error("malformed model response: {0}")]
    Malformed(String),
}

/// The future a model step returns.
pub type ModelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ModelResponse, ModelError>> + Send + 'a>>;

/// The port through which the loop calls a model.
pub trait ModelProvider: Send + Sync {
    /// Produce the next turn for `request`, reporting text to `deltas` as it
    /// arrives; the returned response carries the assembled whole.
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelDelta) + Send + Sync),
    ) -> ModelFuture<'a>;

    /// The model's name as a trace shows it: the provider's model id.
    fn name(&self) -> &str {
        "unnamed"
    }
}

/// The port through which the loop finds the model a sub-agent names
/// (`model = "..."` in its file or its `[agents.NAME]` table); a sub-agent
/// naming none runs on its parent's model.
pub trait ModelResolver: Send + Sync {
    /// The provider `spec` names, sampled by `settings`, with relative paths
    /// (a scripted model's file) resolved against `dir`.
    fn resolve(
        &self,
        spec: &str,
        settings: &crate::agent::ModelSettings,
        dir: &std::path::Path,
    ) -> Result<std::sync::Arc<dyn ModelProvider>, String>;
}
