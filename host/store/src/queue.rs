//! The work queue of a Postgres store: which runs workers may drive, and the
//! lease by which one worker at a time drives each.
//!
//! A queued run is a row of `cordon_queue` whose status is one of
//! [`QueueStatus`]. A worker [claims](PostgresCommitStore::claim) the oldest
//! run that is runnable, or claimed by a worker whose lease lapsed, in one
//! statement that skips rows other workers are claiming at that moment
//! (`FOR UPDATE SKIP LOCKED`), and that raises the run's fencing token. The
//! [`Lease`] it gets back names that token; the worker writes the run only
//! through a [`LeasedStore`](crate::LeasedStore), whose every commit and intent
//! checks, inside its own transaction, that the row still holds the token
//! and an unexpired lease. A worker that stalls past its lease and wakes up
//! therefore commits nothing once another has claimed the run, and a
//! takeover never sees half of a step. Lease times are the server's clock,
//! so the workers' clocks never matter.

use std::collections::BTreeMap;
use std::time::Duration;

use cordon_kernel::{Approval, CommitError};
use deadpool_postgres::GenericClient;

use crate::postgres::{PostgresCommitStore, signed};

/// Where a queued run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueStatus {
    /// Any worker may claim it.
    Runnable,
    /// A worker holds its lease (which may have lapsed).
    Claimed,
    /// It waits on decisions; `runs resume --detach` makes it runnable.
    Waiting,
    /// It ended.
    Done,
    /// A worker could not drive it; the error says why.
    Failed,
}

impl QueueStatus {
    fn column(self) -> &'static str {
        match self {
            Self::Runnable => "runnable",
            Self::Claimed => "claimed",
            Self::Waiting => "waiting",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [
            Self::Runnable,
            Self::Claimed,
            Self::Waiting,
            Self::Done,
            Self::Failed,
        ]
        .into_iter()
        .find(|status| status.column() == text)
    }
}

impl std::fmt::Display for QueueStatus {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.column())
    }
}

/// A worker's claim on one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The run.
    pub run_id: String,
    /// The fencing token: raised by every claim, so a later claim's lease
    /// always carries a larger one.
    pub token: u64,
    /// The decisions `runs resume --detach` left for the calls the run waits on.
    pub decisions: BTreeMap<String, Approval>,
}

impl Lease {
    /// The refusal of a write to `run_id` under this lease.
    pub(crate) fn fenced(&self, run_id: &str) -> CommitError {
        CommitError::Fenced {
            run_id: run_id.to_owned(),
            token: self.token,
        }
    }

    /// Refuse a write to `run_id` unless it is this lease's run or a
    /// sub-agent's run in its tree, whose id is the root's followed by the
    /// delegating calls' (`RUN/call-2-1`): a worker drives a root run and
    /// its children under one lease.
    pub(crate) fn covers(&self, run_id: &str) -> Result<(), CommitError> {
        let in_tree = run_id
            .strip_prefix(self.run_id.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        if in_tree {
            Ok(())
        } else {
            Err(self.fenced(run_id))
        }
    }
}

/// What enqueueing a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enqueued {
    /// The run is runnable for any worker.
    Queued,
    /// A worker holds the run's lease; it was left as it is.
    Claimed {
        /// The worker.
        worker: String,
    },
}

/// How a worker leaves a run it drove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settlement {
    /// The run waits on decisions.
    Waiting,
    /// The run ended.
    Done,
    /// The worker could not drive the run, for this reason.
    Failed(String),
}

/// A run's place in the queue, as `runs list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedRun {
    /// The run.
    pub run_id: String,
    /// Where it stands.
    pub status: QueueStatus,
    /// The worker that holds or held its lease.
    pub worker: Option<String>,
    /// The token of its latest claim; 0 before the first.
    pub token: u64,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

