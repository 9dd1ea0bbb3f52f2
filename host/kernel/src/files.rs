//! The agent's file changes as the loop sees them. When a run's workspace is
//! transactional, the tools' file writes are staged rather than made: each
//! call's changes come back with its outcome ([`FileWrites`]), the loop admits
//! them into the step in the model's call order (two calls changing one path
//! is a [`FileConflict`]), takes the step's changes into its commit, and
//! publishes them to the real folder only after the commit's receipt, so a
//! crash before the commit leaves the folder untouched. A call that fails
//! contributes no change. A run that waits for a person holds its committed
//! changes unpublished until it goes on.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::merge::writer::Writer;

/// What a path holds on one side of a change.
#[derive(Clone, PartialEq, Eq)]
pub enum FileState {
    /// Nothing.
    Absent,
    /// A directory.
    Directory,
    /// A file with these contents, shared: a change travels from the call
    /// that made it to the commit and the folder without being copied.
    File(Arc<[u8]>),
}

impl fmt::Debug for FileState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Absent => f.write_str("Absent"),
            Self::Directory => f.write_str("Directory"),
            Self::File(contents) => write!(f, "File({} bytes)", contents.len()),
        }
    }
}

/// The file changes of a call or a step: each path and what it holds after
/// them, in path order.
pub type FileWrites = BTreeMap<String, FileState>;

/// Two writers of one step changed one path: the step fails and commits
/// nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error(
    "file conflict on `{path}`: a path takes one writer per step; writers: {}",
    writers.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
)]
pub struct FileConflict {
    /// The path.
    pub path: String,
    /// Every writer that changed it, in admission order.
    pub writers: Vec<Writer>,
}

/// A step's file changes would outgrow what the workspace may stage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct QuotaExceeded {
    /// The sandbox backend whose quota it is.
    pub bundle: String,
    /// Which quota, and by how much.
    pub detail: String,
}

/// One path's change in a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Path relative to the workspace root, `/`-separated.
    pub path: String,
    /// What the path held before the step.
    pub before: FileState,
    /// What it holds after.
    pub after: FileState,
}

impl FileChange {
    /// The change of `path` from `before` to `after`; `None` when it holds
    /// what it held.
    pub fn between(path: &str, before: FileState, after: &FileState) -> Option<Self> {
        (before != *after).then(|| Self {
            path: path.to_owned(),
            before,
            after: after.clone(),
        })
    }
}

/// The file changes one step committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepFiles {
    /// The step.
    pub seq: u64,
    /// Its changes, in path order.
    pub changes: Vec<FileChange>,
}

/// Why committed changes could not be written to the real folder. The commit
/// stands; publishing again (a resumed run does) writes them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot write {path} to the workspace folder: {message}")]
pub struct PublishError {
    /// The path that failed.
    pub path: String,
    /// Why.
    pub message: String,
}

/// The port through which the loop commits and publishes staged file changes.
/// It holds what earlier steps committed; a step's own changes travel with
/// its calls' outcomes until its commit. A workspace that writes straight
/// through stages nothing.
pub trait FileLedger: Send + Sync {
    /// Whether a step whose admitted changes are `step` may take a call's
    /// changes `call` too and stay within the workspace's staging quotas.
    fn fits(&self, step: &FileWrites, call: &FileWrites) -> Result<(), QuotaExceeded>;

    /// The changes `files` (a step's admitted file writes) make, each with
    /// what its path held before; paths they leave as they were are left out.
    fn changes(&self, files: &FileWrites) -> Vec<FileChange>;

    /// The commit carrying `changes` is durable: they are committed.
    fn confirm(&self, changes: &[FileChange]);

    /// Write every committed change not yet published to the real folder.
    fn publish(&self) -> Result<(), PublishError>;

    /// Reload a run's committed changes in a new process: `steps` in order,
    /// those up to step `published` already in the real folder.
    fn restore(&self, steps: &[StepFiles], published: u64);

    /// The changes every call of the run sees beneath its own, over the
    /// workspace's committed files: none, unless the run is a sub-agent's,
    /// whose committed changes are still its parent's staged ones.
    fn underlay(&self) -> Arc<FileWrites> {
        Arc::default()
    }

    /// The turn a step that changes files takes from reading what its paths
    /// held until its changes are committed and published, when other runs
    /// share the ledger (as the runs a server opens to answer calls at once
    /// do): their steps then commit their changes one after another, each
    /// reading what the one before committed. `None` for a ledger no other
    /// run shares.
    fn commit_turn(&self) -> Option<CommitTurn> {
        None
    }
}

/// The turn steps of runs sharing a ledger take to commit their file
/// changes ([`FileLedger::commit_turn`]).
#[derive(Clone, Default)]
pub struct CommitTurn(Arc<futures_util::lock::Mutex<()>>);

impl std::fmt::Debug for CommitTurn {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("CommitTurn")
    }
}

impl CommitTurn {
    /// Wait for the turn; it passes on when the guard is dropped.
    pub(crate) async fn take(&self) -> futures_util::lock::MutexGuard<'_, ()> {
        self.0.lock().await
    }
}

/// The ledger of a run without a staged workspace.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoFiles;

impl FileLedger for NoFiles {
    fn fits(&self, _step: &FileWrites, _call: &FileWrites) -> Result<(), QuotaExceeded> {
        Ok(())
    }

    fn changes(&self, _files: &FileWrites) -> Vec<FileChange> {
        Vec::new()
    }

    fn confirm(&self, _changes: &[FileChange]) {}

    fn publish(&self) -> Result<(), PublishError> {
        Ok(())
    }

    fn restore(&self, _steps: &[StepFiles], _published: u64) {}
}
