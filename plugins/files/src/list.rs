//! `files.list`: the entries of a directory, or the paths below it matching a glob.

use crate::pattern::PathPattern;
use crate::{paths, walk};
use cordon_sdk::{Annotations, Tool, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fs::{FileType, Metadata};
use std::path::Path;

/// Entries returned when `max_entries` is omitted.
const DEFAULT_MAX_ENTRIES: usize = 1000;
/// The largest `max_entries` honoured.
const MAX_ENTRIES: usize = 10_000;

/// Arguments of `files.list`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArgs {
    /// Directory relative to the workspace root. Defaults to the root, `.`.
    path: Option<String>,
    /// Glob selecting paths at any depth below `path` instead of its direct entries:
    /// `*.rs` matches file names, `src/**/*.rs` matches paths relative to `path`.
    pattern: Option<String>,
    /// Most entries to return. Defaults to 1000; at most 10000.
    max_entries: Option<usize>,
}

/// What `files.list` returns.
#[derive(Serialize)]
pub(crate) struct ListOutput {
    /// The entries, sorted by path.
    entries: Vec<Entry>,
    /// Whether more entries matched than were returned.
    truncated: bool,
}

/// One directory entry.
#[derive(Serialize)]
struct Entry {
    /// Path relative to the workspace root.
    path: String,
    /// `file`, `dir`, `symlink` or `other`.
    kind: &'static str,
    /// Size in bytes; 0 for anything but files.
    size: u64,
}

/// The `files.list` tool.
pub(crate) struct List;

impl Tool for List {
    const NAME: &'static str = "files.list";
    const DESCRIPTION: &'static str = "List files in the workspace with their kinds and sizes. \
        Without `pattern`, lists the direct entries of `path`; with a glob `pattern`, lists every \
        path below `path` that matches it, at any depth (`.git` directories are skipped).";
    type Args = ListArgs;
    type Output = ListOutput;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(args: ListArgs) -> Result<ListOutput, ToolError> {
        let dir = paths::resolve(args.path.as_deref().unwrap_or("."))?;
        let shown = paths::shown(&dir);
        let metadata = std::fs::metadata(&dir).map_err(|e| paths::io_error(&shown, &e))?;
        if !metadata.is_dir() {
            return Err(ToolError::InvalidInput(format!(
                "{shown} is not a directory; use files.read to read a file"
            )));
        }
        let max = args
            .max_entries
            .unwrap_or(DEFAULT_MAX_ENTRIES)
            .min(MAX_ENTRIES);
        let mut entries = match args.pattern {
            Some(pattern) => matching(&dir, &PathPattern::new(&pattern)?, max),
            None => children(&dir, &shown)?,
        };
        let truncated = entries.len() > max;
        entries.truncate(max);
        Ok(ListOutput { entries, truncated })
    }
}

/// The direct entries of `dir`, sorted.
fn children(dir: &Path, shown: &str) -> Result<Vec<Entry>, ToolError> {
    let mut entries = Vec::new();
    for item in std::fs::read_dir(dir).map_err(|e| paths::io_error(shown, &e))? {
        let item = item.map_err(|e| paths::io_error(shown, &e))?;
        let path = item.path();
        let metadata = item
            .metadata()
            .map_err(|e| paths::io_error(&paths::shown(&path), &e))?;
        entries.push(entry(&path, &metadata));
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// Up to `max + 1` paths below `dir` matching `pattern`, in walk order.
fn matching(dir: &Path, pattern: &PathPattern, max: usize) -> Vec<Entry> {
    walk::below(dir)
        .filter(|item| {
            item.path()
                .strip_prefix(dir)
                .is_ok_and(|relative| pattern.matches(relative))
        })
        .filter_map(|item| Some(entry(item.path(), &item.metadata().ok()?)))
        .take(max + 1)
        .collect()
}

fn entry(path: &Path, metadata: &Metadata) -> Entry {
    let file_type = metadata.file_type();
    Entry {
        path: paths::shown(path),
        kind: kind(file_type),
        size: if file_type.is_file() {
            metadata.len()
        } else {
            0
        },
    }
}

fn kind(file_type: FileType) -> &'static str {
    if file_type.is_file() {
        "file"
    } else if file_type.is_dir() {
        "dir"
    } else if file_type.is_symlink() {
        "symlink"
    } else {
        "other"
    }
}