impl PostgresCommitStore {
    /// Make run `run_id` runnable for any worker, with `decisions` for the
    /// calls it waits on, unless a worker holds an unexpired lease on it.
    pub async fn enqueue(
        &self,
        run_id: &str,
        decisions: &BTreeMap<String, Approval>,
    ) -> Result<Enqueued, CommitError> {
        let decisions = serde_json::to_string(decisions)
            .map_err(|error| CommitError::Storage(format!("encoding decisions: {error}")))?;
        let client = self.client().await?;
        let queued = client
            .execute(
                "INSERT INTO cordon_queue (run_id, status, decisions)
                 SELECT $1, 'runnable', $2 WHERE EXISTS (SELECT 1 FROM cordon_runs WHERE run_id = $1)
                 ON CONFLICT (run_id) DO UPDATE
                     SET status = 'runnable', decisions = excluded.decisions, worker = NULL,
                         lease_until = NULL, error = NULL, queued = clock_timestamp()
                     WHERE cordon_queue.status <> 'claimed'
                        OR cordon_queue.lease_until < clock_timestamp()",
                &[&run_id, &decisions],
            )
            .await
            .map_err(|error| self.failure("queueing a run", error))?;
        if queued == 1 {
            return Ok(Enqueued::Queued);
        }
        let row = client
            .query_opt(
                "SELECT worker FROM cordon_queue WHERE run_id = $1",
                &[&run_id],
            )
            .await
            .map_err(|error| self.failure("reading the queue", error))?
            .ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))?;
        Ok(Enqueued::Claimed {
            worker: row.get::<_, Option<String>>(0).unwrap_or_default(),
        })
    }

    /// Claim the oldest runnable run, or one whose worker's lease lapsed, for
    /// `worker` for `lease`; `None` when there is none.
    pub async fn claim(&self, worker: &str, lease: Duration) -> Result<Option<Lease>, CommitError> {
        let millis = signed(
            u64::try_from(lease.as_millis()).unwrap_or(u64::MAX),
            "lease",
        )?;
        let row = self
            .client()
            .await?
            .query_opt(
                "UPDATE cordon_queue
                 SET status = 'claimed', worker = $1, token = token + 1,
                     lease_until = clock_timestamp() + $2::BIGINT * interval '1 millisecond'
                 WHERE run_id = (
                     SELECT run_id FROM cordon_queue
                     WHERE status = 'runnable'
                        OR (status = 'claimed' AND lease_until < clock_timestamp())
                     ORDER BY queued, run_id
                     LIMIT 1
                     FOR UPDATE SKIP LOCKED
                 )
                 RETURNING run_id, token, decisions",
                &[&worker, &millis],
            )
            .await
            .map_err(|error| self.failure("claiming a run", error))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let run_id: String = row.get(0);
        let token = self.unsigned(row.get(1), || format!("run {run_id} fencing token"))?;
        let decisions = match row.get::<_, Option<&str>>(2) {
            Some(text) => self.decode(text, || format!("run {run_id} queued decisions"))?,
            None => BTreeMap::new(),
        };
        Ok(Some(Lease {
            run_id,
            token,
            decisions,
        }))
    }

    /// Extend `lease` by `by` from now; `false` when it is no longer held
    /// (it lapsed, or another worker claimed the run).
    pub async fn renew(&self, lease: &Lease, by: Duration) -> Result<bool, CommitError> {
        let millis = signed(u64::try_from(by.as_millis()).unwrap_or(u64::MAX), "lease")?;
        let token = signed(lease.token, "fencing token")?;
        let renewed = self
            .client()
            .await?
            .execute(
                "UPDATE cordon_queue
                 SET lease_until = clock_timestamp() + $3::BIGINT * interval '1 millisecond'
                 WHERE run_id = $1 AND token = $2 AND status = 'claimed'
                   AND lease_until > clock_timestamp()",
                &[&lease.run_id, &token, &millis],
            )
            .await
            .map_err(|error| self.failure("renewing a lease", error))?;
        Ok(renewed == 1)
    }

    /// Give up `lease`, leaving the run as `settlement` says; `false` when the
    /// lease was no longer held, so the run was left to its new holder.
    pub async fn settle(
        &self,
        lease: &Lease,
        settlement: &Settlement,
    ) -> Result<bool, CommitError> {
        let token = signed(lease.token, "fencing token")?;
        let (status, error) = match settlement {
            Settlement::Waiting => (QueueStatus::Waiting, None),
            Settlement::Done => (QueueStatus::Done, None),
            Settlement::Failed(reason) => (QueueStatus::Failed, Some(reason.as_str())),
        };
        let settled = self
            .client()
            .await?
            .execute(
                "UPDATE cordon_queue
                 SET status = $3, decisions = NULL, lease_until = NULL, error = $4
                 WHERE run_id = $1 AND token = $2 AND status = 'claimed'",
                &[&lease.run_id, &token, &status.column(), &error],
            )
            .await
            .map_err(|error| self.failure("settling a run", error))?;
        Ok(settled == 1)
    }

    /// Every queued run, oldest first.
    pub async fn queue(&self) -> Result<Vec<QueuedRun>, CommitError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT run_id, status, worker, token, error FROM cordon_queue
                 ORDER BY queued, run_id",
                &[],
            )
            .await
            .map_err(|error| self.failure("reading the queue", error))?;
        rows.iter().map(|row| self.queued_run(row)).collect()
    }

    /// Where run `run_id` stands in the queue; `None` when it was never
    /// queued.
    pub async fn queued(&self, run_id: &str) -> Result<Option<QueuedRun>, CommitError> {
        self.client()
            .await?
            .query_opt(
                "SELECT run_id, status, worker, token, error FROM cordon_queue WHERE run_id = $1",
                &[&run_id],
            )
            .await
            .map_err(|error| self.failure("reading the queue", error))?
            .map(|row| self.queued_run(&row))
            .transpose()
    }

    /// A queue row as selected by [`Self::queue`].
    fn queued_run(&self, row: &tokio_postgres::Row) -> Result<QueuedRun, CommitError> {
        let run_id: String = row.get(0);
        let status: &str = row.get(1);
        let status = QueueStatus::parse(status).ok_or_else(|| {
            self.corrupt(
                &format!("run {run_id} queue status"),
                format!("unknown status {status:?}"),
            )
        })?;
        Ok(QueuedRun {
            token: self.unsigned(row.get(3), || format!("run {run_id} fencing token"))?,
            status,
            worker: row.get(2),
            error: row.get(4),
            run_id,
        })
    }

    /// Refuse, inside `transaction`, a write to `run_id` under `lease` unless
    /// the lease still holds: same run, same token, claimed, not lapsed. The
    /// row stays share-locked until the transaction ends, so no claim can
    /// take the run over between this check and the commit.
    pub(crate) async fn check_lease(
        &self,
        transaction: &impl GenericClient,
        run_id: &str,
        lease: &Lease,
    ) -> Result<(), CommitError> {
        lease.covers(run_id)?;
        let token = signed(lease.token, "fencing token")?;
        transaction
            .query_opt(
                "SELECT 1 FROM cordon_queue
                 WHERE run_id = $1 AND token = $2 AND status = 'claimed'
                   AND lease_until > clock_timestamp()
                 FOR SHARE",
                &[&lease.run_id, &token],
            )
            .await
            .map_err(|error| self.failure("checking the lease", error))?
            .map(drop)
            .ok_or_else(|| lease.fenced(run_id))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::time::Duration;

    use cordon_kernel::{Approval, CommitError, CommitStore, Durability, ParentLink};

    use super::{Enqueued, QueueStatus, Settlement};
    use crate::conformance::{header, intent, step};
    use crate::postgres::tests::server_schema;
    use crate::{LeasedStore, PostgresCommitStore};

    /// A store in a schema of its own holding run `r` with its first step
    /// committed and queued, or `None` when the test is skipped.
    async fn queued(test: &str, schema: &str) -> Option<(String, Arc<PostgresCommitStore>)> {
        let (url, _client) = server_schema(test, schema).await?;
        let store = Arc::new(PostgresCommitStore::connect(&url).await.unwrap());
        store.create_run(&header("r", 1)).await.unwrap();
        store
            .commit(&step("r", 1, "go", Vec::new()), Durability::Disk)
            .await
            .unwrap();
        assert_eq!(
            store.enqueue("r", &BTreeMap::new()).await.unwrap(),
            Enqueued::Queued
        );
        Some((url, store))
    }

    const LONG: Duration = Duration::from_secs(60);

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn of_workers_racing_for_one_run_exactly_one_claims_it() {
        let Some((url, _store)) = queued("racing claims", "cordon_claims").await else {
            return;
        };
        let racers: Vec<_> = (0..8)
            .map(|racer| {
                let url = url.clone();
                tokio::spawn(async move {
                    let store = PostgresCommitStore::connect(&url).await.unwrap();
                    store.claim(&format!("w{racer}"), LONG).await.unwrap()
                })
            })
            .collect();
        let mut claims = Vec::new();
        for racer in racers {
            claims.extend(racer.await.unwrap());
        }
        assert_eq!(claims.len(), 1, "{claims:?}");
        assert_eq!(claims[0].run_id, "r");
        assert_eq!(claims[0].token, 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_worker_whose_lease_lapsed_commits_nothing_once_another_claims_the_run() {
        let Some((_url, store)) = queued("a lapsed lease", "cordon_lapsed").await else {
            return;
        };
        let first = store
            .claim("stalled", Duration::from_millis(300))
            .await
            .unwrap()
            .unwrap();
        let stalled = LeasedStore::new(store.clone(), first.clone());
        stalled
            .commit(&step("r", 2, "while held", Vec::new()), Durability::Disk)
            .await
            .unwrap();
        assert!(store.claim("eager", LONG).await.unwrap().is_none());
        tokio::time::sleep(Duration::from_millis(400)).await;
        let fenced = |error: CommitError| {
            assert_eq!(
                error,
                CommitError::Fenced {
                    run_id: "r".into(),
                    token: 1
                }
            );
        };
        // Lapsed: refused even before anyone else claims the run.
        fenced(
            stalled
                .commit(&step("r", 3, "late", Vec::new()), Durability::Disk)
                .await
                .unwrap_err(),
        );
        assert!(!store.renew(&first, LONG).await.unwrap());
        let second = store.claim("taker", LONG).await.unwrap().unwrap();
        assert_eq!(second.token, 2);
        let taker = LeasedStore::new(store.clone(), second.clone());
        fenced(
            stalled
                .record_intent(&intent("r", 3), Durability::Disk)
                .await
                .unwrap_err(),
        );
        fenced(stalled.mark_published("r", 2).await.unwrap_err());
        fenced(
            stalled
                .commit(&step("r", 3, "late", Vec::new()), Durability::Disk)
                .await
                .unwrap_err(),
        );
        taker
            .record_intent(&intent("r", 3), Durability::Disk)
            .await
            .unwrap();
        taker
            .commit(&step("r", 3, "taken over", Vec::new()), Durability::Disk)
            .await
            .unwrap();
        assert!(!store.settle(&first, &Settlement::Done).await.unwrap());
        assert!(store.renew(&second, LONG).await.unwrap());
        assert!(store.settle(&second, &Settlement::Done).await.unwrap());
        let record = store.load("r").await.unwrap();
        assert_eq!(record.last_seq(), 3);
        assert!(record.intent.is_none());
        let queue = store.queue().await.unwrap();
        assert_eq!(queue.len(), 1);
        assert_eq!(queue[0].status, QueueStatus::Done);
        assert_eq!(queue[0].worker.as_deref(), Some("taker"));
        assert_eq!(queue[0].token, 2);
        // A settled run is no longer claimable.
        assert!(store.claim("late", LONG).await.unwrap().is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lease_writes_only_its_runs_tree_and_creates_only_sub_agents_runs_in_it() {
        let Some((_url, store)) = queued("a lease's reach", "cordon_reach").await else {
            return;
        };
        store.create_run(&header("other", 2)).await.unwrap();
        store.create_run(&header("r-2", 2)).await.unwrap();
        let lease = store.claim("w", LONG).await.unwrap().unwrap();
        let leased = LeasedStore::new(store.clone(), lease.clone());
        let child = |run_id: &str, root: &str| {
            let mut child = header(run_id, 3);
            child.parent = Some(ParentLink {
                run_id: root.into(),
                seq: 2,
                call_id: "call-1-1".into(),
                root: root.into(),
                depth: 1,
            });
            child
        };
        leased.create_run(&child("r/call-1-1", "r")).await.unwrap();
        leased
            .commit(
                &step("r/call-1-1", 1, "the child's", Vec::new()),
                Durability::Disk,
            )
            .await
            .unwrap();
        leased
            .record_intent(&intent("r/call-1-1", 2), Durability::Disk)
            .await
            .unwrap();
        for error in [
            leased
                .commit(&step("other", 1, "not mine", Vec::new()), Durability::Disk)
                .await
                .unwrap_err(),
            leased
                .commit(
                    &step("r-2", 1, "a prefix is not a tree", Vec::new()),
                    Durability::Disk,
                )
                .await
                .unwrap_err(),
            leased.create_run(&header("new", 3)).await.unwrap_err(),
            leased.create_run(&header("r/forged", 3)).await.unwrap_err(),
            leased
                .create_run(&child("other/call-1-1", "other"))
                .await
                .unwrap_err(),
            leased.delete_run("other").await.unwrap_err(),
        ] {
            assert!(matches!(error, CommitError::Fenced { .. }), "{error}");
        }
        assert_eq!(store.load("other").await.unwrap().last_seq(), 0);
        assert_eq!(store.runs().await.unwrap().len(), 4);

        assert!(store.settle(&lease, &Settlement::Done).await.unwrap());
        let after = leased
            .commit(
                &step("r/call-1-1", 2, "after", Vec::new()),
                Durability::Disk,
            )
            .await
            .unwrap_err();
        assert!(matches!(after, CommitError::Fenced { .. }), "{after}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn decisions_travel_with_the_claim_and_a_held_run_is_not_requeued() {
        let Some((_url, store)) = queued("queued decisions", "cordon_decisions").await else {
            return;
        };
        let lease = store.claim("w", LONG).await.unwrap().unwrap();
        assert!(lease.decisions.is_empty());
        let decisions = BTreeMap::from([("call-1".to_owned(), Approval::Approve)]);
        assert_eq!(
            store.enqueue("r", &decisions).await.unwrap(),
            Enqueued::Claimed { worker: "w".into() }
        );
        assert!(store.settle(&lease, &Settlement::Waiting).await.unwrap());
        assert!(store.claim("w", LONG).await.unwrap().is_none());
        assert_eq!(
            store.enqueue("r", &decisions).await.unwrap(),
            Enqueued::Queued
        );
        let again = store.claim("w2", LONG).await.unwrap().unwrap();
        assert_eq!(again.decisions, decisions);
        assert_eq!(again.token, 2);
        assert!(
            store
                .settle(&again, &Settlement::Failed("no model".into()))
                .await
                .unwrap()
        );
        let queue = store.queue().await.unwrap();
        assert_eq!(queue[0].status, QueueStatus::Failed);
        assert_eq!(queue[0].error.as_deref(), Some("no model"));
        assert_eq!(store.queued("r").await.unwrap().as_ref(), queue.first());
        store.create_run(&header("never", 2)).await.unwrap();
        assert_eq!(store.queued("never").await.unwrap(), None);
        assert_eq!(
            store
                .enqueue("missing", &BTreeMap::new())
                .await
                .unwrap_err(),
            CommitError::UnknownRun("missing".into())
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_version_1_database_gains_the_queue_and_the_parent_link_and_keeps_its_runs() {
        let Some((url, client)) = server_schema("upgrade from version 1", "cordon_upgrade").await
        else {
            return;
        };
        let store = PostgresCommitStore::connect(&url).await.unwrap();
        store.create_run(&header("old", 1)).await.unwrap();
        store
            .commit(&step("old", 1, "kept", Vec::new()), Durability::Disk)
            .await
            .unwrap();
        drop(store);
        let schema = format!("cordon_upgrade_{}", std::process::id());
        client
            .batch_execute(&format!(
                "DROP TABLE {schema}.cordon_queue; \
                 ALTER TABLE {schema}.cordon_runs DROP COLUMN parent; \
                 UPDATE {schema}.cordon_schema SET version = 1"
            ))
            .await
            .unwrap();
        let store = PostgresCommitStore::connect(&url).await.unwrap();
        let old = store.load("old").await.unwrap();
        assert_eq!(old.last_seq(), 1);
        assert_eq!(old.header.parent, None);
        assert_eq!(
            store.enqueue("old", &BTreeMap::new()).await.unwrap(),
            Enqueued::Queued
        );
        let version: i32 = client
            .query_one(&format!("SELECT version FROM {schema}.cordon_schema"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(version, 3);
    }
}
