//! What an interpreter's run writes: its own layer over the calling
//! operation's workspace, and its private `/tmp`. Both live in memory, each
//! bounded. Every file the run holds is charged to its tree's [`Budget`]
//! for as long as it exists, in the layer or in a descriptor still open on
//! it, so removing or renaming a file frees nothing a program still holds.
//! When the run ends, the workspace layer goes back to the operation
//! ([`Layer::into_changes`]) and reaches the workspace the way the
//! operation's own writes do; `/tmp` vanishes with the run.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cordon_kernel::FileState;

/// Most bytes the files a run writes in the workspace may hold.
pub(crate) const WORKSPACE_LIMIT: usize = 256 * 1024 * 1024;
/// Most bytes the files of a run's `/tmp` may hold.
pub(crate) const TMP_LIMIT: usize = 64 * 1024 * 1024;
/// Most paths a run may change in the workspace or create in `/tmp`.
pub(crate) const PATH_LIMIT: usize = 100_000;

/// Which of the two trees a path is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tree {
    /// The calling operation's workspace.
    Workspace,
    /// The run's private `/tmp`.
    Tmp,
}

impl Tree {
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

/// A write past a tree's bound.
#[derive(Debug)]
pub(crate) struct Full;

/// The bytes a tree's files hold, against its bound.
#[derive(Debug)]
pub(crate) struct Budget {
    tree: Tree,
    limit: usize,
    used: AtomicUsize,
    overflowed: AtomicBool,
}

impl Budget {
    fn new(tree: Tree, limit: usize) -> Arc<Self> {
        Arc::new(Self {
            tree,
            limit,
            used: AtomicUsize::new(0),
            overflowed: AtomicBool::new(false),
        })
    }

    /// Counts `more` bytes; fails, counting nothing, past the bound.
    fn charge(&self, more: usize) -> Result<(), Full> {
        let charged = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(more).filter(|next| *next <= self.limit)
            });
        charged.map(|_| ()).map_err(|_| {
            self.overflowed.store(true, Ordering::SeqCst);
            Full
        })
    }

    fn refund(&self, less: usize) {
        // A refund never exceeds what was charged; saturate all the same.
        let _ = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                Some(used.saturating_sub(less))
            });
    }
}

/// A file the run wrote: its bytes, charged to a tree's budget until the
/// last holder lets it go.
#[derive(Debug)]
pub(crate) struct FileData {
    bytes: Vec<u8>,
    budget: Arc<Budget>,
}

impl FileData {
    /// An empty file charged to `budget`.
    fn empty(budget: Arc<Budget>) -> Self {
        Self {
            bytes: Vec::new(),
            budget,
        }
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Sets the length to `len`, zero-filling growth, charging or refunding
    /// the difference.
    pub(crate) fn set_len(&mut self, len: usize) -> Result<(), Full> {
        let old = self.bytes.len();
        if len > old {
            self.budget.charge(len - old)?;
            self.bytes.resize(len, 0);
        } else {
            self.bytes.truncate(len);
            self.bytes.shrink_to_fit();
            self.budget.refund(old - len);
        }
        Ok(())
    }

    /// Writes `data` at `offset` (the end when `append`): the offset after.
    pub(crate) fn write(
        &mut self,
        offset: usize,
        append: bool,
        data: &[u8],
    ) -> Result<usize, Full> {
        let start = if append { self.bytes.len() } else { offset };
        let end = start.checked_add(data.len()).ok_or(Full)?;
        if end > self.bytes.len() {
            self.set_len(end)?;
        }
        self.bytes[start..end].copy_from_slice(data);
        Ok(end)
    }

    /// Charges the file to `budget` instead, as when it moves between trees.
    fn move_to(&mut self, budget: &Arc<Budget>) -> Result<(), Full> {
        if Arc::ptr_eq(&self.budget, budget) {
            return Ok(());
        }
        budget.charge(self.bytes.len())?;
        self.budget.refund(self.bytes.len());
        self.budget = Arc::clone(budget);
        Ok(())
    }
}

impl Drop for FileData {
    fn drop(&mut self) {
        self.budget.refund(self.bytes.len());
    }
}

/// A file the run wrote, shared by the layer and its open descriptors.
pub(crate) type Written = Arc<Mutex<FileData>>;

/// A written file's data, even if a writer panicked holding it.
pub(crate) fn data(file: &Written) -> MutexGuard<'_, FileData> {
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
    /// A file.
    File(Written),
}

/// The run's changes.
#[derive(Debug)]
pub(crate) struct Layer {
    workspace: BTreeMap<String, Change>,
    tmp: BTreeMap<String, Change>,
    workspace_budget: Arc<Budget>,
    tmp_budget: Arc<Budget>,
}

