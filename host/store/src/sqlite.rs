//! Run commits in one SQLite file: the durable [`CommitStore`].
//!
//! [`SqliteCommitStore`] owns the file and everything in it. The file runs in
//! WAL mode, so readers never block the writer. A run's creation and the
//! operator's writes use `synchronous=FULL`: SQLite syncs them before their
//! transaction ends. A step commit or an intent ends its transaction in the
//! file's cache, and the store's flusher ([`crate::flusher`]) syncs the WAL
//! file from a thread of its own:
//! - with [`Durability::Disk`], at once, and the write is answered only
//!   after that sync: the commits of many runs that end while one sync runs
//!   share the next (group commit), and the thread polling the commit is
//!   free meanwhile;
//! - with [`Durability::Process`], within [`crate::FLUSH_WITHIN`], unless a
//!   write on disk took it there first; the write is answered at once, and
//!   is in the file for any process that opens it.
//!
//! Any number of stores, in one process or several, may open the same file;
//! a writer waits up to five seconds for another to finish before giving
//! up. Its [`CommitStore`] futures do their work on the polling thread and,
//! but for the wait for a sync, are ready when first polled: a local file's
//! commit is shorter than a hop to another thread.
//!
//! # Schema (version 5)
//!
//! ```sql
//! runs         (run_id TEXT PRIMARY KEY, agent TEXT, created INTEGER,
//!               metadata TEXT, thread TEXT, published INTEGER, parent TEXT)
//! steps        (run_id TEXT REFERENCES runs, seq INTEGER, body TEXT,
//!               PRIMARY KEY (run_id, seq)) WITHOUT ROWID
//! intents      (run_id TEXT PRIMARY KEY REFERENCES runs, seq INTEGER, body TEXT)
//!               WITHOUT ROWID
//! state        (run_id TEXT REFERENCES runs, key TEXT, value TEXT,
//!               PRIMARY KEY (run_id, key))
//! thread_state (thread TEXT, key TEXT, value TEXT, PRIMARY KEY (thread, key))
//! file_changes (run_id TEXT REFERENCES runs, seq INTEGER, path TEXT,
//!               before_kind TEXT, before BLOB, after_kind TEXT, after BLOB,
//!               PRIMARY KEY (run_id, seq, path))
//! ```
//!
//! Version 2 added `runs.thread` and `thread_state`; version 3 added
//! `file_changes` and `runs.published`; version 4 keeps `steps` and `intents`
//! in their primary key's b-tree alone, so a commit writes one b-tree per
//! table instead of a table and its key's index; version 5 added
//! `runs.parent`, the JSON of a sub-agent's run's [`ParentLink`] (`NULL` for
//! a run of its own). Older files are upgraded in place, in one transaction,
//! when they are opened.
//!
//! `file_changes` holds the files a transactional workspace staged in each
//! step (see [`crate::files`]), committed in the step's transaction;
//! `runs.published` is the last step whose changes are in the real folder.
//!
//! `steps.body` is the JSON of a [`StepCommit`] and `intents.body` the JSON of
//! an [`Intent`]; a run has at most one intent, the one recorded since its last
//! commit. `state` holds each run's committed run-scoped state, one JSON value
//! per key: it always equals every commit's writes applied in order
//! ([`RunRecord::state`]), so reading state never replays the run.
//! `thread_state` holds each thread's state, which the commits of all its runs
//! change, as do single tool calls made outside a run ([`ThreadState`]). The file is marked with its own
//! `application_id` and the schema version in `user_version`.
//!
//! A commit is one `BEGIN IMMEDIATE` transaction: it checks the step number,
//! applies the state writes, inserts the step, updates the changed state rows
//! and clears the intent, or does none of it. The primary key on
//! `(run_id, seq)` backs up the step-number check: a racing writer's duplicate
//! step is reported as [`CommitError::Conflict`].
//!
//! A file that is not SQLite, is damaged, belongs to another program or has a
//! schema version this build does not know is reported as
//! [`CommitError::Corrupt`] naming the file, and is never written to. So is a stored row that does not decode, naming its run and
//! step.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use cordon_kernel::commit::check_sequence;
use cordon_kernel::{
    CommitError, CommitStore, Disposition, Durability, Intent, ParentLink, Receipt, RunHeader,
    RunRecord, RunSummary, StepCommit, StepFiles, apply_writes,
};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::files;
use crate::flusher::{Flusher, OnDisk};
use crate::header::HeaderColumns;
use crate::immediate::Immediate;
use crate::owner::Owner;

/// How long a store waits for another writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Marks the file as a Cordon commit store (`PRAGMA application_id`): "CRDN".
const APPLICATION_ID: i32 = 0x4352_444E;

/// The schema this build reads and writes (`PRAGMA user_version`).
const SCHEMA_VERSION: i32 = 5;

/// The tables of a version 2 file; a new file gets them and then
/// [`UPGRADE_FROM_2`] and [`UPGRADE_FROM_3`], so that it ends with the very
/// tables an upgraded file has.
const SCHEMA: &str = "
CREATE TABLE runs (
    run_id   TEXT    NOT NULL PRIMARY KEY,
    agent    TEXT    NOT NULL,
    created  INTEGER NOT NULL,
    metadata TEXT    NOT NULL,
    thread   TEXT    NOT NULL DEFAULT 'default'
) STRICT;
CREATE INDEX runs_by_age ON runs (created, run_id);
CREATE TABLE steps (
    run_id TEXT    NOT NULL REFERENCES runs (run_id),
    seq    INTEGER NOT NULL CHECK (seq >= 1),
    body   TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT;
CREATE TABLE intents (
    run_id TEXT    NOT NULL PRIMARY KEY REFERENCES runs (run_id),
    seq    INTEGER NOT NULL,
    body   TEXT    NOT NULL
) STRICT;
CREATE TABLE state (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) STRICT;
CREATE TABLE thread_state (
    thread TEXT NOT NULL,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (thread, key)
) STRICT;
";

/// Upgrades a version 1 file to version 2.
const UPGRADE_FROM_1: &str = "
ALTER TABLE runs ADD COLUMN thread TEXT NOT NULL DEFAULT 'default';
CREATE TABLE thread_state (
    thread TEXT NOT NULL,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (thread, key)
) STRICT;
";

/// Upgrades a version 2 file to version 3.
const UPGRADE_FROM_2: &str = "
ALTER TABLE runs ADD COLUMN published INTEGER NOT NULL DEFAULT 0;
CREATE TABLE file_changes (
    run_id      TEXT    NOT NULL REFERENCES runs (run_id),
    seq         INTEGER NOT NULL,
    path        TEXT    NOT NULL,
    before_kind TEXT    NOT NULL,
    before      BLOB,
    after_kind  TEXT    NOT NULL,
    after       BLOB,
    PRIMARY KEY (run_id, seq, path)
) STRICT;
";

/// Upgrades a version 3 file to version 4: `steps` and `intents` are rebuilt
/// as `WITHOUT ROWID` tables holding the same rows.
const UPGRADE_FROM_3: &str = "
CREATE TABLE steps_by_key (
    run_id TEXT    NOT NULL REFERENCES runs (run_id),
    seq    INTEGER NOT NULL CHECK (seq >= 1),
    body   TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;
INSERT INTO steps_by_key (run_id, seq, body) SELECT run_id, seq, body FROM steps;
DROP TABLE steps;
ALTER TABLE steps_by_key RENAME TO steps;
CREATE TABLE intents_by_key (
    run_id TEXT    NOT NULL PRIMARY KEY REFERENCES runs (run_id),
    seq    INTEGER NOT NULL,
    body   TEXT    NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO intents_by_key (run_id, seq, body) SELECT run_id, seq, body FROM intents;
DROP TABLE intents;
ALTER TABLE intents_by_key RENAME TO intents;
";

/// Upgrades a version 4 file to version 5: runs learn their parent.
const UPGRADE_FROM_4: &str = "
ALTER TABLE runs ADD COLUMN parent TEXT;
";

/// The SQL of this store for the state rows of an [`Owner`].
trait OwnerSql {
    fn select(&self) -> &'static str;
    fn select_all(&self) -> &'static str;
    fn upsert(&self) -> &'static str;
    fn delete(&self) -> &'static str;
}

impl OwnerSql for Owner<'_> {
    fn select(&self) -> &'static str {
        match self {
            Self::Run(_) => "SELECT value FROM state WHERE run_id = ?1 AND key = ?2",
            Self::Thread(_) => "SELECT value FROM thread_state WHERE thread = ?1 AND key = ?2",
        }
    }

    fn select_all(&self) -> &'static str {
        match self {
            Self::Run(_) => "SELECT key, value FROM state WHERE run_id = ?1",
            Self::Thread(_) => "SELECT key, value FROM thread_state WHERE thread = ?1",
        }
    }

    fn upsert(&self) -> &'static str {
        match self {
            Self::Run(_) => {
                "INSERT INTO state (run_id, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value"
            }
            Self::Thread(_) => {
                "INSERT INTO thread_state (thread, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (thread, key) DO UPDATE SET value = excluded.value"
            }
        }
    }

    fn delete(&self) -> &'static str {
        match self {
            Self::Run(_) => "DELETE FROM state WHERE run_id = ?1 AND key = ?2",
            Self::Thread(_) => "DELETE FROM thread_state WHERE thread = ?1 AND key = ?2",
        }
    }
}

