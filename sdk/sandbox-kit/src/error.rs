//! The one error type of every workspace operation, shaped like the WIT
//! `workspace-error` variant, and how I/O failures map onto it.

use std::io;

/// Why a workspace operation failed. Each variant carries a message naming
/// the path or value involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No such file or directory.
    #[error("{0}")]
    NotFound(String),
    /// The path leaves the workspace, or the backend may not make the access.
    #[error("{0}")]
    Denied(String),
    /// The operation does not fit its target, for example reading a directory.
    #[error("{0}")]
    Invalid(String),
    /// Anything else.
    #[error("{0}")]
    Failed(String),
}

/// The result of a workspace operation.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error for `error`, an I/O failure while doing `action` on `path`.
    pub fn io(action: &str, path: &str, error: &io::Error) -> Self {
        let shown = shown(path);
        match error.kind() {
            io::ErrorKind::NotFound => {
                Self::NotFound(format!("{shown}: no such file or directory"))
            }
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                Self::Denied(format!("cannot {action} {shown}: permission denied"))
            }
            io::ErrorKind::IsADirectory => Self::Invalid(format!("{shown} is a directory")),
            io::ErrorKind::NotADirectory => Self::Invalid(format!("{shown} is not a directory")),
            io::ErrorKind::DirectoryNotEmpty => {
                Self::Invalid(format!("directory {shown} is not empty"))
            }
            io::ErrorKind::AlreadyExists => Self::Invalid(format!("{shown} already exists")),
            _ => Self::Failed(format!("cannot {action} {shown}: {error}")),
        }
    }

    /// The error for a path that does not exist.
    pub fn not_found(path: &str) -> Self {
        Self::NotFound(format!("{}: no such file or directory", shown(path)))
    }

    /// The message, without saying which kind of error it is.
    pub fn message(&self) -> &str {
        match self {
            Self::NotFound(message)
            | Self::Denied(message)
            | Self::Invalid(message)
            | Self::Failed(message) => message,
        }
    }
}

/// A workspace path as messages show it: `.` for the root.
pub(crate) fn shown(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}
