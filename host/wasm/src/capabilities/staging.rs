//! The staging capability: when a sandbox backend's writes are staged by the
//! host (`plugin.staging`), and the `staging` import through which the
//! backend reads and writes them. Only a backend's call in a staged run
//! holds a layer of staged files ([`CallFiles`]); for any other call nothing
//! is staged, and an attempt to stage is refused.
//!
//! Every staged path is judged like a path of the real folder: normalized
//! (no escape, no control character, never `.cordon`), then by the file guard
//! on where it would land (the run store's folder, the file rules), and a
//! change may not go through a symbolic link of the folder. A refusal is an
//! error to the component and a `denied` event; staging past the call's quota
//! stops the component, and nothing it staged is kept.

use std::path::PathBuf;

use cordon_kernel::{Capability, FileAccess, FileState};
use cordon_paths::normalize;
use serde::{Deserialize, Serialize};
use wasmtime::component::{HasData, Linker};

use crate::audit::Audit;
use crate::bindings::cordon::plugin::staging::{self, Staged};
use crate::manifest::checks::{ManifestError, Validator};
use crate::manifest::kind::BundleKind;
use crate::workspace::staging::{CallFiles, OverQuota};

use super::dirs::guard::FileGuard;
use super::unit::Imports;

/// When the host stages a sandbox backend's file writes instead of letting the
/// backend write its folder (`plugin.staging`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StagingPolicy {
    /// When the run is transactional; otherwise the backend writes its granted
    /// folder directly (or is refused, if the grant is read-only).
    #[default]
    Transactional,
    /// Always: the backend keeps nothing of its own (the `memory` backend).
    Always,
}

/// Check `plugin.staging`, which only a sandbox backend may set.
pub(crate) fn validate(
    staging: Option<StagingPolicy>,
    kind: BundleKind,
    check: &Validator<'_>,
) -> Result<StagingPolicy, ManifestError> {
    match (kind, staging) {
        (BundleKind::Sandbox, staging) => Ok(staging.unwrap_or_default()),
        (_, None) => Ok(StagingPolicy::default()),
        (_, Some(staging)) => Err(check.invalid(
            "plugin.staging",
            staging,
            &format!("only `sandbox` bundles stage writes; this bundle's kind is `{kind}`"),
        )),
    }
}

/// The error that stops a component staging past its quota.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct StagingLimitExceeded(pub(crate) String);

/// The `staging` import as one call sees it.
pub(crate) struct StagingView<'a> {
    pub(crate) files: Option<&'a mut CallFiles>,
    pub(crate) guard: &'a FileGuard,
    pub(crate) audit: &'a Audit,
}

/// The staging capability: a sandbox backend's layer of staged files.
pub(crate) struct Staging;

impl HasData for Staging {
    type Data<'a> = StagingView<'a>;
}

impl Imports for Staging {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()> {
        staging::add_to_linker::<T, Self>(linker, get)?;
        Ok(())
    }
}

impl StagingView<'_> {
    /// Where the staged path `path` (normalized) would land in the folder,
    /// for the guard; a backend without a folder stages over the workspace
    /// root's paths.
    fn landing(&self, files: &CallFiles, path: &str) -> PathBuf {
        let base = files.folder().map_or_else(
            || self.guard.root().to_owned(),
            |folder| folder.real().to_owned(),
        );
        if path.is_empty() {
            base
        } else {
            base.join(path)
        }
    }

    /// Judge `access` to the staged path `written` as written by the
    /// component: the path normalized, or why it is refused.
    fn judge(&self, written: &str, access: FileAccess) -> Result<String, String> {
        let Some(files) = self.files.as_deref() else {
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

    fn refuse(&self, target: &str, reason: String) -> Result<(), String> {
        self.audit.deny(Capability::Filesystem, target, &reason);
        Err(reason)
    }
}

/// Refuse a change beneath a directory of the real folder that is a symbolic
/// link (and not replaced by a staged entry): publishing never goes through
/// a link.
fn through_link(files: &CallFiles, path: &str) -> Result<(), String> {
    let Some(folder) = files.folder() else {
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

impl staging::Host for StagingView<'_> {
    async fn active(&mut self) -> wasmtime::Result<bool> {
        Ok(self.files.is_some())
    }

    async fn get(&mut self, path: String) -> wasmtime::Result<Result<Option<Staged>, String>> {
        if self.files.is_none() {
            return Ok(Ok(None));
        }
        let normalized = match self.judge(&path, FileAccess::Read) {
            Ok(normalized) => normalized,
            Err(reason) => return Ok(self.refuse(&path, reason).map(|()| None)),
        };
        Ok(Ok(self
            .files
            .as_deref()
            .and_then(|files| files.get(&normalized))
            .map(to_wit)))
    }

    async fn put(&mut self, path: String, entry: Staged) -> wasmtime::Result<Result<(), String>> {
        let normalized = match self.judge(&path, FileAccess::Write) {
            Ok(normalized) => normalized,
            Err(reason) => return Ok(self.refuse(&path, reason)),
        };
        let Some(files) = self.files.as_deref_mut() else {
            return Ok(Ok(()));
        };
        match files.put(normalized, from_wit(entry)) {
            Ok(()) => Ok(Ok(())),
            // Stops the component; the call ends as a `limit`.
            Err(OverQuota(detail)) => Err(StagingLimitExceeded(detail).into()),
        }
    }

    async fn under(&mut self, prefix: String) -> wasmtime::Result<Vec<(String, Staged)>> {
        let Some(files) = self.files.as_deref() else {
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

fn to_wit(entry: FileState) -> Staged {
    match entry {
        FileState::File(contents) => Staged::File(contents.to_vec()),
        FileState::Directory => Staged::Directory,
        FileState::Absent => Staged::Removed,
    }
}

fn from_wit(entry: Staged) -> FileState {
    match entry {
        Staged::File(contents) => FileState::File(contents.into()),
        Staged::Directory => FileState::Directory,
        Staged::Removed => FileState::Absent,
    }
}
