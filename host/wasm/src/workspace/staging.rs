//! The host-kept layers of staged workspace changes, which a sandbox backend
//! reads and writes through the `staging` import, and the [`FileLedger`] the
//! agent loop commits them through.
//!
//! [`Staging`] holds what earlier steps committed and the folder does not
//! hold yet (until published, or for the whole run when the backend never
//! publishes). Each call works in a layer of its own ([`CallFiles`]) over
//! the changes of the calls enclosing it and the committed ones, over the
//! backend's own files; no call sees another's uncommitted changes. A
//! call's layer comes back with its outcome; the loop admits it into the
//! step (judging the step's quotas through [`FileLedger::fits`]), commits
//! the step's changes, and only then are they committed here. Keeping the
//! layers in the host, not in the component, is what lets every call run in
//! a fresh instance.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cordon_kernel::{
    Capability, Denial, Event, EventSink, FileChange, FileLedger, FileState, FileWrites,
    PublishError, QuotaExceeded, StepFiles,
};
use cordon_paths::is_under;

use super::folder::Folder;
use crate::limits::StagingLimits;

/// The bytes `state` holds.
fn size(state: &FileState) -> u64 {
    match state {
        FileState::File(contents) => contents.len() as u64,
        FileState::Directory | FileState::Absent => 0,
    }
}

/// Entries by path, with the bytes they hold in all.
#[derive(Debug, Default)]
struct Layer {
    entries: FileWrites,
    bytes: u64,
}

impl Layer {
    fn insert(&mut self, path: String, state: FileState) {
        self.bytes += size(&state);
        if let Some(old) = self.entries.insert(path, state) {
            self.bytes -= size(&old);
        }
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }
}

/// The entries of `entries` at or beneath `prefix`, in path order.
fn range<'a>(
    entries: &'a FileWrites,
    prefix: &'a str,
) -> impl Iterator<Item = (&'a String, &'a FileState)> {
    entries
        .range(prefix.to_owned()..)
        .take_while(move |(path, _)| path.starts_with(prefix))
        .filter(move |(path, _)| is_under(path, prefix))
}

/// The bytes and paths `base` would hold with `top` over it.
fn measure(base: &FileWrites, top: &FileWrites) -> (u64, usize) {
    let mut bytes: u64 = base.values().map(size).sum();
    let mut entries = base.len();
    for (path, state) in top {
        match base.get(path) {
            Some(old) => bytes = bytes - size(old) + size(state),
            None => {
                entries += 1;
                bytes += size(state);
            }
        }
    }
    (bytes, entries)
}

/// One run's committed, unpublished changes.
pub struct Staging {
    committed: Mutex<Layer>,
    /// The real folder: what a path held before a change, and where committed
    /// changes go when `publishes`.
    folder: Option<Folder>,
    publishes: bool,
    limits: StagingLimits,
    /// The backend whose changes these are, which quota refusals name.
    backend: String,
    /// Where a publication refused at a link is shown.
    live: Arc<dyn EventSink>,
    /// The turn the steps of every run over this workspace take to commit
    /// their changes.
    turn: cordon_kernel::CommitTurn,
}

/// Why a call's changes were not staged: past a quota.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct OverQuota(pub(crate) String);

