//! [`ReadOnly`]: a file system that reads another and changes nothing, for
//! the scripts a skill ships: like every piece of a skill's code, they see
//! the workspace read-only.

use crate::error::{Error, Result};
use crate::fs::{FileSystem, Meta, Node, Prune};

/// `inner`, read-only.
pub struct ReadOnly<'a> {
    inner: &'a dyn FileSystem,
}

impl<'a> ReadOnly<'a> {
    /// `inner`, of which nothing can be changed through this.
    pub fn new(inner: &'a dyn FileSystem) -> Self {
        Self { inner }
    }

    fn refused(path: &str) -> Error {
        Error::Denied(format!(
            "{path}: a skill's script sees the workspace read-only"
        ))
    }
}

impl FileSystem for ReadOnly<'_> {
    fn meta(&self, path: &str) -> Result<Option<Meta>> {
        self.inner.meta(path)
    }

    fn read(&self, path: &str) -> Result<Vec<u8>> {
        self.inner.read(path)
    }

    fn list(&self, dir: &str) -> Result<Vec<(String, Meta)>> {
        self.inner.list(dir)
    }

    fn walk(&self, dir: &str, prune: Prune) -> Result<Vec<Node>> {
        self.inner.walk(dir, prune)
    }

    fn contents<'b>(&self, node: &'b Node, buf: &'b mut Vec<u8>) -> Result<&'b [u8]> {
        self.inner.contents(node, buf)
    }

    fn write(&self, path: &str, _data: &[u8]) -> Result<()> {
        Err(Self::refused(path))
    }

    fn create_dir(&self, path: &str) -> Result<()> {
        Err(Self::refused(path))
    }

    fn remove(&self, path: &str) -> Result<()> {
        Err(Self::refused(path))
    }

    fn rename(&self, from: &str, _to: &str) -> Result<()> {
        Err(Self::refused(from))
    }
}
