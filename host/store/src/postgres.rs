//! Run commits in a Postgres database: the [`CommitStore`] that several Cordon
//! processes on several machines share.
//!
//! [`PostgresCommitStore`] keeps a pool of connections to one database and its
//! tables, all named `cordon_*` so that they can live beside an application's
//! own. Cordon creates them and upgrades them: `cordon_schema` holds the schema
//! version, every upgrade runs under a transaction-scoped advisory lock, and a
//! database whose schema is newer than this build is refused as
//! [`CommitError::Corrupt`] and left untouched.
//!
//! # Schema (version 3)
//!
//! ```sql
//! cordon_runs         (run_id TEXT PRIMARY KEY, agent TEXT, created BIGINT,
//!                      metadata TEXT, thread TEXT, last_seq BIGINT, published BIGINT,
//!                      parent TEXT)
//! cordon_steps        (run_id → cordon_runs, seq BIGINT, body TEXT, PRIMARY KEY (run_id, seq))
//! cordon_intents      (run_id PRIMARY KEY → cordon_runs, seq BIGINT, body TEXT)
//! cordon_state        (run_id → cordon_runs, key TEXT, value TEXT, PRIMARY KEY (run_id, key))
//! cordon_thread_state (thread TEXT, key TEXT, value TEXT, PRIMARY KEY (thread, key))
//! cordon_file_changes (run_id → cordon_runs, seq BIGINT, path TEXT, before_kind TEXT,
//!                      before BYTEA, after_kind TEXT, after BYTEA, PRIMARY KEY (run_id, seq, path))
//! cordon_queue        (run_id PRIMARY KEY → cordon_runs, status TEXT, decisions TEXT, worker TEXT,
//!                      token BIGINT, lease_until TIMESTAMPTZ, queued TIMESTAMPTZ, error TEXT)
//! ```
//!
//! Version 2 added `cordon_queue`, the work queue of [`crate::queue`];
//! version 3 added `cordon_runs.parent`, the JSON of a sub-agent's run's
//! [`ParentLink`] (`NULL` for a run of its own).
//!
//! Bodies are the same JSON the SQLite store keeps, as text, so that a row
//! that no longer decodes is reported naming its run and step rather than
//! rejected by the column type.
//!
//! A step commit is one transaction that first locks the run's row
//! (`SELECT … FOR UPDATE`), so commits of one run are serialized by the
//! database whichever process makes them: it checks the step number against
//! `cordon_runs.last_seq`, applies the state writes (a thread's state under a
//! transaction-scoped advisory lock on the thread), inserts the step and its
//! file changes, clears the intent and advances `last_seq`, or does none of
//! it. A step that writes no state and no files commits in one statement
//! instead, which advances `last_seq` only from the step before (taking the
//! same row lock) and inserts the step and clears the intent with it. Reads
//! run in one `REPEATABLE READ` snapshot. A commit or an intent recorded with
//! [`Durability::Process`] commits with `synchronous_commit = off` (a step
//! commit then always in a transaction, where the setting applies): every
//! session sees it at once, and the server's WAL writer takes it to disk
//! within three times its `wal_writer_delay`, or the next synchronous commit
//! sooner.
//! A write under a [`Lease`] checks the lease in the same transaction (the
//! one statement included) with the run's queue row share-locked.

use std::collections::{BTreeMap, BTreeSet};

use cordon_kernel::commit::check_sequence;
use cordon_kernel::{
    CommitError, CommitStore, Disposition, Durability, FileChange, Intent, ParentLink, Receipt,
    RunHeader, RunRecord, RunSummary, StateWrite, StepCommit, StepFiles, apply_writes,
};
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_postgres::error::SqlState;
use tokio_postgres::{IsolationLevel, NoTls, Transaction};

use crate::files;
use crate::header::HeaderColumns;
use crate::owner::Owner;
use crate::queue::Lease;

/// The schema this build reads and writes.
const SCHEMA_VERSION: i32 = 3;

/// The advisory lock that serializes schema upgrades ("CRDN").
const SCHEMA_LOCK: i64 = 0x4352_444E;

/// Connections a store keeps open at most.
const POOL_SIZE: usize = 16;

