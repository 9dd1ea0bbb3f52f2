//! Recursive directory walks in a stable order, skipping `.git` directories and
//! entries that cannot be read.

use std::path::Path;
use walkdir::{DirEntry, WalkDir};

/// Every entry below `dir`, not including `dir` itself, sorted by name.
pub(crate) fn below(dir: &Path) -> impl Iterator<Item = DirEntry> {
    WalkDir::new(dir)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| !(entry.file_type().is_dir() && entry.file_name() == ".git"))
        .filter_map(Result::ok)
}