impl Staging {
    /// Staging of `backend`'s changes over `folder`, publishing to it when
    /// `publishes`, bounded by `limits`; a publication refused at a link is
    /// shown on `live`.
    pub(crate) fn new(
        folder: Option<Folder>,
        publishes: bool,
        limits: StagingLimits,
        backend: &str,
        live: Arc<dyn EventSink>,
    ) -> Self {
        Self {
            turn: cordon_kernel::CommitTurn::default(),
            committed: Mutex::new(Layer::default()),
            publishes: publishes && folder.is_some(),
            folder,
            limits,
            backend: backend.to_owned(),
            live,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Layer> {
        self.committed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The real folder the staged changes lie over, if any.
    pub(crate) fn folder(&self) -> Option<&Folder> {
        self.folder.as_ref()
    }

    /// What a committed change left at `path` (normalized), if any.
    fn get(&self, path: &str) -> Option<FileState> {
        self.lock().entries.get(path).cloned()
    }

    /// Every committed change at or beneath `prefix` (normalized).
    fn under(&self, prefix: &str) -> BTreeMap<String, FileState> {
        range(&self.lock().entries, prefix)
            .map(|(path, state)| (path.clone(), state.clone()))
            .collect()
    }

    fn exceeded(&self, detail: String) -> QuotaExceeded {
        QuotaExceeded {
            bundle: self.backend.clone(),
            detail,
        }
    }
}

/// Megabytes of `bytes`, for messages.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// One call's view of a run's staged files: its own changes over those of
/// the calls enclosing it, over the committed ones.
pub(crate) struct CallFiles {
    staging: Arc<Staging>,
    enclosing: Arc<FileWrites>,
    own: Layer,
}

impl CallFiles {
    /// A fresh layer for one call over `enclosing`, the changes of the calls
    /// enclosing it, over `staging`.
    pub(crate) fn new(staging: Arc<Staging>, enclosing: Arc<FileWrites>) -> Self {
        Self {
            staging,
            enclosing,
            own: Layer::default(),
        }
    }

    /// The real folder the staged changes lie over, if any.
    pub(crate) fn folder(&self) -> Option<&Folder> {
        self.staging.folder()
    }

    /// What `path` (normalized) holds as this call sees it, if it was changed.
    pub(crate) fn get(&self, path: &str) -> Option<FileState> {
        self.own
            .entries
            .get(path)
            .or_else(|| self.enclosing.get(path))
            .cloned()
            .or_else(|| self.staging.get(path))
    }

    /// Every change at or beneath `prefix` as this call sees them, in path order.
    pub(crate) fn under(&self, prefix: &str) -> BTreeMap<String, FileState> {
        let mut merged = self.staging.under(prefix);
        for layer in [&self.enclosing, &self.own.entries] {
            merged.extend(range(layer, prefix).map(|(path, state)| (path.clone(), state.clone())));
        }
        merged
    }

    /// Stage `state` at `path` (normalized and judged), unless the call's
    /// quota would be passed.
    pub(crate) fn put(&mut self, path: String, state: FileState) -> Result<(), OverQuota> {
        let bytes = self.own.bytes + size(&state) - self.own.entries.get(&path).map_or(0, size);
        let entries = self.own.entries.len() + usize::from(!self.own.entries.contains_key(&path));
        let limits = self.staging.limits;
        if bytes > limits.call_bytes || entries > limits.call_entries {
            return Err(OverQuota(format!(
                "the call would stage {} in {entries} paths, past its limit of {} in {} paths (`staged-mib`, `staged-entries`)",
                mib(bytes),
                mib(limits.call_bytes),
                limits.call_entries
            )));
        }
        self.own.insert(path, state);
        Ok(())
    }

    /// The call's own changes, which travel back with its outcome.
    pub(crate) fn into_writes(self) -> FileWrites {
        self.own.entries
    }
}

impl FileLedger for Staging {
    fn commit_turn(&self) -> Option<cordon_kernel::CommitTurn> {
        Some(self.turn.clone())
    }

    fn fits(&self, step: &FileWrites, call: &FileWrites) -> Result<(), QuotaExceeded> {
        let (bytes, entries) = measure(step, call);
        let limits = self.limits;
        if bytes > limits.step_bytes || entries > limits.step_entries {
            return Err(self.exceeded(format!(
                "the step would stage {} in {entries} paths, past its limit of {} in {} paths (`step-staged-mib`, `step-staged-entries`)",
                mib(bytes),
                mib(limits.step_bytes),
                limits.step_entries
            )));
        }
        if !self.publishes {
            let held = self.lock().bytes + bytes;
            if held > limits.run_bytes {
                return Err(self.exceeded(format!(
                    "the run's staged workspace would hold {}, past its limit of {} (`run-staged-mib`)",
                    mib(held),
                    mib(limits.run_bytes)
                )));
            }
        }
        Ok(())
    }

    fn changes(&self, files: &FileWrites) -> Vec<FileChange> {
        let committed = self.lock();
        files
            .iter()
            .filter_map(|(path, after)| {
                let before = match (committed.entries.get(path), &self.folder) {
                    (Some(state), _) => state.clone(),
                    (None, Some(folder)) => folder.state(path),
                    (None, None) => FileState::Absent,
                };
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

    fn publish(&self) -> Result<(), PublishError> {
        let Some(folder) = self.folder.as_ref().filter(|_| self.publishes) else {
            return Ok(());
        };
        let mut committed = self.lock();
        if let Err(stopped) = folder.publish(committed.entries.iter()) {
            if stopped.through_link {
                self.live.emit(Event::Denied(Denial {
                    bundle: self.backend.clone(),
                    capability: Capability::Filesystem,
                    target: stopped.error.path.clone(),
                    reason: stopped.error.message.clone(),
                }));
            }
            return Err(stopped.error);
        }
        committed.clear();
        Ok(())
    }

    fn restore(&self, steps: &[StepFiles], published: u64) {
        let mut committed = self.lock();
        for step in steps
            .iter()
            .filter(|step| !self.publishes || step.seq > published)
        {
            for change in &step.changes {
                committed.insert(change.path.clone(), change.after.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use cordon_kernel::EventLog;

    use super::*;

    fn limits() -> StagingLimits {
        StagingLimits {
            call_bytes: 10,
            call_entries: 3,
            step_bytes: 15,
            step_entries: 4,
            run_bytes: 20,
        }
    }

    fn staging() -> Arc<Staging> {
        Arc::new(Staging::new(
            None,
            false,
            limits(),
            "memory",
            Arc::new(EventLog::new()),
        ))
    }

    fn file(bytes: usize) -> FileState {
        FileState::File(vec![b'x'; bytes].into())
    }

    fn call(staging: &Arc<Staging>) -> CallFiles {
        CallFiles::new(Arc::clone(staging), Arc::default())
    }

    #[test]
    fn a_call_past_its_quota_is_refused_and_rewriting_a_path_counts_once() {
        let staging = staging();
        let mut call = call(&staging);
        for _ in 0..5 {
            call.put("a".into(), file(8)).unwrap();
        }
        assert!(call.put("b".into(), file(3)).is_err(), "11 bytes");
        call.put("b".into(), file(2)).unwrap();
        call.put("c".into(), FileState::Directory).unwrap();
        assert!(
            call.put("d".into(), FileState::Directory).is_err(),
            "4 paths"
        );
        assert_eq!(call.into_writes().len(), 3);
    }

    #[test]
    fn a_call_that_would_outgrow_the_step_does_not_fit() {
        let staging = staging();
        let step: FileWrites = [("a".to_owned(), file(10))].into();
        let refused = staging
            .fits(&step, &[("b".to_owned(), file(6))].into())
            .unwrap_err();
        assert!(refused.detail.contains("step-staged-mib"), "{refused}");
        assert_eq!(refused.bundle, "memory");
        staging
            .fits(&step, &[("a".to_owned(), file(15))].into())
            .expect("rewriting a path counts once");
    }

    #[test]
    fn a_backend_that_never_publishes_is_bounded_for_the_whole_run() {
        let staging = staging();
        for path in ["a", "b"] {
            let files: FileWrites = [(path.to_owned(), file(10))].into();
            staging.fits(&FileWrites::new(), &files).unwrap();
            staging.confirm(&staging.changes(&files));
        }
        let refused = staging
            .fits(&FileWrites::new(), &[("c".to_owned(), file(1))].into())
            .unwrap_err();
        assert!(refused.detail.contains("run-staged-mib"), "{refused}");
    }

    #[test]
    fn a_call_sees_its_own_changes_over_its_callers_over_the_committed_ones() {
        let staging = staging();
        staging.confirm(&staging.changes(&[("a".to_owned(), file(1))].into()));
        let enclosing: FileWrites = [("b".to_owned(), file(2))].into();
        let mut inner = CallFiles::new(Arc::clone(&staging), Arc::new(enclosing));
        inner.put("a".into(), FileState::Absent).unwrap();
        assert_eq!(inner.get("a"), Some(FileState::Absent));
        assert_eq!(inner.get("b"), Some(file(2)));
        assert_eq!(inner.under("").len(), 2);
        let other = call(&staging);
        assert_eq!(
            other.get("a"),
            Some(file(1)),
            "another call sees none of it"
        );
        assert_eq!(other.get("b"), None);
    }

    #[test]
    fn a_change_back_to_what_the_folder_holds_is_no_change() {
        let staging = staging();
        let files: FileWrites = [("a".to_owned(), file(1))].into();
        staging.confirm(&staging.changes(&files));
        assert!(staging.changes(&files).is_empty());
        assert_eq!(
            staging.changes(&[("a".to_owned(), file(2))].into()).len(),
            1
        );
    }
}
