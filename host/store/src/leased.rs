//! The commit port a worker drives a claimed run through: a Postgres store
//! seen through one [`Lease`], so that a worker whose lease lapsed or passed
//! to another can never write the run again.
//!
//! Every write of the run ([`CommitStore::commit`], [`CommitStore::record_intent`],
//! [`CommitStore::mark_published`]) checks the lease inside its own
//! transaction and is refused as [`CommitError::Fenced`] when it no longer
//! holds; so is any write of a run outside the leased run's tree (the run
//! and its sub-agents' runs, which one worker drives together), creating a
//! run that is not a sub-agent's in that tree, and deleting runs.
//! Reads go straight to the store.

use std::collections::BTreeMap;
use std::sync::Arc;

use cordon_kernel::{
    CommitError, CommitStore, Durability, Intent, Receipt, RunHeader, RunRecord, RunSummary,
    StepCommit, StepFiles,
};
use serde_json::Value;

use crate::PostgresCommitStore;
use crate::queue::Lease;

/// A Postgres store whose writes hold only while `lease` does.
#[derive(Debug, Clone)]
pub struct LeasedStore {
    store: Arc<PostgresCommitStore>,
    lease: Lease,
}

impl LeasedStore {
    /// `store` as the holder of `lease` may write it.
    pub fn new(store: Arc<PostgresCommitStore>, lease: Lease) -> Self {
        Self { store, lease }
    }

    fn fenced(&self, run_id: &str) -> CommitError {
        self.lease.fenced(run_id)
    }
}

#[async_trait::async_trait]
impl CommitStore for LeasedStore {
    /// Only a sub-agent's run in the tree of the leased run, while the
    /// lease holds.
    async fn create_run(&self, header: &RunHeader) -> Result<(), CommitError> {
        let in_tree = header
            .parent
            .as_ref()
            .is_some_and(|parent| parent.root == self.lease.run_id);
        if !in_tree {
            return Err(self.fenced(&header.run_id));
        }
        self.store.create_run_under(header, &self.lease).await
    }

    async fn commit(
        &self,
        commit: &StepCommit,
        durability: Durability,
    ) -> Result<Receipt, CommitError> {
        self.store
            .commit_under(commit, durability, Some(&self.lease))
            .await
    }

    async fn record_intent(
        &self,
        intent: &Intent,
        durability: Durability,
    ) -> Result<(), CommitError> {
        self.store
            .record_intent_under(intent, durability, Some(&self.lease))
            .await
    }

    async fn load(&self, run_id: &str) -> Result<RunRecord, CommitError> {
        self.store.load(run_id).await
    }

    async fn thread_state(&self, thread: &str) -> Result<BTreeMap<String, Value>, CommitError> {
        self.store.thread_state(thread).await
    }

    async fn runs(&self) -> Result<Vec<RunSummary>, CommitError> {
        self.store.runs().await
    }

    async fn delete_run(&self, run_id: &str) -> Result<(), CommitError> {
        Err(self.fenced(run_id))
    }

    async fn files(&self, run_id: &str) -> Result<Vec<StepFiles>, CommitError> {
        self.store.files(run_id).await
    }

    async fn published(&self, run_id: &str) -> Result<u64, CommitError> {
        self.store.published(run_id).await
    }

    async fn mark_published(&self, run_id: &str, seq: u64) -> Result<(), CommitError> {
        self.store
            .mark_published_under(run_id, seq, Some(&self.lease))
            .await
    }
}
