//! The closed set of ways a tool call ends without output, as the model and
//! the operator see it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The closed set of reasons a tool call produced no output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolErrorKind {
    /// The arguments were malformed or violated the tool's schema.
    InvalidInput,
    /// A capability the call needed was not granted.
    Denied,
    /// The tool ran and reported that it could not do the job.
    Failed,
    /// The call ran out of wall-clock time.
    Timeout,
    /// The call exceeded a resource limit: memory, fuel or output size.
    Limit,
    /// The component trapped or panicked.
    Crashed,
    /// No loaded tool has this name.
    NotFound,
    /// Whoever asked for the call cancelled it, and its instance was stopped.
    Cancelled,
}

impl ToolErrorKind {
    /// The stable kebab-case name printed by the CLI and stored in events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidInput => "invalid-input",
            Self::Denied => "denied",
            Self::Failed => "failed",
            Self::Timeout => "timeout",
            Self::Limit => "limit",
            Self::Crashed => "crashed",
            Self::NotFound => "not-found",
            Self::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a tool call failed, as the model and the operator see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ToolError {
    /// Which kind of failure.
    pub kind: ToolErrorKind,
    /// A human-readable explanation.
    pub message: String,
}

impl ToolError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}