/// A [`CommitStore`] in a SQLite file.
#[derive(Debug)]
pub struct SqliteCommitStore {
    path: PathBuf,
    connection: Mutex<Connection>,
    /// Whether the connection waits for the disk at each write
    /// (`synchronous=FULL`) rather than only at the flusher's syncs
    /// (`NORMAL`); changed only while the connection is held.
    waits_for_disk: AtomicBool,
    /// Started by the first write that SQLite does not sync itself.
    flusher: OnceLock<Flusher>,
}

/// How far a write reaches before the store answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// SQLite syncs it before its transaction ends (`synchronous=FULL`):
    /// a run's creation, a thread's state written outside a run, a run's
    /// deletion.
    Synced,
    /// Its transaction ends in the file's cache and the flusher syncs it at
    /// once, sharing the sync with every write that ended meanwhile; the
    /// write is answered after that sync.
    Grouped,
    /// Its transaction ends in the file's cache and the flusher syncs it
    /// within [`crate::FLUSH_WITHIN`].
    Soon,
}

impl From<Durability> for Reach {
    fn from(durability: Durability) -> Self {
        match durability {
            Durability::Disk => Self::Grouped,
            Durability::Process => Self::Soon,
        }
    }
}

/// What an opened file holds, as far as this store is concerned.
enum Format {
    /// Nothing yet: the schema is to be created.
    Empty,
    /// A commit store of the current schema.
    Current,
    /// A commit store of schema version 1, to be upgraded.
    Version1,
    /// A commit store of schema version 2, to be upgraded.
    Version2,
    /// A commit store of schema version 3, to be upgraded.
    Version3,
    /// A commit store of schema version 4, to be upgraded.
    Version4,
}

