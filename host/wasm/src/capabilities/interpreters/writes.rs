//! What an interpreter's run may write, judged as every write in the
//! sandbox is: under `/workspace`, by the run's file guard on where the file
//! would land (the file rules, the run store's folder) and never through a
//! symbolic link of the folder; under `/tmp`, freely within its bound;
//! anywhere else, not at all. A refusal is a [`WriteError::Denied`], which
//! the file system audits; what the run writes goes to its
//! [`super::layer`].

use std::sync::{Arc, Mutex};

use cordon_kernel::FileAccess;
use cordon_paths::{RESERVED, is_malformed};

use super::layer::{self, Change, Full, Tree, Written};

/// Longest name of a file or directory a program may write, in bytes.
const NAME_MAX: usize = 255;
/// Longest path a program may write, in bytes.
const PATH_MAX: usize = 4096;
use super::view::{Contents, Found, Node, Place, View};

/// Why a write did not happen.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// A rule refuses it: audited, with why.
    Denied(String),
    /// Nothing is at the path, or at its directory.
    Missing,
    /// Something is at the path already.
    Exists,
    /// A file is where a directory should be.
    NotADirectory,
    /// A directory is where a file should be.
    IsADirectory,
    /// A directory to remove is not empty.
    NotEmpty,
    /// The tree's bound is reached.
    NoSpace,
    /// A directory cannot be renamed: moving one copies it instead.
    DirectoryRename,
    /// A name or path is longer than a program may write.
    NameTooLong,
    /// An existing file could not be read to be changed: an I/O error.
    Unreadable,
}

impl From<Full> for WriteError {
    fn from(_: Full) -> Self {
        WriteError::NoSpace
    }
}

/// Where a write lands.
struct Target {
    tree: Tree,
    path: String,
}

impl Target {
    fn place(&self) -> Place {
        match self.tree {
            Tree::Workspace => Place::Workspace(self.path.clone()),
            Tree::Tmp => Place::Tmp(self.path.clone()),
        }
    }
}

/// How a file is opened for writing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Open {
    /// Create it if it is missing.
    pub(crate) create: bool,
    /// Fail if it exists.
    pub(crate) exclusive: bool,
    /// Empty it.
    pub(crate) truncate: bool,
}

impl View {
    /// Where the path `parts` (from the root) may be written, or why not.
    fn target(&self, parts: &[String]) -> Result<Target, WriteError> {
        let shown = format!("/{}", parts.join("/"));
        if parts.iter().any(|part| part.len() > NAME_MAX) || shown.len() > PATH_MAX {
            return Err(WriteError::NameTooLong);
        }
        if is_malformed(&shown) {
            return Err(WriteError::Denied(format!(
                "{shown}: a path a program writes holds no control character or backslash"
            )));
        }
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        match parts.as_slice() {
            ["workspace", rest @ ..] if self.workspace.is_some() => {
                let path = rest.join("/");
                if path.is_empty() {
                    return Err(WriteError::Denied(format!(
                        "{shown}: the workspace itself cannot be replaced"
                    )));
                }
                if !self.workspace.as_ref().is_some_and(|view| view.writable) {
                    return Err(WriteError::Denied(format!(
                        "{shown}: this operation sees the workspace read-only"
                    )));
                }
                if path == RESERVED || path.starts_with(&format!("{RESERVED}/")) {
                    return Err(WriteError::Denied(format!(
                        "{shown}: `{RESERVED}` holds the run store, which nothing in the sandbox may change"
                    )));
                }
                let folder = self
                    .workspace
                    .as_ref()
                    .and_then(|view| view.folder.as_ref());
                let landing = match folder {
                    Some((_, real)) => real.join(&path),
                    None => self.guard.root().join(&path),
                };
                self.guard
                    .check(&landing, FileAccess::Write)
                    .map_err(|refused| WriteError::Denied(refused.0))?;
                if let Some((dir, _)) = folder {
                    for (slash, _) in path.match_indices('/') {
                        let ancestor = &path[..slash];
                        let replaced = layer::lock(&self.layer)
                            .get(Tree::Workspace, ancestor)
                            .is_some()
                            || self
                                .workspace
                                .as_ref()
                                .is_some_and(|view| view.staged.contains_key(ancestor));
                        let is_link = dir
                            .symlink_metadata(ancestor)
                            .is_ok_and(|meta| meta.file_type().is_symlink());
                        if is_link && !replaced {
                            return Err(WriteError::Denied(format!(
                                "{shown}: `{ancestor}` is a symbolic link, and changes never go through one"
                            )));
                        }
                    }
                }
                Ok(Target {
                    tree: Tree::Workspace,
                    path,
                })
            }
            ["tmp", rest @ ..] if !rest.is_empty() => Ok(Target {
                tree: Tree::Tmp,
                path: rest.join("/"),
            }),
            _ => Err(WriteError::Denied(format!(
                "{shown}: a program writes only under /workspace and /tmp"
            ))),
        }
    }

