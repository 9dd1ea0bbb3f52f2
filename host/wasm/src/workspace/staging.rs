//! The host-kept layer of staged workspace changes, which a sandbox backend
//! reads and writes through the `staging` import, and the [`FileLedger`] the
//! agent loop commits it through.
//!
//! Two layers: `pending`, what the current step staged, and `committed`, what
//! earlier steps committed and the folder does not hold yet (until published,
//! or forever for a backend that never publishes). A backend sees `pending`
//! over `committed` over its own files. Keeping the layers in the host, not in
//! the component, is what lets every call run in a fresh instance and lets a
//! call that traps lose nothing the step already staged.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cordon_kernel::{FileChange, FileLedger, FileState, PublishError, StepFiles};

use super::folder::Folder;
use super::paths::is_under;

/// A staged path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A file with these contents.
    File(Arc<Vec<u8>>),
    /// A directory.
    Directory,
    /// Nothing: the path was removed.
    Removed,
}

impl Entry {
    fn state(&self) -> FileState {
        match self {
            Self::File(contents) => FileState::File(contents.as_ref().clone()),
            Self::Directory => FileState::Directory,
            Self::Removed => FileState::Absent,
        }
    }

    fn from_state(state: &FileState) -> Self {
        match state {
            FileState::File(contents) => Self::File(Arc::new(contents.clone())),
            FileState::Directory => Self::Directory,
            FileState::Absent => Self::Removed,
        }
    }
}

#[derive(Default)]
struct Layers {
    committed: BTreeMap<String, Entry>,
    pending: BTreeMap<String, Entry>,
}

/// One run's staged files.
pub struct Staging {
    layers: Mutex<Layers>,
    /// The real folder: what a path held before a change, and where committed
    /// changes go when `publishes`.
    folder: Option<Folder>,
    publishes: bool,
}

impl Staging {
    /// Staging over `folder`, publishing to it when `publishes`.
    pub(crate) fn new(folder: Option<Folder>, publishes: bool) -> Self {
        Self {
            layers: Mutex::new(Layers::default()),
            publishes: publishes && folder.is_some(),
            folder,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Layers> {
        self.layers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The staged entry at `path` (normalized), if any.
    pub(crate) fn get(&self, path: &str) -> Option<Entry> {
        let layers = self.lock();
        layers
            .pending
            .get(path)
            .or_else(|| layers.committed.get(path))
            .cloned()
    }

    /// Stage `entry` at `path` (normalized).
    pub(crate) fn put(&self, path: String, entry: Entry) {
        self.lock().pending.insert(path, entry);
    }

    /// Every staged entry at or beneath `prefix` (normalized), in path order.
    pub(crate) fn under(&self, prefix: &str) -> Vec<(String, Entry)> {
        let layers = self.lock();
        let mut merged: BTreeMap<&String, &Entry> = layers
            .committed
            .range(prefix.to_owned()..)
            .take_while(|(path, _)| path.starts_with(prefix))
            .filter(|(path, _)| is_under(path, prefix))
            .collect();
        merged.extend(
            layers
                .pending
                .range(prefix.to_owned()..)
                .take_while(|(path, _)| path.starts_with(prefix))
                .filter(|(path, _)| is_under(path, prefix)),
        );
        merged
            .into_iter()
            .map(|(path, entry)| (path.clone(), entry.clone()))
            .collect()
    }

    fn before(&self, layers: &Layers, path: &str) -> FileState {
        match (layers.committed.get(path), &self.folder) {
            (Some(entry), _) => entry.state(),
            (None, Some(folder)) => folder.state(path),
            (None, None) => FileState::Absent,
        }
    }
}

impl FileLedger for Staging {
    fn staged(&self) -> Vec<FileChange> {
        let layers = self.lock();
        layers
            .pending
            .iter()
            .filter_map(|(path, entry)| {
                let before = self.before(&layers, path);
                let after = entry.state();
                (before != after).then(|| FileChange {
                    path: path.clone(),
                    before,
                    after,
                })
            })
            .collect()
    }

    fn confirm(&self) {
        let mut layers = self.lock();
        let pending = std::mem::take(&mut layers.pending);
        layers.committed.extend(pending);
    }

    fn abandon(&self) {
        self.lock().pending.clear();
    }

    fn publish(&self) -> Result<(), PublishError> {
        let Some(folder) = self.folder.as_ref().filter(|_| self.publishes) else {
            return Ok(());
        };
        let mut layers = self.lock();
        folder.publish(layers.committed.iter())?;
        layers.committed.clear();
        Ok(())
    }

    fn restore(&self, steps: &[StepFiles], published: u64) {
        let mut layers = self.lock();
        for step in steps
            .iter()
            .filter(|step| !self.publishes || step.seq > published)
        {
            for change in &step.changes {
                layers
                    .committed
                    .insert(change.path.clone(), Entry::from_state(&change.after));
            }
        }
    }
}
