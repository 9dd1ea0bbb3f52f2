//! Agent state in one JSON file, for single-operator use from the CLI.
//!
//! Every commit reads the file, applies the batch in memory, writes a temporary
//! file beside it, syncs it and renames it over the original, all under an
//! exclusive lock on a sibling `.lock` file. A crash at any point leaves either
//! the old or the new file, never a mix. A file that does not parse is reported
//! with its path and never overwritten.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use cordon_kernel::{StateReader, StateStore, StateStoreError, StateWrite, apply_writes};
use serde_json::Value;

/// A [`StateStore`] backed by a JSON object in a file.
#[derive(Debug, Clone)]
pub struct JsonFileStateStore {
    path: PathBuf,
}

impl JsonFileStateStore {
    /// A store at `path`. The file and its directory are created on first commit.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// Where the state lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every committed key and value.
    pub fn snapshot(&self) -> Result<BTreeMap<String, Value>, StateStoreError> {
        self.read()
    }

    fn io(&self, source: std::io::Error) -> StateStoreError {
        StateStoreError::Io {
            location: self.path.display().to_string(),
            source,
        }
    }

    fn read(&self) -> Result<BTreeMap<String, Value>, StateStoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(BTreeMap::new());
            }
            Err(error) => return Err(self.io(error)),
        };
        serde_json::from_str(&text).map_err(|error| StateStoreError::Corrupt {
            location: self.path.display().to_string(),
            message: format!("{error} (the file was left untouched)"),
        })
    }

    fn lock(&self) -> Result<File, StateStoreError> {
        let mut lock_path = self.path.clone().into_os_string();
        lock_path.push(".lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|error| self.io(error))?;
        lock.lock().map_err(|error| self.io(error))?;
        Ok(lock)
    }
}

impl StateReader for JsonFileStateStore {
    fn get(&self, key: &str) -> Result<Option<Value>, StateStoreError> {
        Ok(self.read()?.remove(key))
    }
}

impl StateStore for JsonFileStateStore {
    fn apply(&self, writes: &[StateWrite]) -> Result<(), StateStoreError> {
        if writes.is_empty() {
            return Ok(());
        }
        let dir = self
            .path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|error| self.io(error))?;
        let _lock = self.lock()?;
        let mut values = self.read()?;
        apply_writes(&mut values, writes)?;
        let mut text =
            serde_json::to_string_pretty(&values).map_err(|error| StateStoreError::Corrupt {
                location: self.path.display().to_string(),
                message: error.to_string(),
            })?;
        text.push('\n');
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|error| self.io(error))?;
        file.write_all(text.as_bytes())
            .map_err(|error| self.io(error))?;
        file.as_file().sync_all().map_err(|error| self.io(error))?;
        file.persist(&self.path)
            .map_err(|error| self.io(error.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_kernel::StateOp;
    use serde_json::json;

    fn set(key: &str, value: Value) -> StateWrite {
        StateWrite {
            key: key.into(),
            op: StateOp::Set { value },
        }
    }

    #[test]
    fn committed_values_survive_a_new_store_on_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/state.json");
        JsonFileStateStore::new(&path)
            .apply(&[set("a", json!({"x": 1}))])
            .unwrap();
        let reopened = JsonFileStateStore::new(&path);
        assert_eq!(reopened.get("a").unwrap(), Some(json!({"x": 1})));
        assert_eq!(reopened.get("b").unwrap(), None);
    }

    #[test]
    fn a_corrupt_file_is_reported_by_path_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "{not json").unwrap();
        let store = JsonFileStateStore::new(&path);
        let error = store.apply(&[set("a", json!(1))]).unwrap_err().to_string();
        assert!(error.contains("state.json"), "{error}");
        assert!(matches!(
            store.get("a"),
            Err(StateStoreError::Corrupt { .. })
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }

    #[test]
    fn a_rejected_batch_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let store = JsonFileStateStore::new(dir.path().join("state.json"));
        store.apply(&[set("name", json!("x"))]).unwrap();
        let before = std::fs::read_to_string(store.path()).unwrap();
        let bad = StateWrite {
            key: "name".into(),
            op: StateOp::Increment { delta: 1 },
        };
        assert!(store.apply(&[set("other", json!(2)), bad]).is_err());
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), before);
    }
}
