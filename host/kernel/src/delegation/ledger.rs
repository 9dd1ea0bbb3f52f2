//! The file ledger of a sub-agent's run. Its steps commit their file
//! changes in its own run, as any run's do, but nothing is published: what
//! it committed stays staged beneath the delegating call, every call of the
//! run sees it over its parent's view, and when the run ends the whole of
//! it travels back in that call's outcome, to reach the folder only when
//! the parent's step commits.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::files::{
    FileChange, FileLedger, FileState, FileWrites, PublishError, QuotaExceeded, StepFiles,
};

/// A sub-agent's committed changes over its parent's ledger.
pub(crate) struct ChildFiles {
    parent: Arc<dyn FileLedger>,
    committed: Mutex<FileWrites>,
}

impl ChildFiles {
    /// An empty layer over `parent`.
    pub(crate) fn new(parent: Arc<dyn FileLedger>) -> Self {
        Self {
            parent,
            committed: Mutex::new(FileWrites::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, FileWrites> {
        self.committed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Everything the run committed: what its delegating call changed.
    pub(crate) fn committed(&self) -> FileWrites {
        self.lock().clone()
    }

    /// What `path` holds beneath the run's own changes, as its parent sees it.
    fn beneath(&self, path: &str, after: &FileState) -> FileState {
        if let Some(state) = self.parent.underlay().get(path) {
            return state.clone();
        }
        let single = FileWrites::from([(path.to_owned(), after.clone())]);
        self.parent
            .changes(&single)
            .pop()
            .map_or_else(|| after.clone(), |change| change.before)
    }
}

impl FileLedger for ChildFiles {
    fn fits(&self, step: &FileWrites, call: &FileWrites) -> Result<(), QuotaExceeded> {
        let mut held = self.lock().clone();
        held.extend(
            step.iter()
                .map(|(path, state)| (path.clone(), state.clone())),
        );
        self.parent.fits(&held, call)
    }

    fn changes(&self, files: &FileWrites) -> Vec<FileChange> {
        let committed = self.lock();
        files
            .iter()
            .filter_map(|(path, after)| {
                let before = committed
                    .get(path)
                    .cloned()
                    .unwrap_or_else(|| self.beneath(path, after));
                FileChange::between(path, before, after)
            })
            .collect()
    }

    fn confirm(&self, changes: &[FileChange]) {
        let mut committed = self.lock();
        for change in changes {
            committed.insert(change.path.clone(), change.after.clone());
        }
    }

    /// Nothing of a sub-agent's reaches the folder but through its parent.
    fn publish(&self) -> Result<(), PublishError> {
        Ok(())
    }

    fn restore(&self, steps: &[StepFiles], _published: u64) {
        let mut committed = self.lock();
        committed.clear();
        for change in steps.iter().flat_map(|step| &step.changes) {
            committed.insert(change.path.clone(), change.after.clone());
        }
    }

    fn underlay(&self) -> Arc<FileWrites> {
        let mut seen = FileWrites::clone(&self.parent.underlay());
        seen.extend(
            self.lock()
                .iter()
                .map(|(path, state)| (path.clone(), state.clone())),
        );
        Arc::new(seen)
    }
}
