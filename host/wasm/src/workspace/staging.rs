//! The host-kept layers of staged workspace changes, which a sandbox backend
//! reads and writes through the `staging` import, and the [`FileLedger`] the
//! agent loop commits them through.
//!
//! Three layers: each call's own changes ([`CallFiles`]), what the current
//! step's finished calls staged (`pending`), and what earlier steps committed
//! and the folder does not hold yet (`committed`; until published, or for the
//! whole run when the backend never publishes). A call sees its own changes
//! over `pending` over `committed` over the backend's own files. A call's
//! changes join the step only when the call succeeds and they fit the step's
//! quota, so a call that fails, traps, times out or stages too much leaves
//! nothing behind. Keeping the layers in the host, not in the component, is
//! what lets every call run in a fresh instance.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cordon_kernel::{
    Capability, Denial, Event, EventSink, FileChange, FileLedger, FileState, PublishError,
    StepFiles,
};

use super::folder::Folder;
use super::paths::is_under;
use crate::limits::StagingLimits;

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

    /// The bytes the entry holds.
    fn bytes(&self) -> u64 {
        match self {
            Self::File(contents) => contents.len() as u64,
            Self::Directory | Self::Removed => 0,
        }
    }
}

/// Entries by path, with the bytes they hold in all.
#[derive(Debug, Default)]
struct Layer {
    entries: BTreeMap<String, Entry>,
    bytes: u64,
}

impl Layer {
    fn insert(&mut self, path: String, entry: Entry) {
        self.bytes += entry.bytes();
        if let Some(old) = self.entries.insert(path, entry) {
            self.bytes -= old.bytes();
        }
    }

    /// The bytes and entries this layer would hold with `other` on top.
    fn with(&self, other: &Layer) -> (u64, usize) {
        let mut bytes = self.bytes + other.bytes;
        let mut entries = self.entries.len();
        for path in other.entries.keys() {
            match self.entries.get(path) {
                Some(old) => bytes -= old.bytes(),
                None => entries += 1,
            }
        }
        (bytes, entries)
    }

    fn extend(&mut self, other: Layer) {
        for (path, entry) in other.entries {
            self.insert(path, entry);
        }
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    fn range<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a String, &'a Entry)> {
        self.entries
            .range(prefix.to_owned()..)
            .take_while(move |(path, _)| path.starts_with(prefix))
            .filter(move |(path, _)| is_under(path, prefix))
    }
}

#[derive(Default)]
struct Layers {
    committed: Layer,
    pending: Layer,
}

/// One run's staged files.
pub struct Staging {
    layers: Mutex<Layers>,
    /// The real folder: what a path held before a change, and where committed
    /// changes go when `publishes`.
    folder: Option<Folder>,
    publishes: bool,
    limits: StagingLimits,
    /// Where a refused publication is reported, naming the backend.
    audit: Option<(Arc<dyn EventSink>, String)>,
}

/// Why a call's changes were not staged: past a quota.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct OverQuota(pub(crate) String);

impl Staging {
    /// Staging over `folder`, publishing to it when `publishes`, bounded by
    /// `limits`.
    pub(crate) fn new(folder: Option<Folder>, publishes: bool, limits: StagingLimits) -> Self {
        Self {
            layers: Mutex::new(Layers::default()),
            publishes: publishes && folder.is_some(),
            folder,
            limits,
            audit: None,
        }
    }

    /// This staging, reporting a refused publication to `events` as backend
    /// `bundle`'s.
    pub(crate) fn audited(mut self, events: Arc<dyn EventSink>, bundle: &str) -> Self {
        self.audit = Some((events, bundle.to_owned()));
        self
    }

    fn lock(&self) -> MutexGuard<'_, Layers> {
        self.layers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The real folder the staged changes lie over, if any.
    pub(crate) fn folder(&self) -> Option<&Folder> {
        self.folder.as_ref()
    }

    /// The staged entry at `path` (normalized), if any.
    fn get(&self, path: &str) -> Option<Entry> {
        let layers = self.lock();
        layers
            .pending
            .entries
            .get(path)
            .or_else(|| layers.committed.entries.get(path))
            .cloned()
    }

    /// Every staged entry at or beneath `prefix` (normalized), in path order.
    fn under(&self, prefix: &str) -> BTreeMap<String, Entry> {
        let layers = self.lock();
        let mut merged: BTreeMap<String, Entry> = layers
            .committed
            .range(prefix)
            .map(|(path, entry)| (path.clone(), entry.clone()))
            .collect();
        merged.extend(
            layers
                .pending
                .range(prefix)
                .map(|(path, entry)| (path.clone(), entry.clone())),
        );
        merged
    }

    /// Add a finished call's changes to the step's, unless the step, or the
    /// run's unpublished changes, would outgrow their quotas.
    fn admit(&self, call: Layer) -> Result<(), OverQuota> {
        let mut layers = self.lock();
        let (bytes, entries) = layers.pending.with(&call);
        let limits = self.limits;
        if bytes > limits.step_bytes || entries > limits.step_entries {
            return Err(OverQuota(format!(
                "the step would stage {} in {entries} paths, past its limit of {} in {} paths (`step-staged-mib`, `step-staged-entries`)",
                mib(bytes),
                mib(limits.step_bytes),
                limits.step_entries
            )));
        }
        if !self.publishes {
            let held = layers.committed.bytes + bytes;
            if held > limits.run_bytes {
                return Err(OverQuota(format!(
                    "the run's staged workspace would hold {}, past its limit of {} (`run-staged-mib`)",
                    mib(held),
                    mib(limits.run_bytes)
                )));
            }
        }
        layers.pending.extend(call);
        Ok(())
    }