impl SqliteCommitStore {
    /// Open the store at `path`, creating the file, its directory and the schema
    /// when missing.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CommitError> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|error| {
                CommitError::Storage(format!("creating directory {}: {error}", dir.display()))
            })?;
        }
        let mut connection = Connection::open(&path).context(&path, "opening the file")?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .context(&path, "setting the busy timeout")?;
        // Only reads until the file is known to be ours, in one snapshot so that
        // a store creating the schema meanwhile is seen entirely or not at all.
        let format = {
            let snapshot = connection
                .transaction()
                .context(&path, "reading the file")?;
            format(&snapshot, &path)?
        };
        enable_wal(&connection, &path)?;
        connection
            .pragma_update(None, "synchronous", "FULL")
            .context(&path, "enabling synchronous writes")?;
        connection
            .pragma_update(None, "foreign_keys", true)
            .context(&path, "enabling foreign keys")?;
        // A statement keeps the plan it was prepared with whatever is bound
        // to it: otherwise SQLite may compile a cached statement again each
        // time a new run id is bound, on every commit.
        connection
            .set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .context(&path, "keeping query plans stable")?;
        match format {
            Format::Empty
            | Format::Version1
            | Format::Version2
            | Format::Version3
            | Format::Version4 => {
                create_schema(&mut connection, &path)?;
            }
            Format::Current => {}
        }
        Ok(Self {
            path,
            connection: Mutex::new(connection),
            waits_for_disk: AtomicBool::new(true),
            flusher: OnceLock::new(),
        })
    }

    /// The file the store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The committed run-scoped state of `run_id`: every commit's writes
    /// applied in order.
    pub fn state(&self, run_id: &str) -> Result<BTreeMap<String, Value>, CommitError> {
        let mut connection = self.lock();
        let transaction = connection
            .transaction()
            .context(&self.path, "starting a read")?;
        self.require_run(&transaction, run_id)?;
        self.all_values(&transaction, Owner::Run(run_id))
    }

    /// Every key and value `owner` holds.
    fn all_values(
        &self,
        connection: &Connection,
        owner: Owner<'_>,
    ) -> Result<BTreeMap<String, Value>, CommitError> {
        let mut statement = connection
            .prepare_cached(owner.select_all())
            .context(&self.path, "reading state")?;
        let rows = statement
            .query_map([owner.id()], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get_ref(1)?.as_bytes()?.to_vec(),
                ))
            })
            .context(&self.path, "reading state")?;
        let mut state = BTreeMap::new();
        for row in rows {
            let (key, value) = row.context(&self.path, "reading state")?;
            let value = self.decode(&value, || owner.describe(&key))?;
            state.insert(key, value);
        }
        Ok(state)
    }

    /// Apply `writes` to the stored state of `owner`, all or nothing, inside
    /// the caller's transaction.
    fn apply_to(
        &self,
        connection: &Connection,
        owner: Owner<'_>,
        writes: &[cordon_kernel::StateWrite],
        what: impl FnOnce() -> String,
    ) -> Result<(), CommitError> {
        if writes.is_empty() {
            return Ok(());
        }
        let keys: BTreeSet<&str> = writes.iter().map(|write| write.key.as_str()).collect();
        let mut values = self.values(connection, owner, &keys)?;
        apply_writes(&mut values, writes)
            .map_err(|error| CommitError::Storage(format!("{}: {error}", what())))?;
        self.store_values(connection, owner, &keys, &values)
    }

    /// The committed value of `key` in `thread`'s state.
    pub(crate) fn thread_value(
        &self,
        thread: &str,
        key: &str,
    ) -> Result<Option<Value>, CommitError> {
        let mut connection = self.lock();
        let transaction = connection
            .transaction()
            .context(&self.path, "starting a read")?;
        let keys = BTreeSet::from([key]);
        Ok(self
            .values(&transaction, Owner::Thread(thread), &keys)?
            .remove(key))
    }

    /// Apply `writes` to `thread`'s state in one transaction, all or nothing.
    pub(crate) fn apply_to_thread(
        &self,
        thread: &str,
        writes: &[cordon_kernel::StateWrite],
    ) -> Result<(), CommitError> {
        let mut connection = self.writer(Reach::Synced)?;
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context(&self.path, "starting a state write")?;
        self.apply_to(&transaction, Owner::Thread(thread), writes, || {
            format!("thread {thread}")
        })?;
        transaction
            .commit()
            .context(&self.path, "committing a state write")
    }

    /// The connection, for reading.
    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection, for a write that must reach as far as `reach` says.
    /// A sync of earlier writes that failed is reported here, and this write
    /// is not made.
    fn writer(&self, reach: Reach) -> Result<MutexGuard<'_, Connection>, CommitError> {
        let connection = self.lock();
        if let Some(error) = self.flusher.get().and_then(Flusher::broken) {
            return Err(CommitError::Storage(format!(
                "{}: a sync of commits that waited for the disk failed ({error}); the disk may \
                 have dropped writes, so this store takes no more: stop Cordon, check the disk, \
                 and start it again",
                self.path.display()
            )));
        }
        if let Some(error) = self.flusher.get().and_then(Flusher::take_failure) {
            return Err(CommitError::Storage(format!(
                "{}: syncing the writes made without waiting for the disk failed, so the \
                 last of them may not survive a power loss: {error}",
                self.path.display()
            )));
        }
        let wait = reach == Reach::Synced;
        if !wait && self.flusher.get().is_none() {
            let flusher = Flusher::start(wal_of(&connection, &self.path)).map_err(|error| {
                CommitError::Storage(format!(
                    "{}: starting the thread that syncs writes: {error}",
                    self.path.display()
                ))
            })?;
            // The connection is held, so no other write started one meanwhile.
            let _ = self.flusher.set(flusher);
        }
        if self.waits_for_disk.load(Ordering::Relaxed) != wait {
            connection
                .pragma_update(None, "synchronous", if wait { "FULL" } else { "NORMAL" })
                .context(&self.path, "choosing how far writes reach")?;
            self.waits_for_disk.store(wait, Ordering::Relaxed);
        }
        Ok(connection)
    }

    /// A write made to reach as far as `reach` says has ended: one that
    /// reached only the process is synced soon, and one grouped with others
    /// is synced now, what it waits for returned.
    fn written(&self, reach: Reach) -> Option<OnDisk> {
        // `writer` started the flusher for every write it does not sync.
        let flusher = self.flusher.get();
        match (reach, flusher) {
            (Reach::Synced, _) | (Reach::Soon, None) => None,
            (Reach::Grouped, Some(flusher)) => Some(flusher.on_disk()),
            (Reach::Grouped, None) => Some(Flusher::gone()),
            (Reach::Soon, Some(flusher)) => {
                flusher.written();
                None
            }
        }
    }

    /// Write `commit` in one transaction that ends as far as `reach` says;
    /// what it still waits for is returned.
    fn write_step(&self, commit: &StepCommit, reach: Reach) -> Result<Option<OnDisk>, CommitError> {
        let run_id = commit.run_id.as_str();
        let body = serde_json::to_string(commit).map_err(|error| {
            CommitError::Storage(format!(
                "encoding run {run_id} step {}: {error}",
                commit.seq
            ))
        })?;
        let connection = self.writer(reach)?;
        let transaction = Immediate::begin(&connection).context(&self.path, "starting a commit")?;
        let (thread, last_seq) = self.thread_and_last_seq(&transaction, run_id)?;
        check_sequence(commit, last_seq)?;
        let seq = signed(commit.seq, "step number")?;
        let what = || format!("run {run_id} step {}", commit.seq);
        self.apply_to(&transaction, Owner::Run(run_id), &commit.state, what)?;
        self.apply_to(
            &transaction,
            Owner::Thread(&thread),
            &commit.thread_state,
            what,
        )?;
        self.insert_step(&transaction, commit, seq, &body)?;
        files::insert(&transaction, run_id, seq, &commit.files)
            .context(&self.path, "recording file changes")?;
        transaction
            .prepare_cached("DELETE FROM intents WHERE run_id = ?1")
            .and_then(|mut statement| statement.execute([run_id]))
            .context(&self.path, "clearing the intent")?;
        transaction
            .commit()
            .context(&self.path, "committing a step")?;
        drop(connection);
        Ok(self.written(reach))
    }

    /// Record `intent` in one transaction that ends as far as `reach` says;
    /// what it still waits for is returned.
    fn write_intent(&self, intent: &Intent, reach: Reach) -> Result<Option<OnDisk>, CommitError> {
        let run_id = intent.run_id.as_str();
        let seq = signed(intent.seq, "step number")?;
        let body = serde_json::to_string(intent).map_err(|error| {
            CommitError::Storage(format!("encoding the intent of run {run_id}: {error}"))
        })?;
        let connection = self.writer(reach)?;
        self.insert_intent(&connection, run_id, seq, &body)?;
        drop(connection);
        Ok(self.written(reach))
    }

    /// Wait until the sync `on_disk` waits for took `what` to disk.
    async fn on_disk(&self, on_disk: Option<OnDisk>, what: &str) -> Result<(), CommitError> {
        let Some(on_disk) = on_disk else {
            return Ok(());
        };
        let failed = match on_disk.await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => error,
            Err(_) => "the thread that syncs writes stopped".to_owned(),
        };
        Err(CommitError::Storage(format!(
            "{}: {what} is written, but syncing it to disk failed, so it may not survive a \
             power loss: {failed}",
            self.path.display()
        )))
    }

    fn corrupt(&self, what: &str, message: impl std::fmt::Display) -> CommitError {
        CommitError::Corrupt {
            location: format!("{}: {what}", self.path.display()),
            message: message.to_string(),
        }
    }

    fn decode<T: DeserializeOwned>(
        &self,
        bytes: &[u8],
        what: impl FnOnce() -> String,
    ) -> Result<T, CommitError> {
        serde_json::from_slice(bytes).map_err(|error| self.corrupt(&what(), error))
    }

    fn header(&self, connection: &Connection, run_id: &str) -> Result<RunHeader, CommitError> {
        let row = connection
            .prepare_cached(
                "SELECT agent, created, metadata, thread, parent FROM runs WHERE run_id = ?1",
            )
            .and_then(|mut statement| {
                statement
                    .query_row([run_id], |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, i64>(1)?,
                            row.get::<_, String>(2)?,
                            row.get::<_, String>(3)?,
                            row.get::<_, Option<String>>(4)?,
                        ))
                    })
                    .optional()
            })
            .context(&self.path, "reading a run")?;
        let (agent, created, metadata, thread, parent) =
            row.ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))?;
        Ok(RunHeader {
            run_id: run_id.to_owned(),
            agent,
            created: self.unsigned(created, || format!("run {run_id}"))?,
            thread,
            metadata: self.decode(metadata.as_bytes(), || format!("run {run_id} metadata"))?,
            parent: self.parent(run_id, parent)?,
        })
    }

    /// The parent link stored as `parent` for run `run_id`.
    fn parent(
        &self,
        run_id: &str,
        parent: Option<String>,
    ) -> Result<Option<ParentLink>, CommitError> {
        parent
            .map(|parent| self.decode(parent.as_bytes(), || format!("run {run_id} parent")))
            .transpose()
    }

    /// The thread of run `run_id` and its last step's number, in one
    /// statement: all a commit reads before it writes.
    fn thread_and_last_seq(
        &self,
        connection: &Connection,
        run_id: &str,
    ) -> Result<(String, u64), CommitError> {
        let (thread, last): (String, i64) = connection
            .prepare_cached(
                "SELECT thread, (SELECT coalesce(max(seq), 0) FROM steps WHERE run_id = ?1)
                 FROM runs WHERE run_id = ?1",
            )
            .and_then(|mut statement| {
                statement
                    .query_row([run_id], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
            })
            .context(&self.path, "reading a run")?
            .ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))?;
        Ok((thread, self.unsigned(last, || format!("run {run_id}"))?))
    }

    fn require_run(&self, connection: &Connection, run_id: &str) -> Result<(), CommitError> {
        let exists = connection
            .prepare_cached("SELECT 1 FROM runs WHERE run_id = ?1")
            .and_then(|mut statement| statement.exists([run_id]))
            .context(&self.path, "looking up a run")?;
        if exists {
            Ok(())
        } else {
            Err(CommitError::UnknownRun(run_id.to_owned()))
        }
    }

    fn unsigned(&self, value: i64, what: impl FnOnce() -> String) -> Result<u64, CommitError> {
        u64::try_from(value).map_err(|_| self.corrupt(&what(), format!("negative number {value}")))
    }

    /// Decode the step stored at `seq` of `run_id`, checking it says so itself.
    fn step(&self, run_id: &str, seq: i64, body: &[u8]) -> Result<StepCommit, CommitError> {
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

    fn insert_step(
        &self,
        connection: &Connection,
        commit: &StepCommit,
        seq: i64,
        body: &str,
    ) -> Result<(), CommitError> {
        connection
            .prepare_cached("INSERT INTO steps (run_id, seq, body) VALUES (?1, ?2, ?3)")
            .and_then(|mut statement| statement.execute(params![commit.run_id, seq, body]))
            .map(drop)
            .map_err(|error| {
                if error.sqlite_extended_error_code()
                    == Some(rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
                {
                    CommitError::Conflict {
                        run_id: commit.run_id.clone(),
                        seq: commit.seq,
                    }
                } else {
                    failure(&self.path, "inserting a step", error)
                }
            })
    }

    /// Record `body` as the intent of `run_id` for step `seq`, in one
    /// transaction.
    fn insert_intent(
        &self,
        connection: &Connection,
        run_id: &str,
        seq: i64,
        body: &str,
    ) -> Result<(), CommitError> {
        let transaction = Immediate::begin(connection).context(&self.path, "starting an intent")?;
        self.require_run(&transaction, run_id)?;
        transaction
            .prepare_cached(
                "INSERT INTO intents (run_id, seq, body) VALUES (?1, ?2, ?3)
                 ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, body = excluded.body",
            )
            .and_then(|mut statement| statement.execute(params![run_id, seq, body]))
            .context(&self.path, "recording an intent")?;
        transaction
            .commit()
            .context(&self.path, "recording an intent")
    }

    /// The committed values of `keys` held by `owner`; absent keys are left out.
    fn values(
        &self,
        connection: &Connection,
        owner: Owner<'_>,
        keys: &BTreeSet<&str>,
    ) -> Result<BTreeMap<String, Value>, CommitError> {
        let mut statement = connection
            .prepare_cached(owner.select())
            .context(&self.path, "reading state")?;
        let mut values = BTreeMap::new();
        for key in keys {
            let value = statement
                .query_row([owner.id(), *key], |row| {
                    Ok(row.get_ref(0)?.as_bytes()?.to_vec())
                })
                .optional()
                .context(&self.path, "reading state")?;
            if let Some(value) = value {
                let value = self.decode(&value, || owner.describe(key))?;
                values.insert((*key).to_owned(), value);
            }
        }
        Ok(values)
    }

    /// Make the stored state of `keys` held by `owner` equal `values`.
    fn store_values(
        &self,
        connection: &Connection,
        owner: Owner<'_>,
        keys: &BTreeSet<&str>,
        values: &BTreeMap<String, Value>,
    ) -> Result<(), CommitError> {
        let mut upsert = connection
            .prepare_cached(owner.upsert())
            .context(&self.path, "writing state")?;
        let mut delete = connection
            .prepare_cached(owner.delete())
            .context(&self.path, "writing state")?;
        for key in keys {
            match values.get(*key) {
                Some(value) => upsert
                    .execute(params![owner.id(), key, value.to_string()])
                    .context(&self.path, "writing state")?,
                None => delete
                    .execute([owner.id(), *key])
                    .context(&self.path, "writing state")?,
            };
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl CommitStore for SqliteCommitStore {
    async fn create_run(&self, header: &RunHeader) -> Result<(), CommitError> {
        let created = signed(header.created, "creation time")?;
        let HeaderColumns { metadata, parent } = HeaderColumns::of(header)?;
        let inserted = self
            .writer(Reach::Synced)?
            .execute(
                "INSERT INTO runs (run_id, agent, created, metadata, thread, parent)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (run_id) DO NOTHING",
                params![
                    header.run_id,
                    header.agent,
                    created,
                    metadata,
                    header.thread,
                    parent
                ],
            )
            .context(&self.path, "creating a run")?;
        if inserted == 0 {
            return Err(CommitError::DuplicateRun(header.run_id.clone()));
        }
        Ok(())
    }

    async fn commit(
        &self,
        commit: &StepCommit,
        durability: Durability,
    ) -> Result<Receipt, CommitError> {
        let on_disk = self.write_step(commit, Reach::from(durability))?;
        let what = format!("run {} step {}", commit.run_id, commit.seq);
        self.on_disk(on_disk, &what).await?;
        Ok(Receipt { seq: commit.seq })
    }

    async fn record_intent(
        &self,
        intent: &Intent,
        durability: Durability,
    ) -> Result<(), CommitError> {
        let on_disk = self.write_intent(intent, Reach::from(durability))?;
        let what = format!("the intent of run {}", intent.run_id);
        self.on_disk(on_disk, &what).await
    }

    async fn load(&self, run_id: &str) -> Result<RunRecord, CommitError> {
        let mut connection = self.lock();
        // One read transaction, so the record is a single consistent snapshot.
        let transaction = connection
            .transaction()
            .context(&self.path, "starting a read")?;
        let header = self.header(&transaction, run_id)?;

        let mut statement = transaction
            .prepare_cached("SELECT seq, body FROM steps WHERE run_id = ?1 ORDER BY seq")
            .context(&self.path, "reading steps")?;
        let rows = statement
            .query_map([run_id], |row| {
                Ok((row.get::<_, i64>(0)?, row.get_ref(1)?.as_bytes()?.to_vec()))
            })
            .context(&self.path, "reading steps")?;
        let mut commits = Vec::new();
        for row in rows {
            let (seq, body) = row.context(&self.path, "reading steps")?;
            commits.push(self.step(run_id, seq, &body)?);
        }

        let intent = transaction
            .prepare_cached("SELECT body FROM intents WHERE run_id = ?1")
            .and_then(|mut statement| {
                statement
                    .query_row([run_id], |row| Ok(row.get_ref(0)?.as_bytes()?.to_vec()))
                    .optional()
            })
            .context(&self.path, "reading the intent")?
            .map(|body| self.decode(&body, || format!("run {run_id} intent")))
            .transpose()?;

        Ok(RunRecord {
            header,
            commits,
            intent,
        })
    }

    async fn thread_state(&self, thread: &str) -> Result<BTreeMap<String, Value>, CommitError> {
        let mut connection = self.lock();
        let transaction = connection
            .transaction()
            .context(&self.path, "starting a read")?;
        self.all_values(&transaction, Owner::Thread(thread))
    }

    async fn files(&self, run_id: &str) -> Result<Vec<StepFiles>, CommitError> {
        let mut connection = self.lock();
        let transaction = connection
            .transaction()
            .context(&self.path, "starting a read")?;
        self.require_run(&transaction, run_id)?;
        files::load(&transaction, run_id)
            .context(&self.path, "reading file changes")?
            .map_err(|message| self.corrupt(&format!("run {run_id} file changes"), message))
    }

    async fn published(&self, run_id: &str) -> Result<u64, CommitError> {
        let connection = self.lock();
        let published: Option<i64> = connection
            .query_row(
                "SELECT published FROM runs WHERE run_id = ?1",
                [run_id],
                |row| row.get(0),
            )
            .optional()
            .context(&self.path, "reading the published step")?;
        let published = published.ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))?;
        self.unsigned(published, || format!("run {run_id} published step"))
    }

    async fn mark_published(&self, run_id: &str, seq: u64) -> Result<(), CommitError> {
        let seq = signed(seq, "step number")?;
        // Losing it to a power loss only publishes the step again on resume,
        // which writes the same files: it need not wait for the disk.
        let connection = self.writer(Reach::Soon)?;
        let changed = connection
            .execute(
                "UPDATE runs SET published = max(published, ?2) WHERE run_id = ?1",
                params![run_id, seq],
            )
            .context(&self.path, "recording the published step")?;
        drop(connection);
        if changed == 0 {
            return Err(CommitError::UnknownRun(run_id.to_owned()));
        }
        self.written(Reach::Soon);
        Ok(())
    }

    async fn delete_run(&self, run_id: &str) -> Result<(), CommitError> {
        let mut connection = self.writer(Reach::Synced)?;
        let transaction = connection
            .transaction()
            .context(&self.path, "starting to delete a run")?;
        for table in ["file_changes", "state", "intents", "steps"] {
            transaction
                .execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), [run_id])
                .context(&self.path, "deleting a run")?;
        }
        let deleted = transaction
            .execute("DELETE FROM runs WHERE run_id = ?1", [run_id])
            .context(&self.path, "deleting a run")?;
        if deleted == 0 {
            return Err(CommitError::UnknownRun(run_id.to_owned()));
        }
        transaction.commit().context(&self.path, "deleting a run")?;
        Ok(())
    }

    async fn runs(&self) -> Result<Vec<RunSummary>, CommitError> {
        let mut connection = self.lock();
        let transaction = connection
            .transaction()
            .context(&self.path, "starting a read")?;
        let mut statement = transaction
            .prepare_cached(
                "SELECT runs.run_id, runs.agent, runs.created, runs.metadata, runs.thread,
                        steps.seq, steps.body, runs.parent
                 FROM runs
                 LEFT JOIN steps ON steps.run_id = runs.run_id
                     AND steps.seq = (SELECT max(seq) FROM steps WHERE run_id = runs.run_id)
                 ORDER BY runs.created, runs.run_id",
            )
            .context(&self.path, "listing runs")?;
        let rows = statement
            .query_map([], |row| {
                let last = match row.get::<_, Option<i64>>(5)? {
                    Some(seq) => Some((seq, row.get_ref(6)?.as_bytes()?.to_vec())),
                    None => None,
                };
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, String>(4)?,
                    last,
                    row.get::<_, Option<String>>(7)?,
                ))
            })
            .context(&self.path, "listing runs")?;
        let mut runs = Vec::new();
        for row in rows {
            let (run_id, agent, created, metadata, thread, last, parent) =
                row.context(&self.path, "listing runs")?;
            let parent = self.parent(&run_id, parent)?;
            let metadata = self.decode(metadata.as_bytes(), || format!("run {run_id} metadata"))?;
            let (last_seq, disposition) = match last {
                Some((seq, body)) => {
                    let commit = self.step(&run_id, seq, &body)?;
                    (commit.seq, commit.disposition)
                }
                None => (0, Disposition::Running),
            };
            let created = self.unsigned(created, || format!("run {run_id}"))?;
            runs.push(RunSummary {
                header: RunHeader {
                    run_id,
                    agent,
                    created,
                    thread,
                    metadata,
                    parent,
                },
                last_seq,
                disposition,
            });
        }
        Ok(runs)
    }
}

