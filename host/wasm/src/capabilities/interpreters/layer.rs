//! What an interpreter's run writes: its own layer over the calling
//! operation's workspace, and its private `/tmp`. Both live in memory, each
//! bounded. When the run ends, the workspace layer goes back to the
//! operation ([`Layer::into_changes`]) and reaches the workspace the way the
//! operation's own writes do; `/tmp` vanishes with the run.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use cordon_kernel::FileState;

/// Most bytes the files a run writes in the workspace may hold.
pub(crate) const WORKSPACE_LIMIT: usize = 256 * 1024 * 1024;
/// Most bytes the files of a run's `/tmp` may hold.
pub(crate) const TMP_LIMIT: usize = 64 * 1024 * 1024;
/// Most paths a run may change in the workspace or create in `/tmp`.
pub(crate) const PATH_LIMIT: usize = 100_000;

/// A file the run wrote: its bytes, shared by every descriptor open on it.
pub(crate) type Written = Arc<Mutex<Vec<u8>>>;

/// The bytes of a written file, even if a writer panicked holding them.
pub(crate) fn bytes(file: &Written) -> MutexGuard<'_, Vec<u8>> {
    file.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the run made of a path.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// A directory.
    Dir,
    /// Removed.
    Gone,
    /// A file with these bytes.
    File(Written),
}

/// Which of the two trees a path is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tree {
    /// The calling operation's workspace.
    Workspace,
    /// The run's private `/tmp`.
    Tmp,
}

impl Tree {
    fn limit(self) -> usize {
        match self {
            Tree::Workspace => WORKSPACE_LIMIT,
            Tree::Tmp => TMP_LIMIT,
        }
    }

    /// What a program is told when a write finds the tree full.
    pub(crate) fn full_message(self) -> String {
        let (what, limit) = match self {
            Tree::Workspace => (
                "the files a command writes in the workspace hold",
                WORKSPACE_LIMIT,
            ),
            Tree::Tmp => ("/tmp holds", TMP_LIMIT),
        };
        format!("no space left: {what} at most {} MiB", limit >> 20)
    }
}

/// The run's changes.
#[derive(Debug, Default)]
pub(crate) struct Layer {
    workspace: BTreeMap<String, Change>,
    tmp: BTreeMap<String, Change>,
    workspace_bytes: usize,
    tmp_bytes: usize,
    /// The first tree a write found full.
    overflowed: Option<Tree>,
}

/// A write past a tree's bound.
#[derive(Debug)]
pub(crate) struct Full;

impl Layer {
    fn tree(&self, tree: Tree) -> &BTreeMap<String, Change> {
        match tree {
            Tree::Workspace => &self.workspace,
            Tree::Tmp => &self.tmp,
        }
    }

    fn counted(&mut self, tree: Tree) -> &mut usize {
        match tree {
            Tree::Workspace => &mut self.workspace_bytes,
            Tree::Tmp => &mut self.tmp_bytes,
        }
    }

    /// What the run made of `path` in `tree`, if anything.
    pub(crate) fn get(&self, tree: Tree, path: &str) -> Option<Change> {
        self.tree(tree).get(path).cloned()
    }

    /// Records `change` at `path` in `tree`; fails past the tree's count of
    /// paths.
    pub(crate) fn set(&mut self, tree: Tree, path: &str, change: Change) -> Result<(), Full> {
        let map = match tree {
            Tree::Workspace => &mut self.workspace,
            Tree::Tmp => &mut self.tmp,
        };
        if !map.contains_key(path) && map.len() >= PATH_LIMIT {
            return Err(Full);
        }
        if let Some(Change::File(old)) = map.get(path) {
            let freed = bytes(old).len();
            let counted = self.counted(tree);
            *counted = counted.saturating_sub(freed);
        }
        let map = match tree {
            Tree::Workspace => &mut self.workspace,
            Tree::Tmp => &mut self.tmp,
        };
        if tree == Tree::Tmp && matches!(change, Change::Gone) {
            map.remove(path);
        } else {
            map.insert(path.to_owned(), change);
        }
        Ok(())
    }

    /// Counts `more` bytes written in `tree` (fewer when negative); fails,
    /// counting nothing, past the tree's bound.
    pub(crate) fn grow(&mut self, tree: Tree, more: i64) -> Result<(), Full> {
        let limit = tree.limit();
        let counted = self.counted(tree);
        let next = if more >= 0 {
            counted.saturating_add(usize::try_from(more).unwrap_or(usize::MAX))
        } else {
            counted.saturating_sub(usize::try_from(more.unsigned_abs()).unwrap_or(usize::MAX))
        };
        if next > limit {
            self.overflowed.get_or_insert(tree);
            return Err(Full);
        }
        *counted = next;
        Ok(())
    }

    /// The names directly under `dir` in `tree` and what the run made of
    /// each.
    pub(crate) fn children(&self, tree: Tree, dir: &str) -> Vec<(String, Change)> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        self.tree(tree)
            .range(prefix.clone()..)
            .take_while(|(path, _)| path.starts_with(&prefix))
            .filter_map(|(path, change)| {
                let rest = &path[prefix.len()..];
                (!rest.is_empty() && !rest.contains('/')).then(|| (rest.to_owned(), change.clone()))
            })
            .collect()
    }

    /// The first tree a write found full, if one did.
    pub(crate) fn overflowed(&self) -> Option<Tree> {
        self.overflowed
    }

    /// The workspace changes, as staged entries.
    pub(crate) fn into_changes(self) -> BTreeMap<String, FileState> {
        self.workspace
            .into_iter()
            .map(|(path, change)| {
                let state = match change {
                    Change::Dir => FileState::Directory,
                    Change::Gone => FileState::Absent,
                    Change::File(file) => FileState::File(Arc::from(bytes(&file).as_slice())),
                };
                (path, state)
            })
            .collect()
    }
}

/// A run's layer, shared by its view and its open files.
pub(crate) type SharedLayer = Arc<Mutex<Layer>>;

/// The layer, even if a writer panicked holding it.
pub(crate) fn lock(layer: &SharedLayer) -> MutexGuard<'_, Layer> {
    layer
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
