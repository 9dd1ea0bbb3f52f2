//! How each command opens the run store. `cordon run` and `tool call` create
//! it when missing, and a `.cordon/` folder they create it in gets a
//! `.gitignore` that keeps the store's files out of the project's history;
//! the commands that only read runs (`runs list`, `show`, `diff`, `resume`)
//! open a store that exists, and never make an empty one in its place.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use cordon_kernel::CommitStore;
use cordon_store::SqliteCommitStore;

/// The folder of the default store, where a `.gitignore` is kept.
const PROJECT_FOLDER: &str = ".cordon";

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

/// The store at `path`, created (with its folder) when missing.
pub fn create(path: &Path) -> anyhow::Result<SqliteCommitStore> {
    let store = SqliteCommitStore::open(path)
        .with_context(|| format!("opening the run store {}", path.display()))?;
    ignore_in_git(path);
    Ok(store)
}

/// The name a command gives a run: `last` is the newest run of the store
/// (unless a run is named so); any other name is the run's id.
pub fn run_named(store: &SqliteCommitStore, name: &str) -> anyhow::Result<String> {
    if name != LAST {
        return Ok(name.to_owned());
    }
    let runs = store.runs()?;
    if runs.iter().any(|run| run.header.run_id == LAST) {
        return Ok(LAST.to_owned());
    }
    runs.into_iter()
        .max_by(|a, b| {
            (a.header.created, &a.header.run_id).cmp(&(b.header.created, &b.header.run_id))
        })
        .map(|run| run.header.run_id)
        .ok_or_else(|| anyhow::anyhow!("`last` names the newest run, and the store has none"))
}

/// The name that stands for the newest run.
pub const LAST: &str = "last";

/// The store at `path`, which must exist.
pub fn existing(path: &Path) -> anyhow::Result<SqliteCommitStore> {
    if !path.is_file() {
        bail!(
            "no run store at {}: no run was made with it yet (`cordon run` creates it; \
             `--store` or CORDON_STORE names another)",
            path.display()
        );
    }
    SqliteCommitStore::open(path)
        .with_context(|| format!("opening the run store {}", path.display()))
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
