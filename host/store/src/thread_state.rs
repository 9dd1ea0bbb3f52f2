//! One thread's state as a [`StateStore`], for tool calls made outside a run
//! (`cordon tool call`). It lives in the same file and tables as the state that
//! run commits change, so there is one state authority: a note a tool call
//! writes to thread `default` is what the next run of that thread reads.

use std::sync::Arc;

use cordon_kernel::{CommitError, StateReader, StateStore, StateStoreError, StateWrite};
use serde_json::Value;

use crate::SqliteCommitStore;

/// The state of one thread of a [`SqliteCommitStore`].
pub struct ThreadState {
    store: Arc<SqliteCommitStore>,
    thread: String,
}

impl ThreadState {
    /// The state of `thread` in `store`.
    pub fn new(store: Arc<SqliteCommitStore>, thread: &str) -> Self {
        Self {
            store,
            thread: thread.to_owned(),
        }
    }

    fn failure(&self, error: CommitError) -> StateStoreError {
        StateStoreError::Corrupt {
            location: format!("{} thread {}", self.store.path().display(), self.thread),
            message: error.to_string(),
        }
    }
}

impl StateReader for ThreadState {
    fn get(&self, key: &str) -> Result<Option<Value>, StateStoreError> {
        self.store
            .thread_value(&self.thread, key)
            .map_err(|error| self.failure(error))
    }
}

impl StateStore for ThreadState {
    fn apply(&self, writes: &[StateWrite]) -> Result<(), StateStoreError> {
        self.store
            .apply_to_thread(&self.thread, writes)
            .map_err(|error| self.failure(error))
    }
}