/// Each upgrade, in order: entry `n` takes the schema from version `n` to
/// `n + 1`, so a new database runs them all.
const UPGRADES: &[&str] = &[
    "
CREATE TABLE cordon_runs (
    run_id    TEXT   NOT NULL PRIMARY KEY,
    agent     TEXT   NOT NULL,
    created   BIGINT NOT NULL,
    metadata  TEXT   NOT NULL,
    thread    TEXT   NOT NULL,
    last_seq  BIGINT NOT NULL DEFAULT 0,
    published BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX cordon_runs_by_age ON cordon_runs (created, run_id);
CREATE TABLE cordon_steps (
    run_id TEXT   NOT NULL REFERENCES cordon_runs (run_id) ON DELETE CASCADE,
    seq    BIGINT NOT NULL CHECK (seq >= 1),
    body   TEXT   NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE cordon_intents (
    run_id TEXT   NOT NULL PRIMARY KEY REFERENCES cordon_runs (run_id) ON DELETE CASCADE,
    seq    BIGINT NOT NULL,
    body   TEXT   NOT NULL
);
CREATE TABLE cordon_state (
    run_id TEXT NOT NULL REFERENCES cordon_runs (run_id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE TABLE cordon_thread_state (
    thread TEXT NOT NULL,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (thread, key)
);
CREATE TABLE cordon_file_changes (
    run_id      TEXT   NOT NULL REFERENCES cordon_runs (run_id) ON DELETE CASCADE,
    seq         BIGINT NOT NULL,
    path        TEXT   NOT NULL,
    before_kind TEXT   NOT NULL,
    before      BYTEA,
    after_kind  TEXT   NOT NULL,
    after       BYTEA,
    PRIMARY KEY (run_id, seq, path)
);
",
    "
CREATE TABLE cordon_queue (
    run_id      TEXT        NOT NULL PRIMARY KEY REFERENCES cordon_runs (run_id) ON DELETE CASCADE,
    status      TEXT        NOT NULL
                CHECK (status IN ('runnable', 'claimed', 'waiting', 'done', 'failed')),
    decisions   TEXT,
    worker      TEXT,
    token       BIGINT      NOT NULL DEFAULT 0,
    lease_until TIMESTAMPTZ,
    queued      TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    error       TEXT
);
CREATE INDEX cordon_queue_claimable ON cordon_queue (queued, run_id)
    WHERE status IN ('runnable', 'claimed');
",
    "
ALTER TABLE cordon_runs ADD COLUMN parent TEXT;
",
];

/// A [`CommitStore`] in a Postgres database.
pub struct PostgresCommitStore {
    pool: Pool,
    location: String,
}

impl std::fmt::Debug for PostgresCommitStore {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PostgresCommitStore")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

/// The SQL of this store for the state rows of an [`Owner`].
trait OwnerSql {
    fn select(&self) -> &'static str;
    fn upsert(&self) -> &'static str;
    fn delete(&self) -> &'static str;
}

impl OwnerSql for Owner<'_> {
    fn select(&self) -> &'static str {
        match self {
            Self::Run(_) => {
                "SELECT key, value FROM cordon_state WHERE run_id = $1 AND key = ANY($2)"
            }
            Self::Thread(_) => {
                "SELECT key, value FROM cordon_thread_state WHERE thread = $1 AND key = ANY($2)"
            }
        }
    }

    fn upsert(&self) -> &'static str {
        match self {
            Self::Run(_) => {
                "INSERT INTO cordon_state (run_id, key, value) VALUES ($1, $2, $3)
                 ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value"
            }
            Self::Thread(_) => {
                "INSERT INTO cordon_thread_state (thread, key, value) VALUES ($1, $2, $3)
                 ON CONFLICT (thread, key) DO UPDATE SET value = excluded.value"
            }
        }
    }

    fn delete(&self) -> &'static str {
        match self {
            Self::Run(_) => "DELETE FROM cordon_state WHERE run_id = $1 AND key = $2",
            Self::Thread(_) => "DELETE FROM cordon_thread_state WHERE thread = $1 AND key = $2",
        }
    }
}

impl PostgresCommitStore {
    /// Connect to the database at `url` (`postgres://user@host:port/db`, with
    /// any of libpq's URL parameters), creating or upgrading Cordon's tables.
    pub async fn connect(url: &str) -> Result<Self, CommitError> {
        let location = without_password(url);
        let config: tokio_postgres::Config = url.parse().map_err(|error| {
            CommitError::Storage(format!("the store URL {location} is not valid: {error}"))
        })?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .build()
            .map_err(|error| CommitError::Storage(format!("{location}: {error}")))?;
        let store = Self { pool, location };
        store.migrate().await?;
        Ok(store)
    }

    /// Where the store is, without its password.
    pub fn location(&self) -> &str {
        &self.location
    }

    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, CommitError> {
        self.pool.get().await.map_err(|error| {
            let said = match &error {
                deadpool_postgres::PoolError::Backend(error) => detail(error),
                other => chain(other),
            };
            CommitError::Storage(format!("{}: connecting: {said}", self.location))
        })
    }

    pub(crate) fn failure(&self, action: &str, error: tokio_postgres::Error) -> CommitError {
        CommitError::Storage(format!("{}: {action}: {}", self.location, detail(&error)))
    }

    pub(crate) fn corrupt(&self, what: &str, message: impl std::fmt::Display) -> CommitError {
        CommitError::Corrupt {
            location: format!("{}: {what}", self.location),
            message: message.to_string(),
        }
    }

    pub(crate) fn decode<T: DeserializeOwned>(
        &self,
        text: &str,
        what: impl FnOnce() -> String,
    ) -> Result<T, CommitError> {
        serde_json::from_str(text).map_err(|error| self.corrupt(&what(), error))
    }

    pub(crate) fn unsigned(
        &self,
        value: i64,
        what: impl FnOnce() -> String,
    ) -> Result<u64, CommitError> {
        u64::try_from(value).map_err(|_| self.corrupt(&what(), format!("negative number {value}")))
    }

    /// Decode the step stored at `seq` of `run_id`, checking it says so itself.
    fn step(&self, run_id: &str, seq: i64, body: &str) -> Result<StepCommit, CommitError> {
        let what = || format!("run {run_id} step {seq}");
        let commit: StepCommit = self.decode(body, what)?;
        if commit.run_id != run_id || i64::try_from(commit.seq) != Ok(seq) {
            return Err(self.corrupt(
                &what(),
                format!("the row holds run {} step {}", commit.run_id, commit.seq),
            ));
        }
        Ok(commit)
    }

    /// Create the tables, or bring them up to [`SCHEMA_VERSION`], in one
    /// transaction that holds the schema lock; refuse a newer schema.
    async fn migrate(&self) -> Result<(), CommitError> {
        let mut client = self.client().await?;
        let transaction = client
            .transaction()
            .await
            .map_err(|error| self.failure("starting the schema check", error))?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await
            .map_err(|error| self.failure("locking the schema", error))?;
        let exists: bool = transaction
            .query_one("SELECT to_regclass('cordon_schema') IS NOT NULL", &[])
            .await
            .map_err(|error| self.failure("reading the schema version", error))?
            .get(0);
        let version: i32 = if exists {
            transaction
                .query_one("SELECT coalesce(max(version), 0) FROM cordon_schema", &[])
                .await
                .map_err(|error| self.failure("reading the schema version", error))?
                .get(0)
        } else {
            0
        };
        if version > SCHEMA_VERSION {
            return Err(self.corrupt(
                "the cordon_* tables",
                format!(
                    "schema version {version} is newer than this build of Cordon reads \
                     ({SCHEMA_VERSION}); the database is left untouched"
                ),
            ));
        }
        if version == SCHEMA_VERSION {
            return Ok(());
        }
        if !exists {
            transaction
                .batch_execute("CREATE TABLE cordon_schema (version INTEGER NOT NULL)")
                .await
                .map_err(|error| self.failure("creating the schema", error))?;
        }
        let from = usize::try_from(version).unwrap_or_default();
        for upgrade in &UPGRADES[from..] {
            transaction
                .batch_execute(upgrade)
                .await
                .map_err(|error| self.failure("upgrading the schema", error))?;
        }
        transaction
            .execute("DELETE FROM cordon_schema", &[])
            .await
            .map_err(|error| self.failure("recording the schema version", error))?;
        transaction
            .execute(
                "INSERT INTO cordon_schema (version) VALUES ($1)",
                &[&SCHEMA_VERSION],
            )
            .await
            .map_err(|error| self.failure("recording the schema version", error))?;
        transaction
            .commit()
            .await
            .map_err(|error| self.failure("committing the schema", error))
    }

    /// A read-only transaction that sees one snapshot.
    async fn snapshot<'a>(
        &self,
        client: &'a mut deadpool_postgres::Object,
    ) -> Result<deadpool_postgres::Transaction<'a>, CommitError> {
        client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(|error| self.failure("starting a read", error))
    }

    async fn header(
        &self,
        client: &impl GenericClient,
        run_id: &str,
    ) -> Result<RunHeader, CommitError> {
        let row = client
            .query_opt(
                "SELECT agent, created, metadata, thread, parent FROM cordon_runs WHERE run_id = $1",
                &[&run_id],
            )
            .await
            .map_err(|error| self.failure("reading a run", error))?
            .ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))?;
        Ok(RunHeader {
            run_id: run_id.to_owned(),
            agent: row.get(0),
            created: self.unsigned(row.get(1), || format!("run {run_id}"))?,
            thread: row.get(3),
            metadata: self.decode(row.get(2), || format!("run {run_id} metadata"))?,
            parent: self.parent(run_id, row.get(4))?,
        })
    }

    /// The parent link stored as `parent` for run `run_id`.
    fn parent(
        &self,
        run_id: &str,
        parent: Option<&str>,
    ) -> Result<Option<ParentLink>, CommitError> {
        parent
            .map(|parent| self.decode(parent, || format!("run {run_id} parent")))
            .transpose()
    }

    async fn require_run(
        &self,
        client: &impl GenericClient,
        run_id: &str,
    ) -> Result<(), CommitError> {
        client
            .query_opt("SELECT 1 FROM cordon_runs WHERE run_id = $1", &[&run_id])
            .await
            .map_err(|error| self.failure("looking up a run", error))?
            .map(drop)
            .ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))
    }

    /// Apply `writes` to the stored state of `owner`, all or nothing, inside
    /// `transaction`.
    async fn apply_to(
        &self,
        transaction: &Transaction<'_>,
        owner: Owner<'_>,
        writes: &[StateWrite],
        what: impl FnOnce() -> String,
    ) -> Result<(), CommitError> {
        if writes.is_empty() {
            return Ok(());
        }
        let keys: BTreeSet<&str> = writes.iter().map(|write| write.key.as_str()).collect();
        let wanted: Vec<&str> = keys.iter().copied().collect();
        let rows = transaction
            .query(owner.select(), &[&owner.id(), &wanted])
            .await
            .map_err(|error| self.failure("reading state", error))?;
        let mut values = BTreeMap::new();
        for row in rows {
            let key: String = row.get(0);
            let value: Value = self.decode(row.get(1), || owner.describe(&key))?;
            values.insert(key, value);
        }
        apply_writes(&mut values, writes)
            .map_err(|error| CommitError::Storage(format!("{}: {error}", what())))?;
        for key in keys {
            match values.get(key) {
                Some(value) => {
                    transaction
                        .execute(owner.upsert(), &[&owner.id(), &key, &value.to_string()])
                        .await
                }
                None => {
                    transaction
                        .execute(owner.delete(), &[&owner.id(), &key])
                        .await
                }
            }
            .map_err(|error| self.failure("writing state", error))?;
        }
        Ok(())
    }

    async fn insert_files(
        &self,
        transaction: &Transaction<'_>,
        run_id: &str,
        seq: i64,
        changes: &[FileChange],
    ) -> Result<(), CommitError> {
        if changes.is_empty() {
            return Ok(());
        }
        let statement = transaction
            .prepare(
                "INSERT INTO cordon_file_changes
                     (run_id, seq, path, before_kind, before, after_kind, after)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .await
            .map_err(|error| self.failure("recording file changes", error))?;
        for change in changes {
            let (before_kind, before) = files::encode(&change.before);
            let (after_kind, after) = files::encode(&change.after);
            transaction
                .execute(
                    &statement,
                    &[
                        &run_id,
                        &seq,
                        &change.path,
                        &before_kind,
                        &before,
                        &after_kind,
                        &after,
                    ],
                )
                .await
                .map_err(|error| self.failure("recording file changes", error))?;
        }
        Ok(())
    }

    /// Commit a step that writes no state and no files in one statement, one
    /// round trip: advancing `last_seq` from the step before locks the run's
    /// row, and the step and the cleared intent go with it or not at all.
    /// Under a lease, the statement advances the run only while the lease
    /// holds, and share-locks its queue row meanwhile. A step that cannot
    /// follow is then told apart: lost lease, unknown run, taken step or
    /// skipped one.
    async fn commit_step_alone(
        &self,
        client: &deadpool_postgres::Object,
        commit: &StepCommit,
        (seq, body): (i64, &str),
        lease: Option<&Lease>,
    ) -> Result<Receipt, CommitError> {
        let run_id = commit.run_id.as_str();
        let inserted = match lease {
            None => {
                client
                    .execute(
                        "WITH run AS (
                             UPDATE cordon_runs SET last_seq = $2::BIGINT
                             WHERE run_id = $1 AND last_seq = $2::BIGINT - 1
                             RETURNING run_id
                         ), cleared AS (
                             DELETE FROM cordon_intents WHERE run_id IN (SELECT run_id FROM run)
                         )
                         INSERT INTO cordon_steps (run_id, seq, body)
                         SELECT run_id, $2::BIGINT, $3 FROM run",
                        &[&run_id, &seq, &body],
                    )
                    .await
            }
            Some(lease) => {
                lease.covers(run_id)?;
                let token = signed(lease.token, "fencing token")?;
                client
                    .execute(
                        "WITH fence AS (
                             SELECT run_id FROM cordon_queue
                             WHERE run_id = $5 AND token = $4 AND status = 'claimed'
                               AND lease_until > clock_timestamp()
                             FOR SHARE
                         ), run AS (
                             UPDATE cordon_runs SET last_seq = $2::BIGINT
                             WHERE run_id = $1 AND EXISTS (SELECT 1 FROM fence)
                               AND last_seq = $2::BIGINT - 1
                             RETURNING run_id
                         ), cleared AS (
                             DELETE FROM cordon_intents WHERE run_id IN (SELECT run_id FROM run)
                         )
                         INSERT INTO cordon_steps (run_id, seq, body)
                         SELECT run_id, $2::BIGINT, $3 FROM run",
                        &[&run_id, &seq, &body, &token, &lease.run_id],
                    )
                    .await
            }
        }
        .map_err(|error| self.step_failure(commit, "committing a step", error))?;
        if inserted == 1 {
            return Ok(Receipt { seq: commit.seq });
        }
        if let Some(lease) = lease {
            self.check_lease(client, run_id, lease).await?;
        }
        let row = client
            .query_opt(
                "SELECT last_seq FROM cordon_runs WHERE run_id = $1",
                &[&run_id],
            )
            .await
            .map_err(|error| self.failure("reading the last step", error))?
            .ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))?;
        check_sequence(
            commit,
            self.unsigned(row.get(0), || format!("run {run_id}"))?,
        )?;
        Err(CommitError::Conflict {
            run_id: run_id.to_owned(),
            seq: commit.seq,
        })
    }

    /// Why inserting `commit`'s step failed: a row of that step already
    /// there is a [`CommitError::Conflict`].
    fn step_failure(
        &self,
        commit: &StepCommit,
        action: &str,
        error: tokio_postgres::Error,
    ) -> CommitError {
        if error.code() == Some(&SqlState::UNIQUE_VIOLATION) {
            CommitError::Conflict {
                run_id: commit.run_id.clone(),
                seq: commit.seq,
            }
        } else {
            self.failure(action, error)
        }
    }

    /// Create the sub-agent's run `header` in the tree `lease` holds, in one
    /// transaction with the check that it still holds.
    pub(crate) async fn create_run_under(
        &self,
        header: &RunHeader,
        lease: &Lease,
    ) -> Result<(), CommitError> {
        let mut client = self.client().await?;
        let transaction = client
            .transaction()
            .await
            .map_err(|error| self.failure("creating a run", error))?;
        self.check_lease(&transaction, &header.run_id, lease)
            .await?;
        self.insert_run(&transaction, header).await?;
        transaction
            .commit()
            .await
            .map_err(|error| self.failure("creating a run", error))
    }

    async fn insert_run(
        &self,
        client: &impl GenericClient,
        header: &RunHeader,
    ) -> Result<(), CommitError> {
        let created = signed(header.created, "creation time")?;
        let HeaderColumns { metadata, parent } = HeaderColumns::of(header)?;
        let inserted = client
            .execute(
                "INSERT INTO cordon_runs (run_id, agent, created, metadata, thread, parent)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (run_id) DO NOTHING",
                &[
                    &header.run_id,
                    &header.agent,
                    &created,
                    &metadata,
                    &header.thread,
                    &parent,
                ],
            )
            .await
            .map_err(|error| self.failure("creating a run", error))?;
        if inserted == 0 {
            return Err(CommitError::DuplicateRun(header.run_id.clone()));
        }
        Ok(())
    }

    /// Commit `commit`, refused unless `lease` (when given) still holds.
    pub(crate) async fn commit_under(
        &self,
        commit: &StepCommit,
        durability: Durability,
        lease: Option<&Lease>,
    ) -> Result<Receipt, CommitError> {
        let run_id = commit.run_id.as_str();
        let (body, seq) = Self::encode_step(commit)?;
        let mut client = self.client().await?;
        if durability == Durability::Disk
            && commit.state.is_empty()
            && commit.thread_state.is_empty()
            && commit.files.is_empty()
        {
            return self
                .commit_step_alone(&client, commit, (seq, &body), lease)
                .await;
        }
        let transaction = client
            .transaction()
            .await
            .map_err(|error| self.failure("starting a commit", error))?;
        if durability == Durability::Process {
            transaction
                .batch_execute("SET LOCAL synchronous_commit = off")
                .await
                .map_err(|error| self.failure("committing a step", error))?;
        }
        if let Some(lease) = lease {
            self.check_lease(&transaction, run_id, lease).await?;
        }
        let row = transaction
            .query_opt(
                "SELECT thread, last_seq FROM cordon_runs WHERE run_id = $1 FOR UPDATE",
                &[&run_id],
            )
            .await
            .map_err(|error| self.failure("locking the run", error))?
            .ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))?;
        let thread: String = row.get(0);
        let last = self.unsigned(row.get(1), || format!("run {run_id}"))?;
        check_sequence(commit, last)?;
        let what = || format!("run {run_id} step {}", commit.seq);
        self.apply_to(&transaction, Owner::Run(run_id), &commit.state, what)
            .await?;
        if !commit.thread_state.is_empty() {
            transaction
                .execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                    &[&thread],
                )
                .await
                .map_err(|error| self.failure("locking the thread state", error))?;
            self.apply_to(
                &transaction,
                Owner::Thread(&thread),
                &commit.thread_state,
                what,
            )
            .await?;
        }
        transaction
            .execute(
                "INSERT INTO cordon_steps (run_id, seq, body) VALUES ($1, $2, $3)",
                &[&run_id, &seq, &body],
            )
            .await
            .map_err(|error| self.step_failure(commit, "inserting a step", error))?;
        self.insert_files(&transaction, run_id, seq, &commit.files)
            .await?;
        transaction
            .execute("DELETE FROM cordon_intents WHERE run_id = $1", &[&run_id])
            .await
            .map_err(|error| self.failure("clearing the intent", error))?;
        transaction
            .execute(
                "UPDATE cordon_runs SET last_seq = $2 WHERE run_id = $1",
                &[&run_id, &seq],
            )
            .await
            .map_err(|error| self.failure("advancing the run", error))?;
        transaction
            .commit()
            .await
            .map_err(|error| self.failure("committing a step", error))?;
        Ok(Receipt { seq: commit.seq })
    }

    /// Record `intent`, refused unless `lease` (when given) still holds.
    pub(crate) async fn record_intent_under(
        &self,
        intent: &Intent,
        durability: Durability,
        lease: Option<&Lease>,
    ) -> Result<(), CommitError> {
        let run_id = intent.run_id.as_str();
        let seq = signed(intent.seq, "step number")?;
        let body = serde_json::to_string(intent).map_err(|error| {
            CommitError::Storage(format!("encoding the intent of run {run_id}: {error}"))
        })?;
        let mut client = self.client().await?;
        let transaction = client
            .transaction()
            .await
            .map_err(|error| self.failure("starting an intent", error))?;
        if durability == Durability::Process {
            transaction
                .batch_execute("SET LOCAL synchronous_commit = off")
                .await
                .map_err(|error| self.failure("recording an intent", error))?;
        }
        if let Some(lease) = lease {
            self.check_lease(&transaction, run_id, lease).await?;
        }
        let recorded = transaction
            .execute(
                "INSERT INTO cordon_intents (run_id, seq, body)
                 SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM cordon_runs WHERE run_id = $1)
                 ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, body = excluded.body",
                &[&run_id, &seq, &body],
            )
            .await
            .map_err(|error| self.failure("recording an intent", error))?;
        if recorded == 0 {
            return Err(CommitError::UnknownRun(run_id.to_owned()));
        }
        transaction
            .commit()
            .await
            .map_err(|error| self.failure("recording an intent", error))
    }

    /// Record the published step of `run_id`, refused unless `lease` (when
    /// given) still holds.
    pub(crate) async fn mark_published_under(
        &self,
        run_id: &str,
        seq: u64,
        lease: Option<&Lease>,
    ) -> Result<(), CommitError> {
        let seq = signed(seq, "step number")?;
        let mut client = self.client().await?;
        let transaction = client
            .transaction()
            .await
            .map_err(|error| self.failure("starting a write", error))?;
        if let Some(lease) = lease {
            self.check_lease(&transaction, run_id, lease).await?;
        }
        let changed = transaction
            .execute(
                "UPDATE cordon_runs SET published = greatest(published, $2) WHERE run_id = $1",
                &[&run_id, &seq],
            )
            .await
            .map_err(|error| self.failure("recording the published step", error))?;
        if changed == 0 {
            return Err(CommitError::UnknownRun(run_id.to_owned()));
        }
        transaction
            .commit()
            .await
            .map_err(|error| self.failure("recording the published step", error))
    }

    /// The body of `commit` and its step number as stored.
    fn encode_step(commit: &StepCommit) -> Result<(String, i64), CommitError> {
        let run_id = &commit.run_id;
        let body = serde_json::to_string(commit).map_err(|error| {
            CommitError::Storage(format!(
                "encoding run {run_id} step {}: {error}",
                commit.seq
            ))
        })?;
        Ok((body, signed(commit.seq, "step number")?))
    }
}

