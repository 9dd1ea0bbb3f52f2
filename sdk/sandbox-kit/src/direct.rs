//! [`Direct`]: a file system that is its base layer alone, for a backend whose
//! writes go straight to its folder.

use crate::base::Base;
use crate::error::{Error, Result};
use crate::fs::{FileSystem, Meta, Node, Prune};
use crate::path;

/// A file system reading and writing its base directly.
#[derive(Debug)]
pub struct Direct<B> {
    base: B,
}

impl<B: Base> Direct<B> {
    /// `base` as a file system.
    pub fn new(base: B) -> Self {
        Self { base }
    }
}

impl<B: Base> FileSystem for Direct<B> {
    fn meta(&self, path: &str) -> Result<Option<Meta>> {
        self.base.meta(path)
    }

    fn read(&self, path: &str) -> Result<Vec<u8>> {
        let mut data = Vec::new();
        self.base.read_into(path, &mut data)?;
        Ok(data)
    }

    fn list(&self, dir: &str) -> Result<Vec<(String, Meta)>> {
        self.base.list(dir)
    }

    fn walk(&self, dir: &str, prune: Prune) -> Result<Vec<Node>> {
        let mut nodes = Vec::new();
        self.base.walk(dir, prune, &mut nodes)?;
        Ok(nodes)
    }

    fn contents<'a>(&self, node: &'a Node, buf: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.base.read_into(&node.path, buf)?;
        Ok(buf)
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        for ancestor in path::ancestors(path) {
            match self.base.meta(ancestor)? {
                None => self.base.create_dir(ancestor)?,
                Some(meta) if meta.is_dir() => {}
                Some(_) => {
                    return Err(Error::Invalid(format!("{ancestor} is not a directory")));
                }
            }
        }
        self.base.write(path, data)
    }

    fn create_dir(&self, path: &str) -> Result<()> {
        self.base.create_dir(path)
    }

    fn remove(&self, path: &str) -> Result<()> {
        match self.base.meta(path)? {
            Some(meta) if meta.is_dir() => self.base.remove_dir_all(path),
            _ => self.base.remove_file(path),
        }
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.base.rename(from, to)
    }
}
