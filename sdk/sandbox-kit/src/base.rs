//! The bottom layer of a workspace: the files a backend holds itself, and the
//! [`EmptyBase`] of a backend that holds none.

use crate::error::{Error, Result};
use crate::fs::{Meta, Node, Prune};

/// A layer of files beneath the staged changes: its read side serves every
/// backend, its write side only a backend that writes without staging.
pub trait Base {
    /// The metadata of `path`, or `None` if nothing is there.
    fn meta(&self, path: &str) -> Result<Option<Meta>>;
    /// Replace `buf`'s contents with the file at `path`.
    fn read_into(&self, path: &str, buf: &mut Vec<u8>) -> Result<()>;
    /// The entries of the directory `dir`, sorted by name.
    fn list(&self, dir: &str) -> Result<Vec<(String, Meta)>>;
    /// Append every path beneath the directory `dir` to `out`, in walk order,
    /// without following symbolic links and leaving out what `prune` names.
    fn walk(&self, dir: &str, prune: Prune, out: &mut Vec<Node>) -> Result<()>;
    /// Create or replace the file at `path`, whose parent exists.
    fn write(&self, path: &str, data: &[u8]) -> Result<()>;
    /// Create the directory `path`, whose parent exists.
    fn create_dir(&self, path: &str) -> Result<()>;
    /// Remove the file `path`.
    fn remove_file(&self, path: &str) -> Result<()>;
    /// Remove the directory `path` and everything beneath it.
    fn remove_dir_all(&self, path: &str) -> Result<()>;
    /// Move `from` to `to`.
    fn rename(&self, from: &str, to: &str) -> Result<()>;
}

/// A base with nothing but the root directory, which cannot be written.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyBase;

impl EmptyBase {
    /// The refusal of every write.
    fn read_only() -> Error {
        Error::Denied("the empty base layer cannot be written".into())
    }
}

impl Base for EmptyBase {
    fn meta(&self, path: &str) -> Result<Option<Meta>> {
        Ok(path.is_empty().then_some(Meta::DIR))
    }

    fn read_into(&self, path: &str, _buf: &mut Vec<u8>) -> Result<()> {
        if path.is_empty() {
            return Err(Error::Invalid(". is a directory".into()));
        }
        Err(Error::not_found(path))
    }

    fn list(&self, dir: &str) -> Result<Vec<(String, Meta)>> {
        if dir.is_empty() {
            Ok(Vec::new())
        } else {
            Err(Error::not_found(dir))
        }
    }

    fn walk(&self, dir: &str, _prune: Prune, _out: &mut Vec<Node>) -> Result<()> {
        if dir.is_empty() {
            Ok(())
        } else {
            Err(Error::not_found(dir))
        }
    }

    fn write(&self, _path: &str, _data: &[u8]) -> Result<()> {
        Err(Self::read_only())
    }

    fn create_dir(&self, _path: &str) -> Result<()> {
        Err(Self::read_only())
    }

    fn remove_file(&self, _path: &str) -> Result<()> {
        Err(Self::read_only())
    }

    fn remove_dir_all(&self, _path: &str) -> Result<()> {
        Err(Self::read_only())
    }

    fn rename(&self, _from: &str, _to: &str) -> Result<()> {
        Err(Self::read_only())
    }
}