    /// Fails unless the directory holding `parts` exists.
    fn parent_is_dir(&self, parts: &[String]) -> Result<(), WriteError> {
        let parent = &parts[..parts.len().saturating_sub(1)];
        match self.find(parent) {
            Found::Node(Node::Dir(_)) => Ok(()),
            Found::Node(Node::File(..)) | Found::NotADirectory => Err(WriteError::NotADirectory),
            Found::Missing => Err(WriteError::Missing),
            Found::Refused(reason) => Err(WriteError::Denied(reason)),
        }
    }

    /// Opens the file at `parts` for writing as `open` says: the file and
    /// where it is.
    pub(crate) fn open_written(
        &self,
        parts: &[String],
        open: Open,
    ) -> Result<(Place, Written), WriteError> {
        let target = self.target(parts)?;
        self.parent_is_dir(parts)?;
        let file = match self.find(parts) {
            Found::Node(Node::Dir(_)) => return Err(WriteError::IsADirectory),
            Found::NotADirectory => return Err(WriteError::NotADirectory),
            Found::Refused(reason) => return Err(WriteError::Denied(reason)),
            Found::Missing if !open.create => return Err(WriteError::Missing),
            Found::Node(Node::File(..)) if open.exclusive => return Err(WriteError::Exists),
            Found::Node(Node::File(_, Contents::Written(file))) => {
                if open.truncate {
                    layer::data(&file).set_len(0)?;
                }
                return Ok((target.place(), file));
            }
            Found::Node(Node::File(_, contents)) if !open.truncate => {
                self.copy_in(target.tree, &contents)?
            }
            Found::Node(Node::File(..)) | Found::Missing => {
                Arc::new(Mutex::new(layer::lock(&self.layer).new_file(target.tree)))
            }
        };
        layer::lock(&self.layer).set(target.tree, &target.path, Change::File(Arc::clone(&file)))?;
        Ok((target.place(), file))
    }

    /// A written copy of `contents`, charged to `tree` before a byte of it is
    /// read, so a huge file costs the host nothing.
    fn copy_in(&self, tree: Tree, contents: &Contents) -> Result<Written, WriteError> {
        let size = usize::try_from(contents.size()).unwrap_or(usize::MAX);
        let filled = layer::lock(&self.layer).filled_file(tree, size, || contents.read(0, size))?;
        let file = filled.map_err(|_: std::io::Error| WriteError::Unreadable)?;
        Ok(Arc::new(Mutex::new(file)))
    }

    /// Creates the directory at `parts`.
    pub(crate) fn make_dir(&self, parts: &[String]) -> Result<(), WriteError> {
        let target = self.target(parts)?;
        self.parent_is_dir(parts)?;
        match self.find(parts) {
            Found::Missing => {
                Ok(layer::lock(&self.layer).set(target.tree, &target.path, Change::Dir)?)
            }
            Found::Node(_) => Err(WriteError::Exists),
            Found::NotADirectory => Err(WriteError::NotADirectory),
            Found::Refused(reason) => Err(WriteError::Denied(reason)),
        }
    }