#[async_trait::async_trait]
impl CommitStore for PostgresCommitStore {
    async fn create_run(&self, header: &RunHeader) -> Result<(), CommitError> {
        let client = self.client().await?;
        self.insert_run(&client, header).await
    }

    async fn commit(
        &self,
        commit: &StepCommit,
        durability: Durability,
    ) -> Result<Receipt, CommitError> {
        self.commit_under(commit, durability, None).await
    }

    async fn record_intent(
        &self,
        intent: &Intent,
        durability: Durability,
    ) -> Result<(), CommitError> {
        self.record_intent_under(intent, durability, None).await
    }
    async fn load(&self, run_id: &str) -> Result<RunRecord, CommitError> {
        let mut client = self.client().await?;
        let transaction = self.snapshot(&mut client).await?;
        let header = self.header(&transaction, run_id).await?;
        let rows = transaction
            .query(
                "SELECT seq, body FROM cordon_steps WHERE run_id = $1 ORDER BY seq",
                &[&run_id],
            )
            .await
            .map_err(|error| self.failure("reading steps", error))?;
        let commits = rows
            .iter()
            .map(|row| self.step(run_id, row.get(0), row.get(1)))
            .collect::<Result<Vec<_>, _>>()?;
        let intent = transaction
            .query_opt(
                "SELECT body FROM cordon_intents WHERE run_id = $1",
                &[&run_id],
            )
            .await
            .map_err(|error| self.failure("reading the intent", error))?
            .map(|row| self.decode(row.get(0), || format!("run {run_id} intent")))
            .transpose()?;
        Ok(RunRecord {
            header,
            commits,
            intent,
        })
    }