/// Read what `path` holds without writing to it. Call it inside a transaction,
/// so that its reads see one snapshot.
fn format(connection: &Connection, path: &Path) -> Result<Format, CommitError> {
    let read = |pragma: &str| -> Result<i32, CommitError> {
        connection
            .pragma_query_value(None, pragma, |row| row.get(0))
            .context(path, "reading the file header")
    };
    let application_id = read("application_id")?;
    let version = read("user_version")?;
    let objects: i64 = connection
        .query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
        .context(path, "reading the schema")?;
    let refuse = |message: String| CommitError::Corrupt {
        location: path.display().to_string(),
        message: format!("{message}; the file was left untouched"),
    };
    match (application_id, version, objects) {
        (0, 0, 0) => Ok(Format::Empty),
        (APPLICATION_ID, SCHEMA_VERSION, _) => Ok(Format::Current),
        (APPLICATION_ID, 1, _) => Ok(Format::Version1),
        (APPLICATION_ID, 2, _) => Ok(Format::Version2),
        (APPLICATION_ID, 3, _) => Ok(Format::Version3),
        (APPLICATION_ID, 4, _) => Ok(Format::Version4),
        (APPLICATION_ID, other, _) => Err(refuse(format!(
            "schema version {other} is unknown to this build, which reads version {SCHEMA_VERSION}"
        ))),
        _ => Err(refuse(
            "a SQLite database that is not a Cordon commit store".to_owned(),
        )),
    }
}

