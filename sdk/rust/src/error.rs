//! The SDK's tool error: what a tool returns when it cannot produce an output.

use crate::bindings::cordon::plugin::types::ToolError as WitToolError;
use crate::state::StateError;

/// Why a tool call did not produce an output, as the host and the model see it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments were malformed or violated the tool's contract.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A capability the call needed was not granted.
    #[error("denied: {0}")]
    Denied(String),
    /// The tool ran and could not do what was asked.
    #[error("failed: {0}")]
    Failed(String),
    /// The tool ran out of time.
    #[error("timed out: {0}")]
    Timeout(String),
}

impl From<StateError> for ToolError {
    /// Access the manifest does not grant is a denial; anything else is a failure.
    fn from(error: StateError) -> Self {
        match error {
            StateError::Undeclared(_) | StateError::ReadOnly(_) => Self::Denied(error.to_string()),
            StateError::Schema(_) | StateError::Conflict(_) => Self::Failed(error.to_string()),
        }
    }
}

impl From<ToolError> for WitToolError {
    fn from(error: ToolError) -> Self {
        match error {
            ToolError::InvalidInput(message) => Self::InvalidInput(message),
            ToolError::Denied(message) => Self::Denied(message),
            ToolError::Failed(message) => Self::Failed(message),
            ToolError::Timeout(message) => Self::Timeout(message),
        }
    }
}

impl From<WitToolError> for ToolError {
    fn from(error: WitToolError) -> Self {
        match error {
            WitToolError::InvalidInput(message) => Self::InvalidInput(message),
            WitToolError::Denied(message) => Self::Denied(message),
            WitToolError::Failed(message) => Self::Failed(message),
            WitToolError::Timeout(message) => Self::Timeout(message),
        }
    }
}
