//! The file system the workspace operations and the shell work on: one trait
//! over whichever layers a backend stacks ([`crate::Overlay`] or
//! [`crate::Direct`]), and the metadata it reports.

use crate::error::Result;

/// What a path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link in a base folder, which walks do not follow.
    Symlink,
}

/// Metadata of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// What the path holds.
    pub kind: Kind,
    /// Size in bytes; 0 for directories.
    pub size: u64,
}

impl Meta {
    /// A directory's metadata.
    pub const DIR: Meta = Meta {
        kind: Kind::Dir,
        size: 0,
    };

    /// A file's metadata.
    pub fn file(size: u64) -> Self {
        Self {
            kind: Kind::File,
            size,
        }
    }

    /// Whether the path is a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }
}

/// One path found by a walk. Staged files carry their contents, so reading
/// them back costs no second call to the staging layer.
#[derive(Debug, Clone)]
pub struct Node {
    /// Workspace path.
    pub path: String,
    /// Its metadata.
    pub meta: Meta,
    /// The contents, when the node is a staged file.
    pub(crate) staged: Option<Vec<u8>>,
}

impl Node {
    /// A node of a base layer, whose contents stay there.
    pub fn base(path: String, meta: Meta) -> Self {
        Self {
            path,
            meta,
            staged: None,
        }
    }
}

/// Which directories a walk leaves out, with everything beneath them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prune {
    /// None: every path is visited.
    Nothing,
    /// `.git` directories, as searches skip them.
    GitDirs,
}

impl Prune {
    /// Whether a directory named `name` is left out.
    pub fn skips(self, name: &str) -> bool {
        self == Prune::GitDirs && name == ".git"
    }

    /// Whether `relative`, a path relative to the walked directory, lies in or
    /// is a directory left out.
    pub fn skips_path(self, relative: &str) -> bool {
        self != Prune::Nothing && relative.split('/').any(|name| self.skips(name))
    }
}

/// A workspace file system. Paths are normalized workspace paths
/// ([`crate::path`]); callers check what a path holds before changing it.
pub trait FileSystem {
    /// The metadata of `path`, or `None` if nothing is there.
    fn meta(&self, path: &str) -> Result<Option<Meta>>;
    /// The contents of the file at `path`.
    fn read(&self, path: &str) -> Result<Vec<u8>>;
    /// The entries of the directory `dir` as names and metadata, sorted by name.
    fn list(&self, dir: &str) -> Result<Vec<(String, Meta)>>;
    /// Every path beneath the directory `dir`, not including it, in walk order
    /// ([`crate::path::walk_order`]), leaving out what `prune` names. Symbolic
    /// links are reported, never followed.
    fn walk(&self, dir: &str, prune: Prune) -> Result<Vec<Node>>;
    /// The contents of a file `node` from [`FileSystem::walk`], read into `buf`
    /// unless the node already carries them.
    fn contents<'a>(&self, node: &'a Node, buf: &'a mut Vec<u8>) -> Result<&'a [u8]>;
    /// Create or replace the file at `path`, creating missing parent directories.
    fn write(&self, path: &str, data: &[u8]) -> Result<()>;
    /// Create the directory `path`, whose parent exists.
    fn create_dir(&self, path: &str) -> Result<()>;
    /// Remove `path` and, if it is a directory, everything beneath it.
    fn remove(&self, path: &str) -> Result<()>;
    /// Move `from` to `to`, whose parent exists and which is free or a file.
    fn rename(&self, from: &str, to: &str) -> Result<()>;
}
