//! Calls into a sandbox backend component: each operation runs in a fresh
//! instance with the bundle's limits, the run's view of its grants, and a
//! layer of its own over the run's staged files, which joins the step's only
//! when the operation succeeds and fits the step's quota; whatever happens
//! (result, workspace error, trap, limit, timeout) comes back as a typed
//! result. A refusal is also an audit event.
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

use cordon_kernel::{Capability, Denial, Event, LimitKind, ToolError, ToolErrorKind};

use wasmtime::Store;

use crate::admission;
use crate::bindings::workspace::{self as wit, Guest, GuestIndices};
use crate::bundle::{Bundle, ResolvedDir};
use crate::call;
use crate::file_guard::FileGuard;
use crate::plugins::PluginsInner;
use crate::sandbox::CallState;

use super::staging::{CallFiles, OverQuota, Staging};

/// How long past the bundle's timeout the caller waits for a thread stuck in
/// a system call.
const STUCK_GRACE: Duration = Duration::from_secs(1);

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
    /// What the run's file accesses may reach.
    pub(crate) guard: Arc<FileGuard>,
    /// Where workspace paths land: the backend's folder, or the workspace
    /// root for a backend without one.
    pub(crate) base: PathBuf,
    pub(crate) bundle: Arc<Bundle>,
    pub(crate) plugins: Arc<PluginsInner>,
    /// The backend's directory grants as this run narrows them.
    pub(crate) dirs: Arc<[ResolvedDir]>,
    pub(crate) staging: Option<Arc<Staging>>,
    pub(crate) indices: GuestIndices,
}

impl Backend {
    /// The bundle's wall-clock limit for one operation.
    pub(crate) fn timeout(&self) -> Duration {
        self.bundle.manifest.limits.timeout
    }

    /// Run operation `op` by `invoke`; `target` names what it works on in
    /// the audit trail.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        op: &str,
        target: &str,
        invoke: Invoke<T>,
    ) -> Result<T, ToolError> {
        let label = format!("workspace.{op}");
        let backend = self.clone();
        let runtime = tokio::runtime::Handle::current();
        // A workspace tool a tool calls runs on the calling chain's slots.
        let inside = admission::inside_chain();
        let worker = {
            let label = label.clone();
            tokio::task::spawn_blocking(move || {
                runtime.block_on(admission::within(inside, backend.perform(&label, invoke)))
            })
        };
        let outcome = match tokio::time::timeout(self.timeout() + STUCK_GRACE, worker).await {
            Ok(Ok(outcome)) => outcome,
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
                self.plugins.events.emit(Event::LimitExceeded {
                    bundle: self.bundle.manifest.name.clone(),
                    tool: label,
                    limit: LimitKind::Timeout,
                    detail: detail.clone(),
                });
                return Err(ToolError::new(ToolErrorKind::Timeout, detail));
            }
        };
        outcome?.map_err(|error| self.refused(target, error))
    }

    /// Instantiate the backend and call `invoke`, on the current thread,
    /// once the instance pool has a slot; keep what the call staged only when
    /// it succeeded.
    async fn perform<T>(
        self,
        label: &str,
        invoke: Invoke<T>,
    ) -> Result<Result<T, wit::WorkspaceError>, ToolError> {
        let ran = self
            .plugins
            .engine
            .admission
            .run(false, self.timeout(), async {
                let files = self.staging.clone().map(CallFiles::new);
                let mut store = CallState::backend(
                    Arc::clone(&self.bundle),
                    Arc::clone(&self.plugins),
                    label,
                    &self.dirs,
                    files,
                )
                .and_then(|state| call::limit(&self.plugins, state))
                .map_err(|error| {
                    ToolError::new(
                        ToolErrorKind::Failed,
                        format!("cannot prepare the sandbox: {error:#}"),
                    )
                })?;
                let returned = tokio::time::timeout(self.timeout(), async {
                    let instance = self.bundle.pre.instantiate_async(&mut store).await?;
                    let guest = self.indices.load(&mut store, &instance)?;
                    invoke(&guest, &mut store).await
                })
                .await;
                let settled = call::settle(&self.plugins, label, returned, store.data());
                let files = store.into_data().files;
                if let (Ok(Ok(_)), Some(files)) = (&settled, files) {
                    files
                        .keep()
                        .map_err(|OverQuota(detail)| self.over_quota(label, detail))?;
                }
                settled
            })
            .await;
        ran.unwrap_or_else(|full| Err(call::pool_full(&self.plugins, &self.bundle, label, &full)))
    }

    /// The error of an operation whose changes would outgrow the step's or
    /// the run's staging quota.
    fn over_quota(&self, label: &str, detail: String) -> ToolError {
        self.plugins.events.emit(Event::LimitExceeded {
            bundle: self.bundle.manifest.name.clone(),
            tool: label.to_owned(),
            limit: LimitKind::Staging,
            detail: detail.clone(),
        });
        ToolError::new(ToolErrorKind::Limit, detail)
    }

    fn refused(&self, target: &str, error: wit::WorkspaceError) -> ToolError {
        match error {
            wit::WorkspaceError::NotFound(message) => {
                ToolError::new(ToolErrorKind::Failed, format!("not found: {message}"))
            }
            wit::WorkspaceError::Denied(message) => {
                self.deny(target, &message);
                ToolError::new(ToolErrorKind::Denied, message)
            }
            wit::WorkspaceError::Invalid(message) => {
                ToolError::new(ToolErrorKind::InvalidInput, message)
            }
            wit::WorkspaceError::Failed(message) => ToolError::new(ToolErrorKind::Failed, message),
        }
    }

    /// Record a refusal of `target` in the trail.
    pub(crate) fn deny(&self, target: &str, reason: &str) {
        self.plugins.events.emit(Event::Denied(Denial {
            bundle: self.bundle.manifest.name.clone(),
            capability: Capability::Filesystem,
            target: target.to_owned(),
            reason: reason.to_owned(),
        }));
    }
}
