//! The `staging` import as the host implements it for one call. Only a
//! sandbox backend's call in a staged run holds the run's staged files; for
//! any other call nothing is staged, and an attempt to stage is refused.
//!
//! Every staged path is judged like a path of the real folder: normalized
//! (no escape, no control character, never `.cordon`), then by the file guard
//! on where it would land (the run store's folder, the file rules), and a
//! change may not go through a symbolic link of the folder. A refusal is an
//! error to the component and a `denied` event; staging past the call's quota
//! stops the component, and nothing it staged is kept.

use std::path::PathBuf;

use cordon_kernel::{Capability, FileAccess};

use crate::bindings::cordon::plugin::staging::{self, Staged};
use crate::sandbox::CallState;

use super::paths::normalize;
use super::staging::{CallFiles, Entry, OverQuota};

/// The error that stops a component staging past its quota.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct StagingLimitExceeded(pub(crate) String);

impl CallState {
    /// Where the staged path `path` (normalized) would land in the folder,
    /// for the guard; a backend without a folder stages over the workspace
    /// root's paths.
    fn landing(&self, files: &CallFiles, path: &str) -> PathBuf {
        let base = files.staging().folder().map_or_else(
            || self.guard.root().to_owned(),
            |folder| folder.real().to_owned(),
        );
        if path.is_empty() {
            base
        } else {
            base.join(path)
        }
    }

    /// Judge `access` to the staged path `path` as written by the component:
    /// the path normalized, or why it is refused.
    fn judge_staged(&self, written: &str, access: FileAccess) -> Result<String, String> {
        let Some(files) = &self.files else {
            return Err("this call has no staged workspace".into());
        };
        let path = normalize(written).map_err(|error| error.to_string())?;
        self.guard
            .check(&self.landing(files, &path), access)
            .map_err(|refused| refused.0)?;
        if access == FileAccess::Write {
            if path.is_empty() {
                return Err("the workspace root cannot be staged".into());
            }
            through_link(files, &path)?;
        }
        Ok(path)
    }

    fn refuse_staging(&self, target: &str, reason: String) -> Result<(), String> {
        self.deny(Capability::Filesystem, target, &reason);
        Err(reason)
    }
}

/// Refuse a change beneath a directory of the real folder that is a symbolic
/// link (and not replaced by a staged entry): publishing never goes through
/// a link.
fn through_link(files: &CallFiles, path: &str) -> Result<(), String> {
    let Some(folder) = files.staging().folder() else {
        return Ok(());
    };
    for (slash, _) in path.match_indices('/') {
        let ancestor = &path[..slash];
        if files.get(ancestor).is_none() && folder.is_link(ancestor) {
            return Err(format!(
                "`{ancestor}` is a symbolic link, and changes never go through one"
            ));
        }
    }
    Ok(())
}

impl staging::Host for CallState {
    async fn active(&mut self) -> wasmtime::Result<bool> {
        Ok(self.files.is_some())
    }

    async fn get(&mut self, path: String) -> wasmtime::Result<Result<Option<Staged>, String>> {
        if self.files.is_none() {
            return Ok(Ok(None));
        }
        let normalized = match self.judge_staged(&path, FileAccess::Read) {
            Ok(normalized) => normalized,
            Err(reason) => return Ok(self.refuse_staging(&path, reason).map(|()| None)),
        };
        Ok(Ok(self
            .files
            .as_ref()
            .and_then(|files| files.get(&normalized))
            .map(to_wit)))
    }

    async fn put(&mut self, path: String, entry: Staged) -> wasmtime::Result<Result<(), String>> {
        let normalized = match self.judge_staged(&path, FileAccess::Write) {
            Ok(normalized) => normalized,
            Err(reason) => return Ok(self.refuse_staging(&path, reason)),
        };
        let Some(files) = self.files.as_mut() else {
            return Ok(Ok(()));
        };
        match files.put(normalized, from_wit(entry)) {
            Ok(()) => Ok(Ok(())),
            // Stops the component; the call ends as a `limit`.
            Err(OverQuota(detail)) => Err(StagingLimitExceeded(detail).into()),
        }
    }

    async fn under(&mut self, prefix: String) -> wasmtime::Result<Vec<(String, Staged)>> {
        let Some(files) = &self.files else {
            return Ok(Vec::new());
        };
        let Ok(prefix) = normalize(&prefix) else {
            return Ok(Vec::new());
        };
        let base = self.landing(files, "");
        Ok(files
            .under(&prefix)
            .into_iter()
            .filter(|(path, _)| !self.guard.hides(&base.join(path)))
            .map(|(path, entry)| (path, to_wit(entry)))
            .collect())
    }
}

fn to_wit(entry: Entry) -> Staged {
    match entry {
        Entry::File(contents) => Staged::File(contents.as_ref().clone()),
        Entry::Directory => Staged::Directory,
        Entry::Removed => Staged::Removed,
    }
}

fn from_wit(entry: Staged) -> Entry {
    match entry {
        Staged::File(contents) => Entry::File(std::sync::Arc::new(contents)),
        Staged::Directory => Entry::Directory,
        Staged::Removed => Entry::Removed,
    }
}