/// The WAL file of the database `connection` has open, named after the
/// file as SQLite resolved it (through symbolic links, from the directory it
/// was opened in), or after `path` when it cannot say.
fn wal_of(connection: &Connection, path: &Path) -> PathBuf {
    let mut wal = connection
        .path()
        .filter(|resolved| !resolved.is_empty())
        .map_or_else(|| path.as_os_str().to_owned(), std::ffi::OsString::from);
    wal.push("-wal");
    PathBuf::from(wal)
}

/// Put the file in WAL mode. Leaving rollback-journal mode needs an exclusive
/// lock, and SQLite reports a busy file at once instead of waiting for it, so
/// this retries until [`BUSY_TIMEOUT`] has passed.
fn enable_wal(connection: &Connection, path: &Path) -> Result<(), CommitError> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        let mode = connection
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0));
        match mode {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(CommitError::Storage(format!(
                    "{}: WAL mode is unavailable (journal mode is {mode})",
                    path.display()
                )));
            }
            Err(error)
                if error.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(error) => return Err(failure(path, "switching to WAL mode", error)),
        }
    }
}

/// Create the schema in an empty file, or upgrade a version 1 file, unless
/// another store just did.
fn create_schema(connection: &mut Connection, path: &Path) -> Result<(), CommitError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .context(path, "starting schema creation")?;
    let scripts: &[&str] = match format(&transaction, path)? {
        Format::Empty => &[SCHEMA, UPGRADE_FROM_2, UPGRADE_FROM_3, UPGRADE_FROM_4],
        Format::Version1 => &[
            UPGRADE_FROM_1,
            UPGRADE_FROM_2,
            UPGRADE_FROM_3,
            UPGRADE_FROM_4,
        ],
        Format::Version2 => &[UPGRADE_FROM_2, UPGRADE_FROM_3, UPGRADE_FROM_4],
        Format::Version3 => &[UPGRADE_FROM_3, UPGRADE_FROM_4],
        Format::Version4 => &[UPGRADE_FROM_4],
        Format::Current => &[],
    };
    if !scripts.is_empty() {
        for script in scripts {
            transaction
                .execute_batch(script)
                .context(path, "creating the schema")?;
        }
        transaction
            .pragma_update(None, "application_id", APPLICATION_ID)
            .context(path, "marking the file")?;
        transaction
            .pragma_update(None, "user_version", SCHEMA_VERSION)
            .context(path, "setting the schema version")?;
    }
    transaction.commit().context(path, "creating the schema")
}