    async fn thread_state(&self, thread: &str) -> Result<BTreeMap<String, Value>, CommitError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT key, value FROM cordon_thread_state WHERE thread = $1",
                &[&thread],
            )
            .await
            .map_err(|error| self.failure("reading state", error))?;
        let owner = Owner::Thread(thread);
        let mut state = BTreeMap::new();
        for row in rows {
            let key: String = row.get(0);
            let value = self.decode(row.get(1), || owner.describe(&key))?;
            state.insert(key, value);
        }
        Ok(state)
    }

    async fn runs(&self) -> Result<Vec<RunSummary>, CommitError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT runs.run_id, runs.agent, runs.created, runs.metadata, runs.thread,
                        steps.seq, steps.body, runs.parent
                 FROM cordon_runs runs
                 LEFT JOIN cordon_steps steps
                     ON steps.run_id = runs.run_id AND steps.seq = runs.last_seq
                 ORDER BY runs.created, runs.run_id",
                &[],
            )
            .await
            .map_err(|error| self.failure("listing runs", error))?;
        let mut runs = Vec::with_capacity(rows.len());
        for row in rows {
            let run_id: String = row.get(0);
            let (last_seq, disposition) = match row.get::<_, Option<i64>>(5) {
                Some(seq) => {
                    let commit = self.step(&run_id, seq, row.get(6))?;
                    (commit.seq, commit.disposition)
                }
                None => (0, Disposition::Running),
            };
            let metadata = self.decode(row.get(3), || format!("run {run_id} metadata"))?;
            let created = self.unsigned(row.get(2), || format!("run {run_id}"))?;
            let parent = self.parent(&run_id, row.get(7))?;
            runs.push(RunSummary {
                header: RunHeader {
                    agent: row.get(1),
                    created,
                    thread: row.get(4),
                    metadata,
                    parent,
                    run_id,
                },
                last_seq,
                disposition,
            });
        }
        Ok(runs)
    }

    async fn delete_run(&self, run_id: &str) -> Result<(), CommitError> {
        let deleted = self
            .client()
            .await?
            .execute("DELETE FROM cordon_runs WHERE run_id = $1", &[&run_id])
            .await
            .map_err(|error| self.failure("deleting a run", error))?;
        if deleted == 0 {
            return Err(CommitError::UnknownRun(run_id.to_owned()));
        }
        Ok(())
    }

    async fn files(&self, run_id: &str) -> Result<Vec<StepFiles>, CommitError> {
        let mut client = self.client().await?;
        let transaction = self.snapshot(&mut client).await?;
        self.require_run(&transaction, run_id).await?;
        let rows = transaction
            .query(
                "SELECT seq, path, before_kind, before, after_kind, after FROM cordon_file_changes
                 WHERE run_id = $1 ORDER BY seq, path",
                &[&run_id],
            )
            .await
            .map_err(|error| self.failure("reading file changes", error))?;
        let mut steps: Vec<StepFiles> = Vec::new();
        for row in rows {
            let seq: i64 = row.get(0);
            let path: String = row.get(1);
            let before = files::decode(row.get(2), row.get(3));
            let after = files::decode(row.get(4), row.get(5));
            let (Ok(seq), Some(before), Some(after)) = (u64::try_from(seq), before, after) else {
                return Err(self.corrupt(
                    &format!("run {run_id} file changes"),
                    format!("step {seq} path {path:?} does not decode"),
                ));
            };
            files::push(
                &mut steps,
                seq,
                FileChange {
                    path,
                    before,
                    after,
                },
            );
        }
        Ok(steps)
    }

    async fn published(&self, run_id: &str) -> Result<u64, CommitError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT published FROM cordon_runs WHERE run_id = $1",
                &[&run_id],
            )
            .await
            .map_err(|error| self.failure("reading the published step", error))?
            .ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))?;
        self.unsigned(row.get(0), || format!("run {run_id} published step"))
    }

    async fn mark_published(&self, run_id: &str, seq: u64) -> Result<(), CommitError> {
        self.mark_published_under(run_id, seq, None).await
    }
}

