//! Which runs of a store in a file a process drives right now. The process
//! that drives a run (`cordon run`, `cordon runs resume`) holds an exclusive
//! lock on `<store>-driving/<run>` for as long as it does; the operating
//! system lets the lock go however the process ends, by Ctrl-C, a closed pipe
//! or `kill -9`. So a run whose last commit says it is running and whose lock
//! nobody holds was interrupted: nothing drives it, and `runs resume` goes on
//! from its last commit. A second process is refused the run while the first
//! drives it, instead of racing it to the next commit.
//!
//! Runs in Postgres are driven by workers under leases, which say the same
//! of them across machines.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A run this process drives: the lock is held until it is dropped.
#[derive(Debug)]
pub struct Driving {
    _lock: File,
    path: PathBuf,
}

/// Why a run cannot be driven here.
#[derive(Debug, thiserror::Error)]
pub enum DrivingError {
    /// Another process drives it now.
    #[error(
        "run {run_id} is driven by another process right now ({holder}); wait for it to stop, or stop it"
    )]
    Driven {
        /// The run.
        run_id: String,
        /// What the other process wrote of itself.
        holder: String,
    },
    /// The lock file cannot be made or locked.
    #[error("cannot record that this process drives run {run_id} in {}: {source}", path.display())]
    Io {
        /// The run.
        run_id: String,
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The folder of the locks of the runs of the store in the file `store`.
fn folder(store: &Path) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_owned();
    name.push("-driving");
    store.with_file_name(name)
}

/// The lock file of run `run_id`. Run ids are file names: a name with a
/// path separator in it is written with `%2F`.
fn lock_path(store: &Path, run_id: &str) -> PathBuf {
    folder(store).join(run_id.replace('%', "%25").replace('/', "%2F"))
}

impl Driving {
    /// Drive run `run_id` of the store in the file `store`: refused while
    /// another process drives it.
    pub fn take(store: &Path, run_id: &str) -> Result<Self, DrivingError> {
        let path = lock_path(store, run_id);
        let io = |source| DrivingError::Io {
            run_id: run_id.to_owned(),
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(folder(store)).map_err(io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                return Err(DrivingError::Driven {
                    run_id: run_id.to_owned(),
                    holder: if holder.trim().is_empty() {
                        "it has not said which".to_owned()
                    } else {
                        holder.trim().to_owned()
                    },
                });
            }
            Err(TryLockError::Error(error)) => return Err(io(error)),
        }
        file.set_len(0).map_err(io)?;
        write!(file, "process {}", std::process::id()).map_err(io)?;
        Ok(Self { _lock: file, path })
    }
}

impl Drop for Driving {
    fn drop(&mut self) {
        // Removed while still locked, so no one finds a stale file; if this
        // fails, the unlocked file still says the run is not driven.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether a process drives run `run_id` of the store in the file `store`
/// right now.
pub fn is_driven(store: &Path, run_id: &str) -> bool {
    let Ok(file) = File::open(lock_path(store, run_id)) else {
        return false;
    };
    matches!(file.try_lock_shared(), Err(TryLockError::WouldBlock))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_driven_while_its_driver_lives_and_by_one_process_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("cordon.db");
        assert!(!is_driven(&store, "r1"));
        let driving = Driving::take(&store, "r1").unwrap();
        assert!(is_driven(&store, "r1"));
        assert!(!is_driven(&store, "r2"), "each run has its own lock");
        // The lock belongs to the open file: a second open is refused, as
        // another process would be.
        let refused = Driving::take(&store, "r1").unwrap_err();
        assert!(
            refused
                .to_string()
                .contains(&format!("process {}", std::process::id())),
            "{refused}"
        );
        drop(driving);
        assert!(!is_driven(&store, "r1"));
        assert!(!lock_path(&store, "r1").exists(), "no stale file is left");
        assert_eq!(lock_path(&store, "a/b%c").file_name().unwrap(), "a%2Fb%25c");
    }
}