/// `value` as SQLite's signed integer.
fn signed(value: u64, what: &str) -> Result<i64, CommitError> {
    i64::try_from(value)
        .map_err(|_| CommitError::Storage(format!("{what} {value} is too large to store")))
}

/// A SQLite failure at `path` while doing `action`: `Corrupt` when the file is
/// damaged or not a database, `Storage` otherwise.
fn failure(path: &Path, action: &str, error: rusqlite::Error) -> CommitError {
    match error.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => CommitError::Corrupt {
            location: path.display().to_string(),
            message: format!("{action}: {error}; the file was left untouched"),
        },
        _ => CommitError::Storage(format!("{}: {action}: {error}", path.display())),
    }
}

/// Attaches the file and the action to a SQLite failure.
trait Context<T> {
    fn context(self, path: &Path, action: &str) -> Result<T, CommitError>;
}

impl<T> Context<T> for rusqlite::Result<T> {
    fn context(self, path: &Path, action: &str) -> Result<T, CommitError> {
        self.map_err(|error| failure(path, action, error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{header, intent, mixed_writes, mixed_writes_applied, step, write};
    use cordon_kernel::{FileChange, FileState, StateOp};
    use serde_json::json;
    use std::sync::{Arc, Barrier};

    /// Give `store` a flusher whose every sync fails: its WAL path runs
    /// through a regular file in `dir`.
    fn failing_syncs(dir: &tempfile::TempDir, store: &SqliteCommitStore) {
        let blocker = dir.path().join("not-a-dir");
        std::fs::write(&blocker, b"").unwrap();
        store
            .flusher
            .set(Flusher::start(blocker.join("store.db-wal")).unwrap())
            .unwrap();
    }

    fn fresh() -> (tempfile::TempDir, PathBuf, SqliteCommitStore) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/runs.db");
        let store = SqliteCommitStore::open(&path).unwrap();
        (dir, path, store)
    }

    #[tokio::test]
    async fn the_state_table_matches_replaying_every_commit() {
        let (_dir, _path, store) = fresh();
        store.create_run(&header("r", 1)).await.unwrap();
        let commits = mixed_writes();
        for (seq, writes) in (1..).zip(commits) {
            store
                .commit(&step("r", seq, "step", writes), Durability::Disk)
                .await
                .unwrap();
        }
        let state = store.state("r").unwrap();
        assert_eq!(state, store.load("r").await.unwrap().state().unwrap());
        assert_eq!(state, mixed_writes_applied());
    }

    #[tokio::test]
    async fn commits_of_different_runs_keep_their_statements_compiled() {
        let (_dir, _path, store) = fresh();
        for run in ["a", "b"] {
            store.create_run(&header(run, 1)).await.unwrap();
        }
        for seq in 1..=5 {
            for run in ["a", "b"] {
                store
                    .commit(&step(run, seq, "step", Vec::new()), Durability::Disk)
                    .await
                    .unwrap();
            }
        }
        let connection = store.lock();
        for sql in [
            "SELECT coalesce(max(seq), 0) FROM steps WHERE run_id = ?1",
            "SELECT thread FROM runs WHERE run_id = ?1",
        ] {
            let statement = connection.prepare_cached(sql).unwrap();
            assert_eq!(
                statement.get_status(rusqlite::StatementStatus::RePrepare),
                0,
                "`{sql}` was compiled again"
            );
        }
    }

    #[tokio::test]
    async fn a_duplicate_step_row_is_a_conflict() {
        let (_dir, _path, store) = fresh();
        store.create_run(&header("r", 1)).await.unwrap();
        let commit = step("r", 1, "x", Vec::new());
        store.commit(&commit, Durability::Disk).await.unwrap();
        let connection = store.lock();
        assert_eq!(
            store.insert_step(&connection, &commit, 1, "{}"),
            Err(CommitError::Conflict {
                run_id: "r".into(),
                seq: 1
            })
        );
    }

    #[test]
    fn threads_racing_to_open_a_new_file_and_commit_one_step_commit_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db");
        let texts = ["one", "two", "three", "four"];
        let barrier = Arc::new(Barrier::new(texts.len()));
        let racers: Vec<_> = texts
            .into_iter()
            .map(|text| {
                let path = path.clone();
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    // Both open and create at once; every failure is returned, so
                    // neither racer can leave the other waiting at the barrier.
                    let store = SqliteCommitStore::open(&path);
                    let created =
                        store.as_ref().map_err(Clone::clone).and_then(|store| {
                            match ready(store.create_run(&header("r", 1))) {
                                Err(CommitError::DuplicateRun(_)) => Ok(()),
                                other => other,
                            }
                        });
                    barrier.wait();
                    created?;
                    ready(store?.commit(&step("r", 1, text, Vec::new()), Durability::Disk))
                })
            })
            .collect();
        let results: Vec<_> = racers
            .into_iter()
            .map(|racer| racer.join().unwrap())
            .collect();
        let won = results.iter().filter(|result| result.is_ok()).count();
        let lost = results
            .iter()
            .filter(|result| matches!(result, Err(CommitError::Conflict { seq: 1, .. })))
            .count();
        assert_eq!((won, lost), (1, texts.len() - 1), "{results:?}");
        let record = ready(SqliteCommitStore::open(&path).unwrap().load("r")).unwrap();
        assert_eq!(record.last_seq(), 1);
    }

    /// The output of `future`, run to its end on the calling thread.
    fn ready<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime for one thread")
            .block_on(future)
    }

    #[tokio::test]
    async fn writes_that_reach_only_the_process_are_seen_at_once_synced_soon_and_disk_writes_wait_for_a_sync()
     {
        let (_dir, path, store) = fresh();
        let synchronous = || -> i64 {
            store
                .lock()
                .pragma_query_value(None, "synchronous", |row| row.get(0))
                .unwrap()
        };
        store.create_run(&header("r", 1)).await.unwrap();
        assert!(
            store.flusher.get().is_none(),
            "no flusher for a write SQLite syncs"
        );
        store
            .record_intent(&intent("r", 1), Durability::Process)
            .await
            .unwrap();
        store
            .commit(&step("r", 1, "x", Vec::new()), Durability::Process)
            .await
            .unwrap();
        assert_eq!(
            synchronous(),
            1,
            "NORMAL while writes reach only the process"
        );
        let other = SqliteCommitStore::open(&path).unwrap();
        assert_eq!(other.load("r").await.unwrap().commits.len(), 1);
        let flusher = store
            .flusher
            .get()
            .expect("a flusher once a write needs one");
        let start = Instant::now();
        while flusher.synced() == 0 {
            assert!(start.elapsed() < Duration::from_secs(5), "never synced");
            std::thread::sleep(Duration::from_millis(1));
        }
        let refused = store
            .record_intent(&intent("nope", 1), Durability::Process)
            .await;
        assert!(matches!(refused, Err(CommitError::UnknownRun(_))));
        store.create_run(&header("s", 2)).await.unwrap();
        assert_eq!(
            synchronous(),
            2,
            "FULL again for a write SQLite syncs itself"
        );
        let before = flusher.synced();
        store
            .commit(&step("r", 2, "y", Vec::new()), Durability::Disk)
            .await
            .unwrap();
        assert!(
            flusher.synced() > before,
            "a commit on disk is answered after the flusher's sync"
        );
        assert_eq!(synchronous(), 1, "its transaction ends in the cache");
    }

    #[tokio::test]
    async fn commits_on_disk_made_together_share_syncs_and_each_is_answered_after_one() {
        let (_dir, path, store) = fresh();
        let runs: Vec<String> = (0..32).map(|run| format!("r{run}")).collect();
        for run in &runs {
            store.create_run(&header(run, 1)).await.unwrap();
        }
        store
            .commit(&step("r0", 1, "first", Vec::new()), Durability::Disk)
            .await
            .unwrap();
        let flusher = store.flusher.get().expect("started by the first commit");
        let before = flusher.synced();
        let commits = runs[1..].iter().map(|run| {
            let store = &store;
            async move {
                store
                    .commit(&step(run, 1, "together", Vec::new()), Durability::Disk)
                    .await
                    .map(|_| flusher.synced())
            }
        });
        let mut together = Box::pin(futures_util::future::join_all(commits));
        {
            // No sync starts while every commit ends its transaction.
            let _held = flusher.hold();
            assert!(
                futures_util::FutureExt::now_or_never(&mut together).is_none(),
                "a commit on disk was answered before any sync"
            );
        }
        let answered = together.await;
        let syncs = flusher.synced() - before;
        for synced in &answered {
            let synced = synced.as_ref().expect("each commit is answered");
            assert!(*synced > before, "answered before any sync of its own");
        }
        assert_eq!(syncs, 1, "31 commits made together took {syncs} syncs");
        let other = SqliteCommitStore::open(&path).unwrap();
        for run in &runs {
            assert_eq!(other.load(run).await.unwrap().last_seq(), 1, "{run}");
        }
    }

    #[tokio::test]
    async fn a_store_opened_through_a_symbolic_link_syncs_the_file_it_writes() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.db");
        SqliteCommitStore::open(&real).unwrap();
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let store = SqliteCommitStore::open(&link).unwrap();
        store.create_run(&header("r", 1)).await.unwrap();
        // The WAL file is named after the real file; a sync of one named
        // after the link would find none and fail the commit.
        store
            .commit(&step("r", 1, "x", Vec::new()), Durability::Disk)
            .await
            .unwrap();
        assert!(dir.path().join("real.db-wal").exists());
        assert!(!dir.path().join("link.db-wal").exists());
    }

    #[tokio::test]
    async fn a_commit_whose_sync_fails_is_answered_with_the_failure_and_the_store_takes_no_more() {
        let (dir, _path, store) = fresh();
        store.create_run(&header("r", 1)).await.unwrap();
        failing_syncs(&dir, &store);
        let failed = store
            .commit(&step("r", 1, "x", Vec::new()), Durability::Disk)
            .await;
        let Err(CommitError::Storage(message)) = failed else {
            panic!("a commit whose sync failed was answered: {failed:?}");
        };
        assert!(
            message.contains(&store.path().display().to_string())
                && message.contains("run r step 1")
                && message.contains("may not survive a power loss"),
            "{message}"
        );
        // The disk may have dropped what it could not write: nothing more
        // is written, and each refusal says why.
        for _ in 0..2 {
            let refused = store.create_run(&header("s", 2)).await;
            let Err(CommitError::Storage(message)) = refused else {
                panic!("a write after a failed sync was made: {refused:?}");
            };
            assert!(message.contains("takes no more"), "{message}");
        }
    }

    #[tokio::test]
    async fn a_failed_sync_refuses_the_next_write_naming_the_file_and_is_reported_once() {
        let (dir, _path, store) = fresh();
        store.create_run(&header("r", 1)).await.unwrap();
        failing_syncs(&dir, &store);
        store
            .commit(&step("r", 1, "x", Vec::new()), Durability::Process)
            .await
            .unwrap();
        let flusher = store.flusher.get().unwrap();
        let start = Instant::now();
        while flusher.synced() == 0 {
            assert!(start.elapsed() < Duration::from_secs(5), "never synced");
            std::thread::sleep(Duration::from_millis(1));
        }
        let refused = store
            .commit(&step("r", 2, "y", Vec::new()), Durability::Disk)
            .await;
        let Err(CommitError::Storage(message)) = refused else {
            panic!("the write after a failed sync was made: {refused:?}");
        };
        assert!(
            message.contains(&store.path().display().to_string())
                && message.contains("may not survive a power loss"),
            "{message}"
        );
        assert_eq!(store.load("r").await.unwrap().commits.len(), 1);
        // Reported once: the next write is made (one that does not wait for
        // the sync, which fails again).
        store
            .commit(&step("r", 2, "y", Vec::new()), Durability::Process)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn everything_survives_reopening_the_file() {
        let (_dir, path, store) = fresh();
        store.create_run(&header("r", 7)).await.unwrap();
        let commit = step(
            "r",
            1,
            "x",
            vec![write("n", StateOp::Increment { delta: 3 })],
        );
        store.commit(&commit, Durability::Disk).await.unwrap();
        store
            .record_intent(&intent("r", 2), Durability::Disk)
            .await
            .unwrap();
        drop(store);

        let reopened = SqliteCommitStore::open(&path).unwrap();
        let record = reopened.load("r").await.unwrap();
        assert_eq!(record.header, header("r", 7));
        assert_eq!(record.commits, vec![commit]);
        assert_eq!(record.intent, Some(intent("r", 2)));
        assert_eq!(reopened.state("r").unwrap()["n"], json!(3));
        assert_eq!(reopened.runs().await.unwrap().len(), 1);
    }

    #[test]
    fn a_file_that_is_not_a_database_is_corrupt_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db");
        let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        std::fs::write(&path, &garbage).unwrap();
        match SqliteCommitStore::open(&path) {
            Err(CommitError::Corrupt { location, .. }) => assert!(location.contains("runs.db")),
            other => panic!("expected a corrupt file, got {other:?}"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), garbage);
    }

    #[test]
    fn a_newer_schema_version_is_refused_and_left_untouched() {
        let (_dir, path, store) = fresh();
        drop(store);
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        let error = SqliteCommitStore::open(&path).unwrap_err();
        assert!(
            matches!(&error, CommitError::Corrupt { location, message }
                if location.contains("runs.db")
                    && message.contains(&format!("reads version {SCHEMA_VERSION}"))),
            "{error}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn another_programs_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE things (id INTEGER PRIMARY KEY)")
            .unwrap();
        assert!(matches!(
            SqliteCommitStore::open(&path),
            Err(CommitError::Corrupt { .. })
        ));
    }

    #[tokio::test]
    async fn a_thread_state_store_reads_and_writes_what_runs_of_the_thread_see() {
        let (_dir, _path, store) = fresh();
        let store = Arc::new(store);
        let thread = crate::ThreadState::new(Arc::clone(&store), "main");
        use cordon_kernel::{StateReader, StateStore};
        thread
            .apply(&[write("notes", StateOp::Append { item: json!("n1") })])
            .unwrap();
        assert_eq!(thread.get("notes").unwrap(), Some(json!(["n1"])));
        assert_eq!(
            store.thread_state("main").await.unwrap()["notes"],
            json!(["n1"])
        );
        let refused = thread.apply(&[
            write("other", StateOp::Set { value: json!(1) }),
            write("notes", StateOp::Increment { delta: 1 }),
        ]);
        assert!(refused.is_err());
        assert_eq!(thread.get("other").unwrap(), None);
    }

    /// The tables of a version 1 file, as that version created them.
    const VERSION_1: &str = "
        CREATE TABLE runs (run_id TEXT NOT NULL PRIMARY KEY, agent TEXT NOT NULL,
            created INTEGER NOT NULL, metadata TEXT NOT NULL) STRICT;
        CREATE INDEX runs_by_age ON runs (created, run_id);
        CREATE TABLE steps (run_id TEXT NOT NULL REFERENCES runs (run_id),
            seq INTEGER NOT NULL CHECK (seq >= 1), body TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)) STRICT;
        CREATE TABLE intents (run_id TEXT NOT NULL PRIMARY KEY REFERENCES runs (run_id),
            seq INTEGER NOT NULL, body TEXT NOT NULL) STRICT;
        CREATE TABLE state (run_id TEXT NOT NULL REFERENCES runs (run_id),
            key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key)) STRICT;
    ";

    /// A file of schema `version` (1, 2 or 3) holding run `old` with step 1
    /// and an intent for step 2.
    fn old_file(dir: &Path, version: i32) -> PathBuf {
        let path = dir.join(format!("v{version}.db"));
        let connection = Connection::open(&path).unwrap();
        connection.execute_batch(VERSION_1).unwrap();
        if version >= 2 {
            connection.execute_batch(UPGRADE_FROM_1).unwrap();
        }
        if version >= 3 {
            connection.execute_batch(UPGRADE_FROM_2).unwrap();
        }
        if version >= 4 {
            connection.execute_batch(UPGRADE_FROM_3).unwrap();
        }
        connection
            .pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        connection
            .pragma_update(None, "user_version", version)
            .unwrap();
        connection
            .execute(
                "INSERT INTO runs (run_id, agent, created, metadata) VALUES ('old', 'a', 1, '{}')",
                [],
            )
            .unwrap();
        let first = serde_json::to_string(&step("old", 1, "go", Vec::new())).unwrap();
        connection
            .execute(
                "INSERT INTO steps (run_id, seq, body) VALUES ('old', 1, ?1)",
                [first],
            )
            .unwrap();
        let intent = serde_json::to_string(&intent("old", 2)).unwrap();
        connection
            .execute(
                "INSERT INTO intents (run_id, seq, body) VALUES ('old', 2, ?1)",
                [intent],
            )
            .unwrap();
        path
    }

    /// Whether `table` of the file at `path` is kept in its primary key's
    /// b-tree alone.
    fn without_rowid(path: &Path, table: &str) -> bool {
        let sql: String = Connection::open(path)
            .unwrap()
            .query_row(
                "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                [table],
                |row| row.get(0),
            )
            .unwrap();
        sql.contains("WITHOUT ROWID")
    }

    #[tokio::test]
    async fn older_files_are_upgraded_in_place_keeping_their_runs() {
        let dir = tempfile::tempdir().unwrap();
        for version in [1, 2, 3, 4] {
            let path = old_file(dir.path(), version);
            let store = SqliteCommitStore::open(&path).unwrap();
            let record = store.load("old").await.unwrap();
            assert_eq!(record.header.thread, "default");
            assert_eq!(record.commits.len(), 1, "from version {version}");
            assert_eq!(record.intent.map(|intent| intent.seq), Some(2));
            let mut second = step("old", 2, "go on", Vec::new());
            second.files = vec![FileChange {
                path: "a.txt".into(),
                before: FileState::Absent,
                after: FileState::File(b"new".as_slice().into()),
            }];
            store.commit(&second, Durability::Disk).await.unwrap();
            let record = store.load("old").await.unwrap();
            assert_eq!(record.commits.len(), 2);
            assert!(record.intent.is_none(), "the commit clears the intent");
            assert_eq!(store.files("old").await.unwrap()[0].changes, second.files);
            assert_eq!(store.published("old").await.unwrap(), 0);
            let refused = store.commit(&second, Durability::Disk).await;
            assert!(
                matches!(refused, Err(CommitError::Conflict { .. })),
                "{refused:?}"
            );
            let upgraded: i32 = Connection::open(&path)
                .unwrap()
                .pragma_query_value(None, "user_version", |row| row.get(0))
                .unwrap();
            assert_eq!(upgraded, SCHEMA_VERSION, "from version {version}");
            for table in ["steps", "intents"] {
                assert!(
                    without_rowid(&path, table),
                    "{table} from version {version}"
                );
            }
        }
        let fresh = dir.path().join("fresh.db");
        drop(SqliteCommitStore::open(&fresh).unwrap());
        for table in ["steps", "intents"] {
            assert!(without_rowid(&fresh, table), "{table} of a new file");
        }
    }

    /// The store conformance suite on SQLite files: each handle is another
    /// connection to the case's file.
    mod conformance {
        use std::sync::Arc;

        use cordon_kernel::CommitStore;
        use rusqlite::Connection;

        use crate::SqliteCommitStore;
        use crate::conformance::Backend;

        struct Sqlite {
            dir: tempfile::TempDir,
        }

        impl Sqlite {
            fn path(&self) -> std::path::PathBuf {
                self.dir.path().join("runs.db")
            }
        }

        #[async_trait::async_trait]
        impl Backend for Sqlite {
            async fn new() -> Result<Self, String> {
                let dir = tempfile::tempdir().map_err(|error| error.to_string())?;
                Ok(Self { dir })
            }

            async fn open(&self) -> Arc<dyn CommitStore> {
                Arc::new(SqliteCommitStore::open(self.path()).unwrap())
            }

            async fn damage_step(&self, run_id: &str, seq: u64) -> bool {
                let changed = Connection::open(self.path())
                    .unwrap()
                    .execute(
                        "UPDATE steps SET body = '{broken' WHERE run_id = ?1 AND seq = ?2",
                        rusqlite::params![run_id, seq as i64],
                    )
                    .unwrap();
                changed == 1
            }
        }

        crate::store_conformance!(Sqlite);
    }
}