pub(crate) fn signed(value: u64, what: &str) -> Result<i64, CommitError> {
    i64::try_from(value).map_err(|_| CommitError::Storage(format!("{what} {value} is too large")))
}

/// What went wrong, with the server's own message when it sent one (the
/// error's `Display` alone says only "db error").
fn detail(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => chain(error),
    }
}

/// `error` and each of its causes, as one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// `url` without its password, for messages.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "the Postgres store".to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((user, host)) if user.contains(':') => {
            let user = user.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::without_password as redacted;
    use super::{PostgresCommitStore, SCHEMA_VERSION};
    use cordon_kernel::{CommitError, CommitStore};
    use tokio_postgres::NoTls;

    /// The test server's URL with its own schema `schema` (made unique to
    /// this process) and a client of the server, or `None` after saying
    /// loudly that `test` is skipped.
    pub(crate) async fn server_schema(
        test: &str,
        schema: &str,
    ) -> Option<(String, tokio_postgres::Client)> {
        let Ok(server) = std::env::var("CORDON_TEST_POSTGRES") else {
            eprintln!("SKIPPED {test}: CORDON_TEST_POSTGRES is not set");
            return None;
        };
        let (client, connection) = tokio_postgres::connect(&server, NoTls).await.unwrap();
        tokio::spawn(connection);
        let schema = format!("{schema}_{}", std::process::id());
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
            ))
            .await
            .unwrap();
        let separator = if server.contains('?') { '&' } else { '?' };
        let url = format!("{server}{separator}options=-csearch_path%3D{schema}");
        Some((url, client))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stores_connecting_at_once_to_an_empty_database_create_the_schema_once() {
        let Some((url, _client)) = server_schema("racing schema creation", "cordon_race").await
        else {
            return;
        };
        let racers: Vec<_> = (0..6)
            .map(|_| {
                let url = url.clone();
                tokio::spawn(async move { PostgresCommitStore::connect(&url).await })
            })
            .collect();
        for racer in racers {
            let store = racer.await.unwrap().unwrap();
            assert!(store.runs().await.unwrap().is_empty());
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_newer_schema_is_refused_and_left_untouched() {
        let Some((url, client)) = server_schema("newer schema", "cordon_newer").await else {
            return;
        };
        drop(PostgresCommitStore::connect(&url).await.unwrap());
        let schema = format!("cordon_newer_{}", std::process::id());
        client
            .batch_execute(&format!(
                "UPDATE {schema}.cordon_schema SET version = {}",
                SCHEMA_VERSION + 1
            ))
            .await
            .unwrap();
        let error = PostgresCommitStore::connect(&url).await.unwrap_err();
        assert!(
            matches!(&error, CommitError::Corrupt { location, message }
                if location.contains("cordon_* tables")
                    && message.contains(&format!("version {}", SCHEMA_VERSION + 1))
                    && message.contains("left untouched")),
            "{error}"
        );
        let version: i32 = client
            .query_one(&format!("SELECT version FROM {schema}.cordon_schema"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(version, SCHEMA_VERSION + 1);
    }

    #[tokio::test]
    async fn a_bad_url_or_an_unreachable_server_is_named_without_its_password() {
        let error =
            PostgresCommitStore::connect("postgres://cordon:s3cret@127.0.0.1:1/x?sslmode=nonsense")
                .await
                .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("not valid") && !text.contains("s3cret"),
            "{text}"
        );
        // Port 1 on loopback refuses connections.
        let error = PostgresCommitStore::connect("postgres://cordon:s3cret@127.0.0.1:1/x")
            .await
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("127.0.0.1:1")
                && text.contains("connecting")
                && text.contains("Connection refused")
                && !text.contains("s3cret"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_wrong_role_or_a_missing_database_is_said_in_the_servers_words() {
        let Ok(server) = std::env::var("CORDON_TEST_POSTGRES") else {
            eprintln!("SKIPPED the server's words: CORDON_TEST_POSTGRES is not set");
            return;
        };
        let (user_at, rest) = server.split_once("://").map_or(("", ""), |(_, rest)| {
            rest.split_once('@').unwrap_or(("", rest))
        });
        let (host, _database) = rest.split_once('/').unwrap_or((rest, ""));
        assert!(!user_at.is_empty(), "{server}");
        for (url, said) in [
            (
                format!("postgres://nobody_here@{host}/cordon"),
                "role \"nobody_here\" does not exist",
            ),
            (
                format!("postgres://{user_at}@{host}/no_such_database"),
                "database \"no_such_database\" does not exist",
            ),
        ] {
            let error = PostgresCommitStore::connect(&url).await.unwrap_err();
            let text = error.to_string();
            assert!(
                text.contains("connecting: FATAL: ") && text.contains(said),
                "{text}"
            );
        }
    }

    #[test]
    fn a_password_never_reaches_a_message() {
        assert_eq!(
            redacted("postgres://cordon:s3cret@db:5432/runs?sslmode=disable"),
            "postgres://cordon:***@db:5432/runs?sslmode=disable"
        );
        assert_eq!(
            redacted("postgres://cordon@db/runs"),
            "postgres://cordon@db/runs"
        );
    }

    /// The store conformance suite on a real Postgres server: the one
    /// `CORDON_TEST_POSTGRES` names (`scripts/test.sh` starts one). Each case
    /// gets a schema of its own, so cases run in parallel on one database.
    mod conformance {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicU32, Ordering};

        use cordon_kernel::CommitStore;
        use tokio_postgres::NoTls;

        use crate::PostgresCommitStore;
        use crate::conformance::Backend;

        /// The variable naming the test server.
        const SERVER: &str = "CORDON_TEST_POSTGRES";

        struct Postgres {
            server: String,
            schema: String,
        }

        impl Postgres {
            fn url(&self) -> String {
                let separator = if self.server.contains('?') { '&' } else { '?' };
                format!(
                    "{}{separator}options=-csearch_path%3D{}",
                    self.server, self.schema
                )
            }

            async fn execute(&self, sql: &str) {
                let (client, connection) =
                    tokio_postgres::connect(&self.server, NoTls).await.unwrap();
                tokio::spawn(connection);
                client.batch_execute(sql).await.unwrap();
            }
        }

        #[async_trait::async_trait]
        impl Backend for Postgres {
            async fn new() -> Result<Self, String> {
                static CASES: AtomicU32 = AtomicU32::new(0);
                let server = std::env::var(SERVER).map_err(|_| {
                    format!("{SERVER} is not set; scripts/test.sh starts a server and sets it")
                })?;
                let schema = format!(
                    "cordon_case_{}_{}",
                    std::process::id(),
                    CASES.fetch_add(1, Ordering::Relaxed)
                );
                let backend = Self { server, schema };
                backend
                    .execute(&format!(
                        "DROP SCHEMA IF EXISTS {0} CASCADE; CREATE SCHEMA {0}",
                        backend.schema
                    ))
                    .await;
                Ok(backend)
            }

            async fn open(&self) -> Arc<dyn CommitStore> {
                Arc::new(PostgresCommitStore::connect(&self.url()).await.unwrap())
            }

            async fn damage_step(&self, run_id: &str, seq: u64) -> bool {
                self.execute(&format!(
                    "UPDATE {}.cordon_steps SET body = '{{broken' WHERE run_id = '{run_id}' AND seq = {seq}",
                    self.schema
                ))
                .await;
                true
            }
        }

        crate::store_conformance!(Postgres);
    }
}
