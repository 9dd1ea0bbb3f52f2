//! [`DirBase`]: a base layer that is a directory of the real (or WASI) file
//! system. Walks never follow symbolic links; opening a path through one is
//! left to the operating system, which in a component refuses any escape from
//! the preopened folder. Writing a file where a link is replaces the link,
//! never its target.

use crate::base::Base;
use crate::error::{Error, Result};
use crate::fs::{Kind, Meta, Node, Prune};
use crate::path;
use std::fs::{self, File, FileType};
use std::io::Read;
use std::path::PathBuf;

/// A base layer rooted at a directory, `/workspace` in a component.
#[derive(Debug, Clone)]
pub struct DirBase {
    root: PathBuf,
}

impl DirBase {
    /// A base whose workspace root is the directory `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The real path of the workspace path `path`. An absolute path (a
    /// skill's folder) is never a path of this base: it would leave the root.
    fn full(&self, path: &str) -> Result<PathBuf> {
        if path.starts_with('/') {
            return Err(Error::Denied(format!("{path} is not in the workspace")));
        }
        Ok(if path.is_empty() {
            self.root.clone()
        } else {
            self.root.join(path)
        })
    }

    /// The entries of the real directory of `dir`, sorted by name. Names that
    /// are not UTF-8 cannot be workspace paths and are left out, as is the
    /// root's [`path::RESERVED`] folder.
    fn entries(&self, dir: &str) -> Result<Vec<(String, FileType, fs::DirEntry)>> {
        let reader = fs::read_dir(self.full(dir)?).map_err(|e| Error::io("list", dir, &e))?;
        let mut entries = Vec::new();
        for entry in reader {
            let entry = entry.map_err(|e| Error::io("list", dir, &e))?;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            match entry.file_name().into_string() {
                Ok(name) if dir.is_empty() && name == path::RESERVED => {}
                Ok(name) => entries.push((name, kind, entry)),
                Err(_) => {}
            }
        }
        entries.sort_unstable_by(|left, right| left.0.cmp(&right.0));
        Ok(entries)
    }

    /// Walks `dir` into `out`; directories that cannot be read are skipped.
    fn walk_into(&self, dir: &str, prune: Prune, out: &mut Vec<Node>) -> Result<()> {
        for (name, kind, entry) in self.entries(dir)? {
            let child = path::join(dir, &name);
            if kind.is_dir() {
                if prune.skips(&name) {
                    continue;
                }
                out.push(Node::base(child.clone(), Meta::DIR));
                let _unreadable = self.walk_into(&child, prune, out);
            } else {
                let size = entry.metadata().map_or(0, |meta| meta.len());
                let kind = if kind.is_symlink() {
                    Kind::Symlink
                } else {
                    Kind::File
                };
                out.push(Node::base(child, Meta { kind, size }));
            }
        }
        Ok(())
    }
}

/// The metadata of a real file of type `kind` and length `len`.
fn meta_of(kind: FileType, len: u64) -> Meta {
    if kind.is_dir() {
        Meta::DIR
    } else if kind.is_symlink() {
        Meta {
            kind: Kind::Symlink,
            size: len,
        }
    } else {
        Meta::file(len)
    }
}

impl Base for DirBase {
    /// Follows a symbolic link the operating system lets it follow; one it
    /// refuses to follow (or that dangles) is reported as a link.
    fn meta(&self, path: &str) -> Result<Option<Meta>> {
        let full = self.full(path)?;
        match fs::metadata(&full).or_else(|_| fs::symlink_metadata(&full)) {
            Ok(meta) => Ok(Some(meta_of(meta.file_type(), meta.len()))),
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            Err(error) => Err(Error::io("stat", path, &error)),
        }
    }

    fn read_into(&self, path: &str, buf: &mut Vec<u8>) -> Result<()> {
        buf.clear();
        // Opening a FIFO or a device could block forever; only regular files
        // are read.
        let full = self.full(path)?;
        let meta = fs::metadata(&full).map_err(|e| Error::io("read", path, &e))?;
        if !meta.is_file() && !meta.is_dir() {
            return Err(Error::Invalid(format!("{path}: not a regular file")));
        }
        let mut file = File::open(&full).map_err(|e| Error::io("read", path, &e))?;
        file.read_to_end(buf)
            .map_err(|e| Error::io("read", path, &e))?;
        Ok(())
    }

    fn list(&self, dir: &str) -> Result<Vec<(String, Meta)>> {
        Ok(self
            .entries(dir)?
            .into_iter()
            .map(|(name, kind, entry)| {
                let len = if kind.is_dir() {
                    0
                } else {
                    entry.metadata().map_or(0, |meta| meta.len())
                };
                (name, meta_of(kind, len))
            })
            .collect())
    }

    fn walk(&self, dir: &str, prune: Prune, out: &mut Vec<Node>) -> Result<()> {
        self.walk_into(dir, prune, out)
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        let full = self.full(path)?;
        match fs::symlink_metadata(&full) {
            Ok(meta) if meta.file_type().is_symlink() => {
                fs::remove_file(&full).map_err(|e| Error::io("replace", path, &e))?;
            }
            // Opening a FIFO or a device for writing could block forever.
            Ok(meta) if !meta.is_file() && !meta.is_dir() => {
                return Err(Error::Invalid(format!("{path}: not a regular file")));
            }
            _ => {}
        }
        fs::write(full, data).map_err(|e| Error::io("write", path, &e))
    }

    fn create_dir(&self, path: &str) -> Result<()> {
        fs::create_dir(self.full(path)?).map_err(|e| Error::io("create", path, &e))
    }

    fn remove_file(&self, path: &str) -> Result<()> {
        fs::remove_file(self.full(path)?).map_err(|e| Error::io("remove", path, &e))
    }

    fn remove_dir_all(&self, path: &str) -> Result<()> {
        fs::remove_dir_all(self.full(path)?).map_err(|e| Error::io("remove", path, &e))
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        fs::rename(self.full(from)?, self.full(to)?).map_err(|e| Error::io("move", from, &e))
    }
}