impl Default for Layer {
    fn default() -> Self {
        Self {
            workspace: BTreeMap::new(),
            tmp: BTreeMap::new(),
            workspace_budget: Budget::new(Tree::Workspace, WORKSPACE_LIMIT),
            tmp_budget: Budget::new(Tree::Tmp, TMP_LIMIT),
        }
    }
}

impl Layer {
    fn tree(&self, tree: Tree) -> &BTreeMap<String, Change> {
        match tree {
            Tree::Workspace => &self.workspace,
            Tree::Tmp => &self.tmp,
        }
    }

    fn budget(&self, tree: Tree) -> &Arc<Budget> {
        match tree {
            Tree::Workspace => &self.workspace_budget,
            Tree::Tmp => &self.tmp_budget,
        }
    }

    /// What the run made of `path` in `tree`, if anything.
    pub(crate) fn get(&self, tree: Tree, path: &str) -> Option<Change> {
        self.tree(tree).get(path).cloned()
    }

    /// A new, empty file charged to `tree`.
    pub(crate) fn new_file(&self, tree: Tree) -> FileData {
        FileData::empty(Arc::clone(self.budget(tree)))
    }

    /// A new file charged to `tree` holding what `fill` reads, at most
    /// `size` bytes, charged before a byte is read; what `fill` fails with,
    /// the charge refunded.
    pub(crate) fn filled_file<E>(
        &self,
        tree: Tree,
        size: usize,
        fill: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<Result<FileData, E>, Full> {
        let budget = Arc::clone(self.budget(tree));
        budget.charge(size)?;
        Ok(match fill() {
            Ok(mut bytes) => {
                bytes.truncate(size);
                budget.refund(size - bytes.len());
                Ok(FileData { bytes, budget })
            }
            Err(error) => {
                budget.refund(size);
                Err(error)
            }
        })
    }

    /// Charges `file` to `tree`, moving it from the tree it was charged to.
    pub(crate) fn move_file(&self, file: &Written, tree: Tree) -> Result<(), Full> {
        data(file).move_to(self.budget(tree))
    }

    /// Records `change` at `path` in `tree`; fails past the tree's count of
    /// paths.
    pub(crate) fn set(&mut self, tree: Tree, path: &str, change: Change) -> Result<(), Full> {
        let map = match tree {
            Tree::Workspace => &mut self.workspace,
            Tree::Tmp => &mut self.tmp,
        };
        if !map.contains_key(path) && map.len() >= PATH_LIMIT {
            self.budget(tree).overflowed.store(true, Ordering::SeqCst);
            return Err(Full);
        }
        let replaced = if tree == Tree::Tmp && matches!(change, Change::Gone) {
            map.remove(path)
        } else {
            map.insert(path.to_owned(), change)
        };
        // A replaced file frees its bytes once no descriptor holds it, and
        // it is dropped here, outside any file's lock.
        drop(replaced);
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

    /// The trees a write found full.
    pub(crate) fn overflowed(&self) -> Vec<Tree> {
        [&self.workspace_budget, &self.tmp_budget]
            .into_iter()
            .filter(|budget| budget.overflowed.load(Ordering::SeqCst))
            .map(|budget| budget.tree)
            .collect()
    }

    /// The workspace changes, as staged entries.
    pub(crate) fn into_changes(self) -> BTreeMap<String, FileState> {
        self.workspace
            .into_iter()
            .map(|(path, change)| {
                let state = match change {
                    Change::Dir => FileState::Directory,
                    Change::Gone => FileState::Absent,
                    Change::File(file) => FileState::File(Arc::from(data(&file).bytes())),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_holds_a_bounded_count_of_paths_and_bytes() {
        let mut layer = Layer::default();
        for n in 0..PATH_LIMIT {
            layer.set(Tree::Tmp, &format!("d{n}"), Change::Dir).unwrap();
        }
        assert!(layer.set(Tree::Tmp, "one-more", Change::Dir).is_err());
        layer.set(Tree::Tmp, "d0", Change::Gone).unwrap();
        layer.set(Tree::Tmp, "one-more", Change::Dir).unwrap();
        let mut file = layer.new_file(Tree::Workspace);
        assert!(file.set_len(WORKSPACE_LIMIT + 1).is_err());
        assert!(file.write(WORKSPACE_LIMIT, false, b"x").is_err());
        file.write(0, true, b"fits").unwrap();
        assert_eq!(layer.overflowed(), [Tree::Workspace, Tree::Tmp]);
    }
}
