//! Errors as a component and as the kernel see them: the one translation
//! between the WIT `tool-error` and the kernel's [`ToolError`], used by tool
//! calls, hooks and a tool's own calls alike.

use cordon_kernel::{ToolError, ToolErrorKind};

use crate::bindings::cordon::plugin::types as wit;

/// A component's tool error as the kernel sees it, its message cut to `max_len`.
pub(crate) fn from_wit_error(error: wit::ToolError, max_len: usize) -> ToolError {
    let (kind, message) = match error {
        wit::ToolError::InvalidInput(message) => (ToolErrorKind::InvalidInput, message),
        wit::ToolError::Denied(message) => (ToolErrorKind::Denied, message),
        wit::ToolError::Failed(message) => (ToolErrorKind::Failed, message),
        wit::ToolError::Timeout(message) => (ToolErrorKind::Timeout, message),
    };
    ToolError::new(kind, clip(message, max_len))
}

/// `text` cut to `max_len` bytes, marked when cut.
pub(crate) fn clip(mut text: String, max_len: usize) -> String {
    if text.len() > max_len {
        let mut end = max_len;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// A kernel error as a component sees it.
pub(crate) fn to_wit_error(error: ToolError) -> wit::ToolError {
    match error.kind {
        ToolErrorKind::InvalidInput => wit::ToolError::InvalidInput(error.message),
        ToolErrorKind::Denied => wit::ToolError::Denied(error.message),
        ToolErrorKind::Timeout => wit::ToolError::Timeout(error.message),
        ToolErrorKind::Failed => wit::ToolError::Failed(error.message),
        ToolErrorKind::Limit
        | ToolErrorKind::Crashed
        | ToolErrorKind::NotFound
        | ToolErrorKind::Cancelled => {
            wit::ToolError::Failed(format!("{}: {}", error.kind, error.message))
        }
    }
}
