//! The filesystem capability: directories a bundle asks for (`[[grants.dirs]]`),
//! how they are checked (relative, inside the workspace root, never Cordon's
//! `.cordon`), resolved to canonical host paths when the bundle loads,
//! narrowed by a run, preopened for each call, and guarded on every path a call hands WASI
//! ([`wasi`]) by the run's [`FileGuard`] ([`guard`]).

pub(crate) mod guard;
pub(crate) mod reserved;
pub(crate) mod unreached;
pub(crate) mod wasi;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Component, PathBuf};
use std::sync::Arc;

use cordon_paths::RESERVED;
use serde::{Deserialize, Serialize};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::manifest::checks::{ManifestError, Validator, is_contained_relative};
use crate::manifest::kind::BundleKind;

use super::unit::Grant;

use guard::FileGuard;
use wasi::Listings;

/// A directory the component sees at `guest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirGrant {
    /// Host directory, relative to the operator's workspace root; never outside it.
    pub host: PathBuf,
    /// Absolute path at which the component sees the directory.
    pub guest: String,
    /// Whether the component may change it.
    pub mode: DirMode,
}

/// Access to a granted directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirMode {
    /// Read only.
    Ro,
    /// Read and write.
    Rw,
}

impl fmt::Display for DirMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ro => "ro",
            Self::Rw => "rw",
        })
    }
}

/// A directory grant with its host path resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedDir {
    /// Canonical host path.
    pub host: PathBuf,
    /// Path the component sees.
    pub guest: String,
    /// Access mode.
    pub mode: DirMode,
}

/// The filesystem capability.
pub(crate) struct Dirs;

impl Grant for Dirs {
    const SAID: u8 = 2;

    type Asked = Vec<DirGrant>;

    fn validate(
        dirs: &Vec<DirGrant>,
        _kind: BundleKind,
        check: &Validator<'_>,
    ) -> Result<(), ManifestError> {
        validate(dirs, check)
    }

    fn is_empty(dirs: &Vec<DirGrant>) -> bool {
        dirs.is_empty()
    }

    /// One line per grant.
    fn describe(dirs: &Vec<DirGrant>) -> Vec<String> {
        dirs.iter()
            .map(|dir| format!("dir {} -> {} ({})", dir.host.display(), dir.guest, dir.mode))
            .collect()
    }

    /// A directory is covered by an approval of the same host folder at the
    /// same guest path, read-write covering read-only.
    fn beyond(asked: &Vec<DirGrant>, approved: &Vec<DirGrant>) -> Vec<String> {
        beyond(asked, approved)
    }

    /// Untrusted code sees its folders read-only.
    fn untrusted(dirs: &mut Vec<DirGrant>) -> Vec<String> {
        let mut taken = Vec::new();
        for dir in dirs {
            if dir.mode == DirMode::Rw {
                dir.mode = DirMode::Ro;
                taken.push(format!(
                    "writing dir {} (untrusted code sees its folders read-only)",
                    dir.host.display()
                ));
            }
        }
        taken
    }
}

/// Check `grants.dirs`: each host path relative and inside the workspace
/// root, never Cordon's run store; each guest path absolute and granted once.
fn validate(dirs: &[DirGrant], check: &Validator<'_>) -> Result<(), ManifestError> {
    let mut guests = BTreeSet::new();
    for (index, dir) in dirs.iter().enumerate() {
        let host_field = format!("grants.dirs[{index}].host");
        if !is_contained_relative(&dir.host) {
            return Err(check.invalid(
                &host_field,
                &dir.host,
                "must be a relative path inside the workspace root, without `..`",
            ));
        }
        let first = dir
            .host
            .components()
            .find(|part| *part != Component::CurDir);
        if first.is_some_and(|part| part.as_os_str() == RESERVED) {
            return Err(check.invalid(
                &host_field,
                &dir.host,
                &format!("`{RESERVED}` holds Cordon's run store; no bundle is granted it"),
            ));
        }
        let guest_field = format!("grants.dirs[{index}].guest");
        let guest_ok = dir.guest.starts_with('/')
            && !dir.guest.split('/').any(|part| part == ".." || part == ".");
        if !guest_ok {
            return Err(check.invalid(
                &guest_field,
                &dir.guest,
                "must be an absolute guest path without `.` or `..`",
            ));
        }
        if !guests.insert(dir.guest.as_str()) {
            return Err(check.invalid(&guest_field, &dir.guest, "is granted twice"));
        }
    }
    Ok(())
}

/// What of `asked` the operator's `approved` does not cover, one line each: a
/// directory is covered by an approval of the same host folder at the same
/// guest path, read-write covering read-only.
fn beyond(asked: &[DirGrant], approved: &[DirGrant]) -> Vec<String> {
    asked
        .iter()
        .filter(|dir| {
            !approved.iter().any(|ok| {
                ok.host == dir.host
                    && ok.guest == dir.guest
                    && (ok.mode == DirMode::Rw || dir.mode == DirMode::Ro)
            })
        })
        .map(|dir| format!("dir {} -> {} ({})", dir.host.display(), dir.guest, dir.mode))
        .collect()
}

/// The grants `dirs` as a run narrows them: without the one seen at
/// `withheld`, if any, and all read-only when `read_only`.
pub(crate) fn narrowed(
    dirs: &[ResolvedDir],
    withheld: Option<&str>,
    read_only: bool,
) -> Vec<ResolvedDir> {
    dirs.iter()
        .filter(|dir| withheld != Some(dir.guest.as_str()))
        .map(|dir| ResolvedDir {
            mode: if read_only { DirMode::Ro } else { dir.mode },
            ..dir.clone()
        })
        .collect()
}

/// Preopen `dirs` for one call, each with the access its mode gives.
pub(crate) fn preopen(wasi: &mut WasiCtxBuilder, dirs: &[ResolvedDir]) -> wasmtime::Result<()> {
    for dir in dirs {
        let perms = match dir.mode {
            DirMode::Ro => FsPerms::ReadOnly,
            DirMode::Rw => FsPerms::ReadWrite,
        };
        wasi.preopened_dir(&dir.host, &dir.guest, perms)?;
    }
    Ok(())
}

/// What one call's file accesses obey and remember.
pub(crate) struct DirAccess {
    /// What the call's file accesses may reach.
    pub(crate) guard: Arc<FileGuard>,
    /// The directory listings the call has open.
    pub(crate) listings: Listings,
    /// Whether the call runs on a thread of its own, which its file
    /// operations may block.
    pub(crate) own_thread: bool,
}

impl DirAccess {
    /// Access under `guard`; `own_thread` when the call has a thread of its own.
    pub(crate) fn new(guard: Arc<FileGuard>, own_thread: bool) -> Self {
        Self {
            guard,
            listings: Listings::default(),
            own_thread,
        }
    }
}
