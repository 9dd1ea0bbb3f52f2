//! How each command opens the run store: a SQLite file (the default, one per
//! workspace) or, when `--store` is a `postgres://` URL, a Postgres database
//! that several Cordon processes share. `cordon run` and `tool call` create a
//! file store when missing, and a `.cordon/` folder they create it in gets a
//! `.gitignore` that keeps the store's files out of the project's history;
//! the commands that only read runs (`runs list`, `show`, `diff`, `resume`)
//! open a file store that exists, and never make an empty one in its place.

use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cordon_kernel::CommitStore;
use cordon_store::{LeasedStore, PostgresCommitStore, SqliteCommitStore};

use crate::error::{Result, SessionError};

/// The project's Cordon folder: the default store, where a `.gitignore` is
/// kept, and the project's operator files.
pub const PROJECT_FOLDER: &str = ".cordon";

/// Where a workspace's run store is when no `--store` names one.
pub const DEFAULT_STORE: &str = ".cordon/cordon.db";

/// The run store of `workspace`: its `.cordon/cordon.db`, so that the runs
/// over a folder live with it wherever the command is run from.
pub fn default_path(workspace: &Path) -> PathBuf {
    if workspace.as_os_str().is_empty() || workspace == Path::new(".") {
        PathBuf::from(DEFAULT_STORE)
    } else {
        workspace.join(DEFAULT_STORE)
    }
}

/// Where a command keeps its runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file.
    File(PathBuf),
    /// A Postgres database, by its URL.
    Postgres(String),
}

impl StoreLocation {
    /// The location `given` names: a `postgres://` or `postgresql://` URL is a
    /// database, anything else a file path.
    pub fn named(given: &Path) -> Self {
        match given.to_str() {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Self::Postgres(url.to_owned())
            }
            _ => Self::File(given.to_owned()),
        }
    }

    /// The store's file, for a file store.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Self::File(path) => Some(path),
            Self::Postgres(_) => None,
        }
    }
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(formatter, "{}", path.display()),
            Self::Postgres(url) => formatter.write_str(&cordon_store::without_password(url)),
        }
    }
}

/// An open run store.
#[derive(Debug, Clone)]
pub enum RunStore {
    /// A SQLite file.
    Sqlite(Arc<SqliteCommitStore>),
    /// A Postgres database.
    Postgres(Arc<PostgresCommitStore>),
    /// A Postgres database as a worker holding one run's lease writes it.
    Leased(Arc<LeasedStore>),
}

impl RunStore {
    /// The store as the kernel's commit port.
    pub fn commits(&self) -> Arc<dyn CommitStore> {
        match self {
            Self::Sqlite(store) => store.clone(),
            Self::Postgres(store) => store.clone(),
            Self::Leased(store) => store.clone(),
        }
    }
}

impl Deref for RunStore {
    type Target = dyn CommitStore;

    fn deref(&self) -> &Self::Target {
        match self {
            Self::Sqlite(store) => store.as_ref(),
            Self::Postgres(store) => store.as_ref(),
            Self::Leased(store) => store.as_ref(),
        }
    }
}

/// The store at `location`, created (a file with its folder; a database's
/// tables) when missing.
pub async fn create(location: &StoreLocation) -> Result<RunStore> {
    match location {
        StoreLocation::File(path) => {
            let store = SqliteCommitStore::open(path).map_err(|error| opening(location, error))?;
            ignore_in_git(path);
            Ok(RunStore::Sqlite(Arc::new(store)))
        }
        StoreLocation::Postgres(url) => connect(url, location).await,
    }
}

async fn connect(url: &str, location: &StoreLocation) -> Result<RunStore> {
    let store = PostgresCommitStore::connect(url)
        .await
        .map_err(|error| opening(location, error))?;
    Ok(RunStore::Postgres(Arc::new(store)))
}

/// The store at `location` could not be opened, for `error`.
fn opening(location: &StoreLocation, error: cordon_kernel::CommitError) -> SessionError {
    SessionError::Store {
        location: location.to_string(),
        error,
    }
}

/// The name a command gives a run: `last` is the newest run of the store
/// (unless a run is named so); any other name is the run's id.
pub async fn run_named(store: &dyn CommitStore, name: &str) -> Result<String> {
    if name != LAST {
        return Ok(name.to_owned());
    }
    let runs = store.runs().await?;
    if runs.iter().any(|run| run.header.run_id == LAST) {
        return Ok(LAST.to_owned());
    }
    // A sub-agent's run is part of its root's, never the newest on its own.
    runs.into_iter()
        .filter(|run| run.header.parent.is_none())
        .max_by(|a, b| {
            (a.header.created, &a.header.run_id).cmp(&(b.header.created, &b.header.run_id))
        })
        .map(|run| run.header.run_id)
        .ok_or(SessionError::NoRuns)
}

/// The name that stands for the newest run.
pub const LAST: &str = "last";

/// The store at `location`, which must exist (a database's tables are
/// created if it has none).
pub async fn existing(location: &StoreLocation) -> Result<RunStore> {
    match location {
        StoreLocation::File(path) => {
            if !path.is_file() {
                return Err(SessionError::NoStore(path.clone()));
            }
            let store = SqliteCommitStore::open(path).map_err(|error| opening(location, error))?;
            Ok(RunStore::Sqlite(Arc::new(store)))
        }
        StoreLocation::Postgres(url) => connect(url, location).await,
    }
}

/// What creating a file store would bring into being: its files, and its
/// folder when that is missing too; nothing for a store that exists or a
/// database.
#[derive(Debug)]
pub struct Fresh {
    file: Option<PathBuf>,
    folder: Option<PathBuf>,
}

impl Fresh {
    /// What creating the store at `location` would create, as things are now.
    pub fn before_creating(location: &StoreLocation) -> Self {
        let Some(file) = location.file().filter(|file| !file.exists()) else {
            return Self {
                file: None,
                folder: None,
            };
        };
        let folder = file
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty() && !folder.exists())
            .map(Path::to_owned);
        Self {
            file: Some(file.to_owned()),
            folder,
        }
    }

    /// Remove what creating the store made, once nothing holds it open: its
    /// database files, and the folder made for it with its `.gitignore`.
    pub fn discard(self) {
        let Some(file) = self.file else {
            return;
        };
        let name = file
            .file_name()
            .map(|name| name.to_string_lossy().into_owned());
        for suffix in ["", "-wal", "-shm", "-journal"] {
            if let Some(name) = &name {
                let _ = std::fs::remove_file(file.with_file_name(format!("{name}{suffix}")));
            }
        }
        if let Some(folder) = self.folder {
            let _ = std::fs::remove_file(folder.join(".gitignore"));
            let _ = std::fs::remove_dir(&folder);
        }
    }
}

/// Give the `.cordon/` folder holding the store at `path` a `.gitignore`
/// naming the store's files, unless it has one.
fn ignore_in_git(path: &Path) {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    if folder
        .file_name()
        .is_none_or(|folder| folder != PROJECT_FOLDER)
    {
        return;
    }
    let ignore = folder.join(".gitignore");
    if ignore.exists() {
        return;
    }
    let name = name.to_string_lossy();
    let text = format!(
        "# Cordon's run store: runs, their state and file changes, kept on this machine.\n\
         {name}\n{name}-*\n"
    );
    // A project that cannot take the file still has its store.
    let _ = std::fs::write(ignore, text);
}