    fn before(&self, layers: &Layers, path: &str) -> FileState {
        match (layers.committed.entries.get(path), &self.folder) {
            (Some(entry), _) => entry.state(),
            (None, Some(folder)) => folder.state(path),
            (None, None) => FileState::Absent,
        }
    }
}

/// Megabytes of `bytes`, for messages.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// One call's view of a run's staged files: its own changes over the step's.
pub(crate) struct CallFiles {
    staging: Arc<Staging>,
    own: Layer,
}

impl CallFiles {
    /// A fresh layer for one call over `staging`.
    pub(crate) fn new(staging: Arc<Staging>) -> Self {
        Self {
            staging,
            own: Layer::default(),
        }
    }

    /// The run's staging this call's changes go to.
    pub(crate) fn staging(&self) -> &Staging {
        &self.staging
    }

    /// The entry at `path` (normalized) as this call sees it.
    pub(crate) fn get(&self, path: &str) -> Option<Entry> {
        self.own
            .entries
            .get(path)
            .cloned()
            .or_else(|| self.staging.get(path))
    }

    /// Every entry at or beneath `prefix` as this call sees them, in path order.
    pub(crate) fn under(&self, prefix: &str) -> BTreeMap<String, Entry> {
        let mut merged = self.staging.under(prefix);
        merged.extend(
            self.own
                .range(prefix)
                .map(|(path, entry)| (path.clone(), entry.clone())),
        );
        merged
    }

    /// Stage `entry` at `path` (normalized and judged), unless the call's
    /// quota would be passed.
    pub(crate) fn put(&mut self, path: String, entry: Entry) -> Result<(), OverQuota> {
        let mut added = Layer::default();
        added.insert(path, entry);
        let (bytes, entries) = self.own.with(&added);
        let limits = self.staging.limits;
        if bytes > limits.call_bytes || entries > limits.call_entries {
            return Err(OverQuota(format!(
                "the call would stage {} in {entries} paths, past its limit of {} in {} paths (`staged-mib`, `staged-entries`)",
                mib(bytes),
                mib(limits.call_bytes),
                limits.call_entries
            )));
        }
        self.own.extend(added);
        Ok(())
    }

    /// The call succeeded: its changes join the step's, if they fit.
    pub(crate) fn keep(self) -> Result<(), OverQuota> {
        if self.own.entries.is_empty() {
            return Ok(());
        }
        self.staging.admit(self.own)
    }
}

impl FileLedger for Staging {
    fn staged(&self) -> Vec<FileChange> {
        let layers = self.lock();
        layers
            .pending
            .entries
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
        if let Err(stopped) = folder.publish(layers.committed.entries.iter()) {
            if let (true, Some((events, bundle))) = (stopped.through_link, &self.audit) {
                events.emit(Event::Denied(Denial {
                    bundle: bundle.clone(),
                    capability: Capability::Filesystem,
                    target: stopped.error.path.clone(),
                    reason: stopped.error.message.clone(),
                }));
            }
            return Err(stopped.error);
        }
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

#[cfg(test)]
mod tests {
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

    fn file(bytes: usize) -> Entry {
        Entry::File(Arc::new(vec![b'x'; bytes]))
    }

    #[test]
    fn a_call_past_its_quota_is_refused_and_rewriting_a_path_counts_once() {
        let staging = Arc::new(Staging::new(None, false, limits()));
        let mut call = CallFiles::new(Arc::clone(&staging));
        for _ in 0..5 {
            call.put("a".into(), file(8)).unwrap();
        }
        assert!(call.put("b".into(), file(3)).is_err(), "11 bytes");
        call.put("b".into(), file(2)).unwrap();
        call.put("c".into(), Entry::Directory).unwrap();
        assert!(call.put("d".into(), Entry::Directory).is_err(), "4 paths");
        call.keep().unwrap();
        assert_eq!(staging.staged().len(), 3);
    }

    #[test]
    fn a_call_that_would_outgrow_the_step_leaves_nothing() {
        let staging = Arc::new(Staging::new(None, false, limits()));
        let mut first = CallFiles::new(Arc::clone(&staging));
        first.put("a".into(), file(10)).unwrap();
        first.keep().unwrap();
        let mut second = CallFiles::new(Arc::clone(&staging));
        second.put("b".into(), file(6)).unwrap();
        let refused = second.keep().unwrap_err();
        assert!(refused.0.contains("step-staged-mib"), "{refused}");
        assert_eq!(staging.staged().len(), 1);
    }

    #[test]
    fn a_backend_that_never_publishes_is_bounded_for_the_whole_run() {
        let staging = Arc::new(Staging::new(None, false, limits()));
        for (step, path) in ["a", "b"].into_iter().enumerate() {
            let mut call = CallFiles::new(Arc::clone(&staging));
            call.put(path.into(), file(10)).unwrap();
            call.keep()
                .unwrap_or_else(|error| panic!("step {step}: {error}"));
            staging.confirm();
        }
        let mut call = CallFiles::new(Arc::clone(&staging));
        call.put("c".into(), file(1)).unwrap();
        let refused = call.keep().unwrap_err();
        assert!(refused.0.contains("run-staged-mib"), "{refused}");
    }

    #[test]
    fn a_call_sees_its_own_changes_over_the_steps() {
        let staging = Arc::new(Staging::new(None, false, limits()));
        let mut first = CallFiles::new(Arc::clone(&staging));
        first.put("a".into(), file(1)).unwrap();
        first.keep().unwrap();
        let mut second = CallFiles::new(Arc::clone(&staging));
        second.put("a".into(), Entry::Removed).unwrap();
        assert_eq!(second.get("a"), Some(Entry::Removed));
        assert_eq!(staging.get("a"), Some(file(1)));
        drop(second);
        assert_eq!(staging.staged().len(), 1, "a dropped call leaves nothing");
    }
}
