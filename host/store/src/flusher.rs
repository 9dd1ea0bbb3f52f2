//! Takes a SQLite store's writes to disk after their transaction ended,
//! off the thread that made them.
//!
//! Such a write's transaction ends once its pages are in the WAL file, in the
//! operating system's cache, without waiting for the disk. The flusher's
//! thread syncs the WAL file; one sync serves every write made before it
//! began, so writes made together share it.
//!
//! - A write asked to reach only out of the process
//!   ([`Durability::Process`](cordon_kernel::Durability::Process)) is synced
//!   at most [`FLUSH_WITHIN`] after the first write the flusher was told of:
//!   a power loss loses at most that window of writes, and SQLite's own
//!   checks make it lose whole transactions only. A sync that fails is kept
//!   and handed to the store's next write, which reports it: the writes
//!   before it may not be on disk.
//! - A write that must be on disk before it is answered
//!   ([`Durability::Disk`](cordon_kernel::Durability::Disk)) asks for a sync
//!   at once and waits for one that began after it ended ([`Flusher::on_disk`]).
//!   While one sync runs, the writes that end meanwhile wait for the next,
//!   so many writers share one sync (group commit) and none waits on another's
//!   thread. A sync that fails is the error of every write waiting for it,
//!   and the store takes no more writes: the kernel may have dropped the
//!   pages it could not write and report the next sync clean.
//!
//! The WAL file is opened once and kept open, so a failure of the kernel's
//! own writeback is reported to the sync that follows it. Dropping the
//! flusher syncs what is still due before it returns.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::oneshot;

/// How long after a write that reached only the process it is on disk.
pub const FLUSH_WITHIN: Duration = Duration::from_millis(10);

/// The thread that syncs one store's WAL file.
#[derive(Debug)]
pub(crate) struct Flusher {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct Shared {
    wal: PathBuf,
    pending: Mutex<Pending>,
    wake: Condvar,
    /// Held by a test to keep the thread from starting a sync.
    #[cfg(test)]
    hold: Mutex<()>,
}

/// A write waiting for the sync that takes it to disk: the number of writes
/// that had ended when it did, and where the sync's outcome goes.
type Waiter = (u64, oneshot::Sender<Result<(), String>>);

#[derive(Debug, Default)]
struct Pending {
    /// How many writes have ended, counted as they tell the flusher.
    written: u64,
    /// A write waits for a sync within the window.
    due: bool,
    /// Writes wait for a sync now.
    waiting: Vec<Waiter>,
    /// The flusher is being dropped.
    closing: bool,
    /// How many syncs have ended, for the tests.
    synced: u64,
    /// The last sync's failure, until the store reports it.
    failure: Option<io::Error>,
    /// Why a sync that writes waited for failed: the disk may have dropped
    /// writes since, so the store takes no more.
    broken: Option<String>,
}

/// The outcome of the sync a write waits for: `Ok` once it is on disk.
pub(crate) type OnDisk = oneshot::Receiver<Result<(), String>>;

impl Flusher {
    /// A flusher for the WAL file at `wal`, its thread started.
    pub(crate) fn start(wal: PathBuf) -> io::Result<Self> {
        let shared = Arc::new(Shared {
            wal,
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            #[cfg(test)]
            hold: Mutex::new(()),
        });
        let thread = std::thread::Builder::new()
            .name("cordon-store-flush".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || shared.run()
            })?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// A write that reached only the process has ended: sync it soon.
    pub(crate) fn written(&self) {
        let mut pending = self.shared.lock();
        pending.written += 1;
        if !pending.due {
            pending.due = true;
            self.shared.wake.notify_all();
        }
    }

    /// A write that must reach the disk has ended: sync it now, with every
    /// write that ends before the sync begins. The receiver answers once
    /// a sync that began after this write ended is over.
    pub(crate) fn on_disk(&self) -> OnDisk {
        let (sender, receiver) = oneshot::channel();
        let mut pending = self.shared.lock();
        pending.written += 1;
        let mark = pending.written;
        pending.waiting.push((mark, sender));
        self.shared.wake.notify_all();
        receiver
    }

    /// What a write waits for when no flusher was started: a failure.
    pub(crate) fn gone() -> OnDisk {
        let (sender, receiver) = oneshot::channel();
        let _ = sender.send(Err("no thread was started to sync it".to_owned()));
        receiver
    }

    /// The failure of a sync since the last call, if one failed.
    pub(crate) fn take_failure(&self) -> Option<io::Error> {
        self.shared.lock().failure.take()
    }

    /// Why the store takes no more writes, once a sync that writes waited
    /// for failed.
    pub(crate) fn broken(&self) -> Option<String> {
        self.shared.lock().broken.clone()
    }

