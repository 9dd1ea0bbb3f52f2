//! The `staging` import as the host implements it for one call. Only a
//! sandbox backend's call in a staged run holds the run's staged files; for
//! any other call nothing is staged, and an attempt to stage is refused,
//! audited, and stops the component.

use cordon_kernel::Capability;

use crate::bindings::cordon::plugin::staging::{self, Staged};
use crate::sandbox::CallState;

use super::paths::normalize;
use super::staging::Entry;

/// The error that stops a component staging what it may not.
#[derive(Debug, thiserror::Error)]
#[error("staging refused: {0}")]
pub(crate) struct StagingRefused(pub(crate) String);

impl staging::Host for CallState {
    async fn active(&mut self) -> wasmtime::Result<bool> {
        Ok(self.files.is_some())
    }

    async fn get(&mut self, path: String) -> wasmtime::Result<Option<Staged>> {
        let (Some(files), Ok(path)) = (&self.files, normalize(&path)) else {
            return Ok(None);
        };
        Ok(files.get(&path).map(to_wit))
    }

    async fn put(&mut self, path: String, entry: Staged) -> wasmtime::Result<()> {
        let Some(files) = self.files.clone() else {
            let reason = "this call has no staged workspace";
            self.deny(Capability::Filesystem, &path, reason);
            return Err(StagingRefused(reason.to_owned()).into());
        };
        let normalized = match normalize(&path) {
            Ok(normalized) if !normalized.is_empty() => normalized,
            Ok(_) => {
                let reason = "the workspace root cannot be staged";
                self.deny(Capability::Filesystem, &path, reason);
                return Err(StagingRefused(reason.to_owned()).into());
            }
            Err(error) => {
                let reason = error.to_string();
                self.deny(Capability::Filesystem, &path, &reason);
                return Err(StagingRefused(reason).into());
            }
        };
        files.put(normalized, from_wit(entry));
        Ok(())
    }

    async fn under(&mut self, prefix: String) -> wasmtime::Result<Vec<(String, Staged)>> {
        let (Some(files), Ok(prefix)) = (&self.files, normalize(&prefix)) else {
            return Ok(Vec::new());
        };
        Ok(files
            .under(&prefix)
            .into_iter()
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
