//! Calls into a sandbox backend component: each operation is a guarded call
//! with the run's view of the backend's grants (and the folders of the
//! skills active for it, read-only at `/skills/NAME`) and a layer of its own over
//! the run's staged files, which comes back with the operation's result only
//! when it succeeded; whatever happens (result, workspace error, trap, limit,
//! timeout) comes back as a typed result, and every refusal is in the call's
//! trail.
//!
//! An operation runs on a thread of tokio's blocking pool, where the
//! backend's file operations block that thread instead of hopping to the pool
//! for every read (which made a grep over many files several times slower).
//! The bundle's timeout still holds: the wasm is interrupted at the deadline,
//! and should a file operation itself never return (a FIFO in the folder), the
//! caller stops waiting a little later and that thread is abandoned.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::{Capability, EventSink, FileWrites, LimitKind, ToolError, ToolErrorKind};
use wasmtime::Store;

use crate::admission;
use crate::audit::Audit;
use crate::bindings::workspace::{self as wit, Guest, GuestIndices};
use crate::bundle::Bundle;
use crate::capabilities::dirs::DirMode;
use crate::capabilities::dirs::ResolvedDir;
use crate::capabilities::dirs::guard::FileGuard;
use crate::capabilities::interpreters::runner::{Interpreters, Runs};
use crate::capabilities::interpreters::{InterpreterAccess, WORKSPACE_MOUNT};
use crate::engine::Engine;
use crate::guarded::{self, Body, Finished};
use crate::sandbox::CallState;
use crate::sandbox::builder::CallBuilder;

use super::staging::{CallFiles, Staging};

/// How long past the bundle's timeout the caller waits for a thread stuck in
/// a system call.
const STUCK_GRACE: Duration = Duration::from_secs(1);

/// The operation that runs a command line, the one that may run interpreters.
const EXEC: &str = "workspace.exec";

/// One call into the backend's `workspace` interface, owning its arguments.
pub(crate) type Invoke<T> = Box<
    dyn for<'a> FnOnce(
            &'a Guest,
            &'a mut Store<CallState>,
        ) -> Pin<
            Box<dyn Future<Output = wasmtime::Result<Result<T, wit::WorkspaceError>>> + Send + 'a>,
        > + Send,
>;

/// An [`Invoke`] calling the guest's `method` with `args`, which it owns.
macro_rules! invoke {
    ($method:ident($($arg:expr),*)) => {
        Box::new(move |guest, store| {
            Box::pin(async move { guest.$method(store, $($arg),*).await })
        })
    };
}
pub(crate) use invoke;

/// A backend bound to one run. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Backend {
    pub(crate) engine: Arc<Engine>,
    /// Where the trail of each operation is shown as it happens.
    pub(crate) live: Arc<dyn EventSink>,
    /// What the run's file accesses may reach.
    pub(crate) guard: Arc<FileGuard>,
    /// Where workspace paths land: the backend's folder, or the workspace
    /// root for a backend without one.
    pub(crate) base: PathBuf,
    pub(crate) bundle: Arc<Bundle>,
    /// The backend's directory grants as this run narrows them.
    pub(crate) dirs: Arc<[ResolvedDir]>,
    pub(crate) staging: Option<Arc<Staging>>,
    pub(crate) indices: GuestIndices,
    /// The interpreters the backend's shell may run.
    pub(crate) interpreters: Interpreters,
}

impl Backend {
    /// This backend obeying `rules` too, for one call of a sub-agent.
    pub(crate) fn narrowed(&self, rules: &cordon_kernel::FileRules) -> Self {
        Self {
            guard: Arc::new(self.guard.narrowed(rules)),
            ..self.clone()
        }
    }

    /// The bundle's wall-clock limit for one operation.
    pub(crate) fn timeout(&self) -> Duration {
        self.bundle.manifest.limits.timeout
    }

    /// A trail for one tool call into the backend.
    pub(crate) fn audit(&self) -> Audit {
        Audit::new(&self.bundle.manifest.name, Arc::clone(&self.live))
    }

