//! The agent's file changes as the loop sees them. When a run's workspace is
//! transactional, the tools' file writes are staged rather than made; the loop
//! takes a step's staged changes into the step's commit and publishes them to
//! the real folder only after the commit's receipt, so a crash before the
//! commit leaves the folder untouched. A run that waits for a person holds its
//! committed changes unpublished until it goes on.

use std::fmt;

/// What a path holds on one side of a change.
#[derive(Clone, PartialEq, Eq)]
pub enum FileState {
    /// Nothing.
    Absent,
    /// A directory.
    Directory,
    /// A file with these contents.
    File(Vec<u8>),
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
/// A workspace that writes straight through stages nothing.
pub trait FileLedger: Send + Sync {
    /// Every change staged since the last confirmed commit, each with what its
    /// path held before, in path order.
    fn staged(&self) -> Vec<FileChange>;

    /// The commit carrying [`FileLedger::staged`] is durable.
    fn confirm(&self);

    /// The step will not commit: forget what it staged.
    fn abandon(&self);

    /// Write every confirmed change not yet published to the real folder.
    fn publish(&self) -> Result<(), PublishError>;

    /// Reload a run's committed changes in a new process: `steps` in order,
    /// those up to step `published` already in the real folder.
    fn restore(&self, steps: &[StepFiles], published: u64);
}

/// The ledger of a run without a staged workspace.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoFiles;

impl FileLedger for NoFiles {
    fn staged(&self) -> Vec<FileChange> {
        Vec::new()
    }

    fn confirm(&self) {}

    fn abandon(&self) {}

    fn publish(&self) -> Result<(), PublishError> {
        Ok(())
    }

    fn restore(&self, _steps: &[StepFiles], _published: u64) {}
}