    /// How many syncs have ended.
    #[cfg(test)]
    pub(crate) fn synced(&self) -> u64 {
        self.shared.lock().synced
    }

    /// Keep the thread from starting a sync until the guard is dropped.
    #[cfg(test)]
    pub(crate) fn hold(&self) -> MutexGuard<'_, ()> {
        self.shared
            .hold
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            // The thread only syncs and sleeps; a panic there has nothing to
            // hand back.
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn run(&self) {
        let mut wal = None;
        loop {
            let mut pending = self.lock();
            while !pending.due && pending.waiting.is_empty() && !pending.closing {
                pending = self
                    .wake
                    .wait(pending)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if !pending.due && pending.waiting.is_empty() {
                return;
            }
            if pending.waiting.is_empty() && !pending.closing {
                // Gather the writes of the window into one sync; a write
                // waiting for the disk or a close cuts the wait short.
                pending = self
                    .wake
                    .wait_timeout_while(pending, FLUSH_WITHIN, |pending| {
                        !pending.closing && pending.waiting.is_empty()
                    })
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            #[cfg(test)]
            let pending = {
                drop(pending);
                let _held = self.hold.lock().unwrap_or_else(PoisonError::into_inner);
                self.lock()
            };
            #[cfg(test)]
            let mut pending = pending;
            // Every write that ended so far is in the file's cache, so
            // this sync takes each of them to disk.
            pending.due = false;
            let through = pending.written;
            drop(pending);
            let synced = self.sync(&mut wal);
            let mut pending = self.lock();
            pending.synced += 1;
            let (served, later) = std::mem::take(&mut pending.waiting)
                .into_iter()
                .partition(|(mark, _)| *mark <= through);
            pending.waiting = later;
            let told = synced.as_ref().map(drop).map_err(ToString::to_string);
            match (synced, served.is_empty()) {
                (Ok(()), _) => {}
                // Each waiting write is told; after a failed sync the kernel
                // may have dropped the pages it could not write and report
                // the next sync clean, so nothing more is written.
                (Err(error), false) => pending.broken = Some(error.to_string()),
                (Err(error), true) => pending.failure = Some(error),
            }
            drop(pending);
            for (_, sender) in served {
                // A writer that stopped waiting has nobody to tell.
                let _ = sender.send(told.clone());
            }
        }
    }

    /// Sync the WAL file, opened at the first sync and kept open. A write
    /// has ended in it before any sync is asked for, so a missing one is an
    /// error: the file is not where the store's writes went.
    fn sync(&self, wal: &mut Option<File>) -> io::Result<()> {
        if wal.is_none() {
            let opened = File::open(&self.wal).map_err(|error| {
                io::Error::new(
                    error.kind(),
                    format!("opening {}: {error}", self.wal.display()),
                )
            })?;
            *wal = Some(opened);
        }
        wal.as_ref().map_or(Ok(()), File::sync_data)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn wait_for(flusher: &Flusher, syncs: u64) {
        let start = Instant::now();
        while flusher.synced() < syncs {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "no sync within 5 s"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_write_is_synced_within_the_window_and_many_writes_share_one_sync() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("store.db-wal");
        std::fs::write(&wal, b"frames").unwrap();
        let flusher = Flusher::start(wal).unwrap();
        assert_eq!(flusher.synced(), 0, "nothing synced before a write");
        for _ in 0..100 {
            flusher.written();
        }
        wait_for(&flusher, 1);
        std::thread::sleep(FLUSH_WITHIN * 3);
        assert_eq!(flusher.synced(), 1, "one sync for the writes of a window");
        flusher.written();
        wait_for(&flusher, 2);
        assert!(flusher.take_failure().is_none());
    }

    #[test]
    fn dropping_the_flusher_syncs_what_is_due_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let flusher = Flusher::start(dir.path().join("store.db-wal")).unwrap();
        let shared = Arc::clone(&flusher.shared);
        flusher.written();
        let start = Instant::now();
        drop(flusher);
        assert_eq!(shared.lock().synced, 1, "the due write was synced");
        assert!(start.elapsed() < FLUSH_WITHIN * 50);
    }

    #[test]
    fn a_failed_sync_is_kept_for_the_next_write_to_report() {
        // A path through a regular file: opening it fails with ENOTDIR.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let flusher = Flusher::start(file.join("store.db-wal")).unwrap();
        flusher.written();
        wait_for(&flusher, 1);
        assert!(flusher.take_failure().is_some(), "the failure is kept");
        assert!(flusher.take_failure().is_none(), "and reported once");
    }
}
