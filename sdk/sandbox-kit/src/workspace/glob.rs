//! `glob`: the files whose workspace paths match a pattern.

use super::Entry;
use crate::error::Result;
use crate::fs::{FileSystem, Kind, Prune};
use crate::pattern::PathGlob;

/// Files (not directories) matching `pattern`, such as `src/**/*.rs`, sorted by
/// path. `.git` directories are not searched.
pub fn glob(fs: &dyn FileSystem, pattern: &str) -> Result<Vec<Entry>> {
    let glob = PathGlob::new(pattern)?;
    let mut found = Vec::new();
    match fs.meta(&glob.root)? {
        Some(meta) if meta.is_dir() && !glob.literal => {
            for node in fs.walk(&glob.root, Prune::GitDirs)? {
                if node.meta.kind == Kind::File && glob.is_match(&node.path) {
                    found.push(Entry::new(node.path, node.meta));
                }
            }
        }
        _ => {
            let path = crate::path::normalize(pattern)?;
            if let Some(meta) = fs.meta(&path)?
                && meta.kind == Kind::File
            {
                found.push(Entry::new(path, meta));
            }
        }
    }
    found.sort_unstable_by(|left, right| left.path.cmp(&right.path));
    Ok(found)
}
