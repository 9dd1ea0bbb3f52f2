//! The staging layer, mirroring the WIT `staging` import: changes the host
//! keeps on the backend's behalf, and [`MemoryStaging`], an in-process stand-in
//! for native tests.

use crate::error::Result;
use crate::path;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// A staged path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Staged {
    /// A file with these contents.
    File(Vec<u8>),
    /// A directory.
    Directory,
    /// Nothing: the path was removed.
    Removed,
}

/// Where staged changes are kept. Every call may cross the component
/// boundary, so whole-tree operations fetch once with [`Staging::under`].
/// The keeper may refuse a path (the host's file rules): reading or staging
/// it is then [`crate::Error::Denied`], and listings leave it out.
pub trait Staging {
    /// The staged entry at `path`, if any.
    fn get(&self, path: &str) -> Result<Option<Staged>>;
    /// Stage `entry` at `path`.
    fn put(&self, path: &str, entry: Staged) -> Result<()>;
    /// Every staged path equal to `prefix` or beneath it (`""` for all), in
    /// path order.
    fn under(&self, prefix: &str) -> Vec<(String, Staged)>;
}

/// Staged changes in a map in this process.
#[derive(Debug, Default)]
pub struct MemoryStaging {
    entries: RefCell<BTreeMap<String, Staged>>,
}

impl MemoryStaging {
    /// An empty staging layer.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Staging for MemoryStaging {
    fn get(&self, path: &str) -> Result<Option<Staged>> {
        Ok(self.entries.borrow().get(path).cloned())
    }

    fn put(&self, path: &str, entry: Staged) -> Result<()> {
        self.entries.borrow_mut().insert(path.to_owned(), entry);
        Ok(())
    }

    fn under(&self, prefix: &str) -> Vec<(String, Staged)> {
        self.entries
            .borrow()
            .range(prefix.to_owned()..)
            .take_while(|(path, _)| path.starts_with(prefix))
            .filter(|(path, _)| path::strip_dir(path, prefix).is_some())
            .map(|(path, entry)| (path.clone(), entry.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_keeps_to_the_prefix_directory() {
        let staging = MemoryStaging::new();
        for path in ["a", "a.txt", "a/b", "a/b/c", "b"] {
            staging.put(path, Staged::Directory).unwrap();
        }
        let paths = |prefix| {
            staging
                .under(prefix)
                .into_iter()
                .map(|(path, _)| path)
                .collect::<Vec<_>>()
        };
        assert_eq!(paths("a"), ["a", "a/b", "a/b/c"]);
        assert_eq!(paths("").len(), 5);
        assert_eq!(paths("a/b/c"), ["a/b/c"]);
        assert!(paths("c").is_empty());
    }
}
