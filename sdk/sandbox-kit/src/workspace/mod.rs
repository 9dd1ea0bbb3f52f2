//! The operations of the WIT `workspace` interface, one function each, over
//! any [`FileSystem`](crate::FileSystem). Paths are workspace paths as the
//! caller gives them; each operation normalizes them first.

mod exec;
mod files;
mod glob;
mod grep;

pub use exec::{Command, CommandResult, exec};
pub(crate) use files::expect_dir;
pub use files::{edit, list_dir, mkdir, read, remove, rename, stat, write};
pub use glob::glob;
pub use grep::{GrepMatch, GrepQuery, GrepResult, grep};

use crate::fs::Meta;

/// Metadata of one file or directory, as the WIT `entry` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path relative to the workspace root.
    pub path: String,
    /// Whether the entry is a directory.
    pub is_dir: bool,
    /// Size in bytes; 0 for directories.
    pub size: u64,
}

impl Entry {
    /// The entry for `path` with metadata `meta`.
    pub fn new(path: String, meta: Meta) -> Self {
        Self {
            path,
            is_dir: meta.is_dir(),
            size: if meta.is_dir() { 0 } else { meta.size },
        }
    }
}