    /// Removes the file (or, when `dir`, the empty directory) at `parts`.
    pub(crate) fn remove(&self, parts: &[String], dir: bool) -> Result<(), WriteError> {
        let target = self.target(parts)?;
        match (self.find(parts), dir) {
            (Found::Node(Node::File(..)), false) => {}
            (Found::Node(Node::Dir(place)), true) => {
                if !self.list(&place).is_empty() || self.holds_hidden(&target) {
                    return Err(WriteError::NotEmpty);
                }
            }
            (Found::Node(Node::File(..)), true) => return Err(WriteError::NotADirectory),
            (Found::Node(Node::Dir(_)), false) => return Err(WriteError::IsADirectory),
            (Found::Missing, _) => return Err(WriteError::Missing),
            (Found::NotADirectory, _) => return Err(WriteError::NotADirectory),
            (Found::Refused(reason), _) => return Err(WriteError::Denied(reason)),
        }
        Ok(layer::lock(&self.layer).set(target.tree, &target.path, Change::Gone)?)
    }

    /// Whether the workspace directory `target` holds, in the real folder,
    /// an entry the view does not show (one the file guard hides) and that
    /// nothing removed: removing the directory would remove it too.
    fn holds_hidden(&self, target: &Target) -> bool {
        let Some((dir, _)) = self
            .workspace
            .as_ref()
            .and_then(|view| view.folder.as_ref())
        else {
            return false;
        };
        if target.tree != Tree::Workspace {
            return false;
        }
        let Ok(entries) = dir.read_dir(&target.path) else {
            return false;
        };
        let layer = layer::lock(&self.layer);
        let staged = self.workspace.as_ref().map(|view| &view.staged);
        entries.filter_map(Result::ok).any(|entry| {
            let Ok(name) = entry.file_name().into_string() else {
                return true;
            };
            let path = format!("{}/{name}", target.path);
            let removed = matches!(layer.get(Tree::Workspace, &path), Some(Change::Gone))
                || staged.is_some_and(|staged| {
                    matches!(staged.get(&path), Some(cordon_kernel::FileState::Absent))
                });
            !removed
        })
    }

    /// Moves the file at `from` to `to`, replacing a file there.
    pub(crate) fn rename(&self, from: &[String], to: &[String]) -> Result<(), WriteError> {
        let source = self.target(from)?;
        let destination = self.target(to)?;
        self.parent_is_dir(to)?;
        if matches!(self.find(to), Found::Node(Node::Dir(_))) {
            return Err(WriteError::IsADirectory);
        }
        let file = match self.find(from) {
            Found::Node(Node::File(_, Contents::Written(file))) => file,
            Found::Node(Node::File(_, contents)) => self.copy_in(destination.tree, &contents)?,
            Found::Node(Node::Dir(_)) => return Err(WriteError::DirectoryRename),
            Found::Missing => return Err(WriteError::Missing),
            Found::NotADirectory => return Err(WriteError::NotADirectory),
            Found::Refused(reason) => return Err(WriteError::Denied(reason)),
        };
        if source.tree == destination.tree && source.path == destination.path {
            return Ok(());
        }
        let mut layer = layer::lock(&self.layer);
        layer.move_file(&file, destination.tree)?;
        layer.set(destination.tree, &destination.path, Change::File(file))?;
        layer.set(source.tree, &source.path, Change::Gone)?;
        Ok(())
    }

    /// Whether the path at `parts` may be written: for `touch`, which
    /// changes nothing here.
    pub(crate) fn may_write(&self, parts: &[String]) -> Result<(), WriteError> {
        self.target(parts).map(|_| ())
    }
}