    /// Run operation `op` by `invoke`, its trail in `audit`, seeing `view`
    /// (the changes of the calls enclosing it) over the run's committed
    /// changes; `target` names what it works on in the trail. Gives the
    /// result and, when it succeeded, the file changes it staged.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        audit: &Audit,
        view: Arc<FileWrites>,
        mounts: Arc<[ResolvedDir]>,
        op: &str,
        target: &str,
        invoke: Invoke<T>,
    ) -> Result<(T, FileWrites), ToolError> {
        let label = format!("workspace.{op}");
        let backend = self.clone();
        let runtime = tokio::runtime::Handle::current();
        // A workspace tool a tool calls runs on the calling chain's slots.
        let inside = admission::inside_chain();
        // Its events reach whoever watches the calling chain.
        let watcher = cordon_kernel::watching::watcher();
        let worker = {
            let (audit, label) = (audit.clone(), label.clone());
            tokio::task::spawn_blocking(move || {
                runtime.block_on(cordon_kernel::watching::watched_by(
                    watcher,
                    admission::within(
                        inside,
                        backend.perform(audit, view, &mounts, &label, invoke),
                    ),
                ))
            })
        };
        let finished = match tokio::time::timeout(self.timeout() + STUCK_GRACE, worker).await {
            Ok(Ok(finished)) => finished,
            Ok(Err(panicked)) => {
                return Err(ToolError::new(
                    ToolErrorKind::Crashed,
                    format!("the backend's thread failed: {panicked}"),
                ));
            }
            Err(_) => {
                let detail = format!(
                    "a file operation did not return within {} ms",
                    self.timeout().as_millis()
                );
                return Err(audit.exceeded(&label, LimitKind::Timeout, detail));
            }
        };
        match finished.result? {
            Ok(value) => Ok((value, finished.effects.files)),
            Err(error) => Err(self.refused(audit, target, error)),
        }
    }

    /// Instantiate the backend and call `invoke`, on the current thread, as
    /// a guarded call with the run's view of the backend's grants and, in a
    /// staged run, a layer of its own over `view`.
    async fn perform<T: 'static>(
        self,
        audit: Audit,
        view: Arc<FileWrites>,
        mounts: &[ResolvedDir],
        label: &str,
        invoke: Invoke<T>,
    ) -> Finished<Result<T, wit::WorkspaceError>> {
        let dirs: Vec<ResolvedDir> = self.dirs.iter().chain(mounts).cloned().collect();
        let mut call = CallBuilder::new(&self.bundle, label, audit, Arc::clone(&self.guard))
            .dirs(&dirs)
            .on_own_thread();
        if label == EXEC && !self.interpreters.is_empty() {
            call = call.interpreters(InterpreterAccess {
                runner: Arc::new(Runs {
                    interpreters: self.interpreters.clone(),
                    engine: Arc::clone(&self.engine),
                    live: Arc::clone(&self.live),
                    guard: Arc::clone(&self.guard),
                }),
                guard: Arc::clone(&self.guard),
                folder: dirs
                    .iter()
                    .find(|dir| dir.guest == WORKSPACE_MOUNT)
                    .map(|dir| dir.host.clone()),
                folder_writable: dirs
                    .iter()
                    .any(|dir| dir.guest == WORKSPACE_MOUNT && dir.mode == DirMode::Rw),
                skills: mounts
                    .iter()
                    .filter_map(|dir| {
                        let (skill, _) = crate::workspace::paths::mount_of(&dir.guest)?;
                        Some((skill.to_owned(), dir.host.clone()))
                    })
                    .collect(),
                packages: mounts
                    .iter()
                    .filter_map(|dir| {
                        let skill = crate::workspace::paths::package_mount_of(&dir.guest)?;
                        Some((skill.to_owned(), dir.host.clone()))
                    })
                    .collect(),
            });
        }
        if let Some(staging) = &self.staging {
            call = call.staging(CallFiles::new(Arc::clone(staging), view));
        }
        let indices = self.indices.clone();
        let body: Body<Result<T, wit::WorkspaceError>> = Box::new(move |store, instance| {
            Box::pin(async move {
                let guest = indices.load(&mut *store, &instance)?;
                invoke(&guest, store).await
            })
        });
        guarded::call(&self.engine, call, false, body).await
    }

    fn refused(&self, audit: &Audit, target: &str, error: wit::WorkspaceError) -> ToolError {
        match error {
            wit::WorkspaceError::NotFound(message) => {
                ToolError::new(ToolErrorKind::Failed, format!("not found: {message}"))
            }
            wit::WorkspaceError::Denied(message) => {
                audit.deny(Capability::Filesystem, target, &message);
                ToolError::new(ToolErrorKind::Denied, message)
            }
            wit::WorkspaceError::Invalid(message) => {
                ToolError::new(ToolErrorKind::InvalidInput, message)
            }
            wit::WorkspaceError::Failed(message) => ToolError::new(ToolErrorKind::Failed, message),
        }
    }
}
