//! [`Overlay`]: staged changes over a base layer. A staged entry overrides the
//! base at exactly its path; removals are explicit whiteouts, so removing or
//! moving a directory stages an entry for every path beneath it.

use crate::base::Base;
use crate::error::{Error, Result};
use crate::fs::{FileSystem, Kind, Meta, Node, Prune};
use crate::path;
use crate::staging::{Staged, Staging};
use std::collections::{BTreeMap, HashMap};

/// A file system whose writes are staged over a read-only base.
#[derive(Debug)]
pub struct Overlay<B, S> {
    base: B,
    staging: S,
}

impl<B: Base, S: Staging> Overlay<B, S> {
    /// `staging` over `base`.
    pub fn new(base: B, staging: S) -> Self {
        Self { base, staging }
    }

    /// The staging layer, for inspecting what was staged.
    pub fn staging(&self) -> &S {
        &self.staging
    }

    /// The staged entries at or beneath `dir`, path-checked in case the
    /// staging layer matched by string prefix.
    fn staged_under(&self, dir: &str) -> Vec<(String, Staged)> {
        let mut entries = self.staging.under(dir);
        entries.retain(|(staged, _)| path::strip_dir(staged, dir).is_some());
        entries
    }

    /// Fails unless `dir` is a directory.
    fn expect_dir(&self, dir: &str) -> Result<()> {
        match self.meta(dir)? {
            Some(meta) if meta.is_dir() => Ok(()),
            Some(_) => Err(Error::Invalid(format!(
                "{} is not a directory",
                crate::error::shown(dir)
            ))),
            None => Err(Error::not_found(dir)),
        }
    }

    /// Whether the base holds a directory at `dir`.
    fn base_has_dir(&self, dir: &str) -> Result<bool> {
        Ok(self.base.meta(dir)?.is_some_and(|meta| meta.is_dir()))
    }
}

impl<B: Base, S: Staging> FileSystem for Overlay<B, S> {
    fn meta(&self, path: &str) -> Result<Option<Meta>> {
        match self.staging.get(path)? {
            Some(Staged::File(data)) => Ok(Some(Meta::file(data.len() as u64))),
            Some(Staged::Directory) => Ok(Some(Meta::DIR)),
            Some(Staged::Removed) => Ok(None),
            None => self.base.meta(path),
        }
    }

    fn read(&self, path: &str) -> Result<Vec<u8>> {
        match self.staging.get(path)? {
            Some(Staged::File(data)) => Ok(data),
            Some(Staged::Directory) => Err(Error::Invalid(format!(
                "{} is a directory",
                crate::error::shown(path)
            ))),
            Some(Staged::Removed) => Err(Error::not_found(path)),
            None => {
                let mut data = Vec::new();
                self.base.read_into(path, &mut data)?;
                Ok(data)
            }
        }
    }

    fn list(&self, dir: &str) -> Result<Vec<(String, Meta)>> {
        if self
            .meta(dir)?
            .is_some_and(|meta| meta.kind == Kind::Symlink)
        {
            return self.base.list(dir);
        }
        self.expect_dir(dir)?;
        let mut entries: BTreeMap<String, Meta> = if self.base_has_dir(dir)? {
            self.base.list(dir)?.into_iter().collect()
        } else {
            BTreeMap::new()
        };
        for (staged_path, entry) in self.staged_under(dir) {
            let Some(rest) = path::strip_dir(&staged_path, dir) else {
                continue;
            };
            if rest.is_empty() || rest.contains('/') {
                continue;
            }
            match entry {
                Staged::File(data) => {
                    entries.insert(rest.to_owned(), Meta::file(data.len() as u64));
                }
                Staged::Directory => {
                    entries.insert(rest.to_owned(), Meta::DIR);
                }
                Staged::Removed => {
                    entries.remove(rest);
                }
            }
        }
        Ok(entries.into_iter().collect())
    }

    fn walk(&self, dir: &str, prune: Prune) -> Result<Vec<Node>> {
        self.expect_dir(dir)?;
        let mut nodes = Vec::new();
        if self.base_has_dir(dir)? {
            self.base.walk(dir, prune, &mut nodes)?;
        }
        let staged: Vec<_> = self
            .staged_under(dir)
            .into_iter()
            .filter(|(staged_path, _)| {
                path::strip_dir(staged_path, dir)
                    .is_some_and(|rest| !rest.is_empty() && !prune.skips_path(rest))
            })
            .collect();
        if staged.is_empty() {
            return Ok(nodes);
        }
        let mut merged: HashMap<String, Node> = nodes
            .into_iter()
            .map(|node| (node.path.clone(), node))
            .collect();
        for (staged_path, entry) in staged {
            match entry {
                Staged::File(data) => {
                    let node = Node {
                        path: staged_path.clone(),
                        meta: Meta::file(data.len() as u64),
                        staged: Some(data),
                    };
                    merged.insert(staged_path, node);
                }
                Staged::Directory => {
                    merged.insert(staged_path.clone(), Node::base(staged_path, Meta::DIR));
                }
                Staged::Removed => {
                    merged.remove(&staged_path);
                }
            }
        }
        let mut nodes: Vec<Node> = merged.into_values().collect();
        nodes.sort_unstable_by(|left, right| path::walk_order(&left.path, &right.path));
        Ok(nodes)
    }

    fn contents<'a>(&self, node: &'a Node, buf: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        match &node.staged {
            Some(data) => Ok(data),
            None => {
                self.base.read_into(&node.path, buf)?;
                Ok(buf)
            }
        }
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        if path.is_empty() {
            return Err(Error::Invalid(". is a directory".into()));
        }
        for ancestor in path::ancestors(path) {
            match self.meta(ancestor)? {
                None => self.staging.put(ancestor, Staged::Directory)?,
                Some(meta) if meta.is_dir() => {}
                Some(_) => {
                    return Err(Error::Invalid(format!("{ancestor} is not a directory")));
                }
            }
        }
        if self.meta(path)?.is_some_and(|meta| meta.is_dir()) {
            return Err(Error::Invalid(format!("{path} is a directory")));
        }
        self.staging.put(path, Staged::File(data.to_vec()))
    }

    fn create_dir(&self, path: &str) -> Result<()> {
        self.staging.put(path, Staged::Directory)
    }

    fn remove(&self, path: &str) -> Result<()> {
        if self.meta(path)?.is_some_and(|meta| meta.is_dir()) {
            for node in self.walk(path, Prune::Nothing)? {
                self.staging.put(&node.path, Staged::Removed)?;
            }
        }
        self.staging.put(path, Staged::Removed)
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let meta = self.meta(from)?.ok_or_else(|| Error::not_found(from))?;
        if !meta.is_dir() {
            let data = self.read(from)?;
            self.staging.put(to, Staged::File(data))?;
            return self.staging.put(from, Staged::Removed);
        }
        let nodes = self.walk(from, Prune::Nothing)?;
        self.staging.put(to, Staged::Directory)?;
        let mut buf = Vec::new();
        for node in &nodes {
            let rest = path::strip_dir(&node.path, from).unwrap_or_default();
            let moved = path::join(to, rest);
            match node.meta.kind {
                Kind::Dir => self.staging.put(&moved, Staged::Directory)?,
                Kind::File | Kind::Symlink => {
                    if let Ok(data) = self.contents(node, &mut buf) {
                        self.staging.put(&moved, Staged::File(data.to_vec()))?;
                    }
                }
            }
        }
        for node in &nodes {
            self.staging.put(&node.path, Staged::Removed)?;
        }
        self.staging.put(from, Staged::Removed)
    }
}
