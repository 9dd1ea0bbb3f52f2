//! Noticing that a plugins folder changed, so the served tools follow it:
//! a bundle added, rebuilt or removed. File events arrive in bursts (a copy
//! is many writes), so a change is acted on once the folder has been quiet
//! for a moment, and once per burst.

use std::path::PathBuf;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

/// How long the folder stays quiet before a change is acted on.
pub const QUIET: Duration = Duration::from_millis(400);

/// Watches one folder; dropping it stops the watching.
pub struct FolderWatch {
    _watcher: notify::RecommendedWatcher,
    changes: mpsc::UnboundedReceiver<()>,
}

impl FolderWatch {
    /// Watch every one of `dirs` and everything under them.
    pub fn new(dirs: &[PathBuf]) -> notify::Result<Self> {
        let (sender, changes) = mpsc::unbounded_channel();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let touches = event.is_ok_and(|event| !event.kind.is_access());
                if touches {
                    let _ = sender.send(());
                }
            })?;
        for dir in dirs {
            watcher.watch(dir, RecursiveMode::Recursive)?;
        }
        Ok(Self {
            _watcher: watcher,
            changes,
        })
    }

    /// Wait for the next burst of changes to end; `None` once watching
    /// stopped.
    pub async fn settled(&mut self) -> Option<()> {
        self.changes.recv().await?;
        loop {
            match tokio::time::timeout(QUIET, self.changes.recv()).await {
                Ok(Some(())) => continue,
                Ok(None) => return None,
                Err(_) => return Some(()),
            }
        }
    }
}
