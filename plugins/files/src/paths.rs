//! Resolving the model's relative paths under the granted workspace directory,
//! showing paths back relative to it, and describing I/O failures.
//!
//! The host sandbox confines the component to its grant anyway; rejecting
//! absolute paths and `..` here gives the model a clear error instead.

use cordon_sdk::ToolError;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Where the host mounts the workspace inside the component.
const ROOT: &str = "/workspace";

/// The guest path of `relative`, a path relative to the workspace root.
pub(crate) fn resolve(relative: &str) -> Result<PathBuf, ToolError> {
    let mut full = PathBuf::from(ROOT);
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => full.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(ToolError::InvalidInput(format!(
                    "path {relative:?} contains `..`; paths must stay inside the workspace"
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(ToolError::InvalidInput(format!(
                    "path {relative:?} is absolute; give a path relative to the workspace root"
                )));
            }
        }
    }
    Ok(full)
}

/// `full` as the model sees it: relative to the workspace root, `.` for the root.
pub(crate) fn shown(full: &Path) -> String {
    match full.strip_prefix(ROOT) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.display().to_string(),
        Err(_) => full.display().to_string(),
    }
}

/// A tool error for an I/O failure on the path shown as `shown`.
pub(crate) fn io_error(shown: &str, error: &io::Error) -> ToolError {
    match error.kind() {
        io::ErrorKind::NotFound => ToolError::Failed(format!("{shown} does not exist")),
        io::ErrorKind::PermissionDenied => {
            ToolError::Denied(format!("{shown} is outside what this bundle may read"))
        }
        _ => ToolError::Failed(format!("cannot access {shown}: {error}")),
    }
}
