//! The agent's workspace: a sandbox backend bundle bound to one run, the
//! neutral tools that reach it, and the host-kept staging of its file
//! changes.
//!
//! A run binds one backend ([`Plugins::workspace`]). Its writes are staged
//! when the run is transactional or the backend always stages (`memory`):
//! the backend then sees its folder read-only, each call's writes land in a
//! layer of its own that comes back with its outcome, the loop commits a
//! step's changes with the step through [`Staging`] and publishes them to
//! the folder after the receipt, and only if the backend's grant of the
//! folder is read-write. Otherwise the backend writes its folder directly,
//! as its grant allows.

mod backend;
pub(crate) mod folder;
pub mod paths;
pub(crate) mod staging;
mod tools;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use cordon_kernel::{FileLedger, ToolSet};

use crate::bundle::Exports;
use crate::capabilities::dirs::{self, DirMode, ResolvedDir};
use crate::capabilities::interpreters::runner::Interpreters;
use crate::capabilities::staging::StagingPolicy;
use crate::manifest::BundleKind;
use crate::plugins::Plugins;

pub use staging::Staging;
pub use tools::WorkspaceTools;

use backend::Backend;
use folder::Folder;

/// Where a sandbox backend mounts its workspace folder.
pub const WORKSPACE_GUEST_PATH: &str = "/workspace";

/// How a run uses its backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceOptions {
    /// Stage file writes and commit them with each step (the default for
    /// untrusted agents).
    pub transactional: bool,
    /// Give the backend its folder grant; without it a `memory` backend
    /// starts empty.
    pub seed: bool,
}

/// How a bound workspace handles writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// The backend writes its folder as its grant allows.
    Direct,
    /// Writes are staged and committed with each step.
    Staged {
        /// Whether committed changes reach the folder.
        publishes: bool,
    },
}

/// Why a backend cannot be bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    /// No loaded bundle has this name.
    #[error("no sandbox backend named `{name}` is loaded; sandbox bundles: [{}]", available.join(", "))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names of the sandbox bundles that are loaded.
        available: Vec<String>,
    },
    /// The bundle is not a sandbox backend.
    #[error("bundle `{name}` is a {kind} bundle, not a sandbox backend")]
    NotASandbox {
        /// The bundle's name.
        name: String,
        /// Its kind.
        kind: BundleKind,
    },
    /// The backend's folder cannot be opened.
    #[error("cannot open the workspace folder {folder}: {message}")]
    Folder {
        /// The folder.
        folder: String,
        /// Why it cannot be opened.
        message: String,
    },
}

/// A backend bound to a run: its tools and its file ledger.
#[derive(Clone)]
pub struct Workspace {
    tools: Arc<WorkspaceTools>,
    staging: Option<Arc<Staging>>,
    mode: WriteMode,
    folder: Option<ResolvedDir>,
}

impl Workspace {
    /// The neutral tools, routed to the backend.
    pub fn tools(&self) -> Arc<dyn ToolSet> {
        Arc::clone(&self.tools) as Arc<dyn ToolSet>
    }

    /// The ledger the loop commits staged changes through; `None` when writes
    /// are direct.
    pub fn ledger(&self) -> Option<Arc<dyn FileLedger>> {
        self.staging
            .as_ref()
            .map(|staging| Arc::clone(staging) as Arc<dyn FileLedger>)
    }

    /// How writes are handled.
    pub fn mode(&self) -> WriteMode {
        self.mode
    }

    /// The host folder the backend works on, if it has one.
    pub fn folder(&self) -> Option<&std::path::Path> {
        self.folder.as_ref().map(|dir| dir.host.as_path())
    }

    /// This workspace with the folders of the run's skills, by skill: while
    /// a skill is active, its folder is mounted read-only at `/skills/NAME`
    /// for the built-in tools and the backend, and its approved Python
    /// packages' folder, if it has one, at `/packages/NAME` for the
    /// interpreters. The run's safeguards must name the folders too
    /// ([`Safeguards::skills`](crate::Safeguards::skills),
    /// [`Safeguards::packages`](crate::Safeguards::packages)), so that the
    /// file layer lets them be read.
    pub fn with_skills(
        mut self,
        folders: BTreeMap<String, PathBuf>,
        packages: BTreeMap<String, PathBuf>,
    ) -> Self {
        let backend = self.tools.backend().clone();
        self.tools = Arc::new(WorkspaceTools::new(backend).with_skills(folders, packages));
        self
    }
}

impl Plugins {
    /// Bind the sandbox backend `name` for one run.
    pub fn workspace(
        &self,
        name: &str,
        options: WorkspaceOptions,
    ) -> Result<Workspace, WorkspaceError> {
        let Some(bundle) = self
            .bundles()
            .iter()
            .find(|bundle| bundle.manifest.name == name)
        else {
            return Err(WorkspaceError::Unknown {
                name: name.to_owned(),
                available: self
                    .bundles()
                    .iter()
                    .filter(|bundle| bundle.manifest.kind == BundleKind::Sandbox)
                    .map(|bundle| bundle.manifest.name.clone())
                    .collect(),
            });
        };
        let Exports::Workspace(indices) = &bundle.exports else {
            return Err(WorkspaceError::NotASandbox {
                name: name.to_owned(),
                kind: bundle.manifest.kind,
            });
        };
        let folder = bundle
            .dirs
            .iter()
            .find(|dir| dir.guest == WORKSPACE_GUEST_PATH)
            .filter(|_| options.seed)
            .cloned();
        let staged = options.transactional || bundle.manifest.staging == StagingPolicy::Always;
        let mode = if staged {
            WriteMode::Staged {
                publishes: folder.as_ref().is_some_and(|dir| dir.mode == DirMode::Rw),
            }
        } else {
            WriteMode::Direct
        };
        // Staged writes reach the folder only through publishing.
        let dirs = dirs::narrowed(
            &bundle.dirs,
            (!options.seed).then_some(WORKSPACE_GUEST_PATH),
            mode != WriteMode::Direct,
        );
        let staging = match mode {
            WriteMode::Direct => None,
            WriteMode::Staged { publishes } => {
                let opened = folder
                    .as_ref()
                    .map(|dir| {
                        Folder::open(&dir.host).map_err(|error| WorkspaceError::Folder {
                            folder: dir.host.display().to_string(),
                            message: error.to_string(),
                        })
                    })
                    .transpose()?;
                Some(Arc::new(Staging::new(
                    opened,
                    publishes,
                    bundle.manifest.limits.staging,
                    &bundle.manifest.name,
                    Arc::clone(&self.inner.events),
                )))
            }
        };
        let base = folder
            .as_ref()
            .map_or_else(|| bundle.root.clone(), |dir| dir.host.clone());
        let backend = Backend {
            engine: Arc::clone(&self.inner.engine),
            live: Arc::clone(&self.inner.events),
            guard: self.inner.guard(bundle),
            base,
            bundle: Arc::clone(bundle),
            dirs: dirs.into(),
            staging: staging.clone(),
            indices: indices.clone(),
            interpreters: Interpreters::of(self.bundles()),
        };
        Ok(Workspace {
            tools: Arc::new(WorkspaceTools::new(backend)),
            staging,
            mode,
            folder,
        })
    }
}
