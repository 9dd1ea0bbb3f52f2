//! The one door through which a call gets any capability: [`CallBuilder`]
//! gives a call exactly what its bundle was granted, as the run narrows it,
//! and a call's store holds nothing else.

use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::{Asker, CallContext, Cancellation, NestedCalls, StateReader, StateSnapshot};
use wasmtime_wasi::WasiCtxBuilder;

use super::CallState;
use crate::audit::Audit;
use crate::bundle::Bundle;
use crate::capabilities::dirs::ResolvedDir;
use crate::capabilities::dirs::guard::FileGuard;
use crate::capabilities::interpreters::vfs::Vfs;
use crate::capabilities::interpreters::{CommandIo, InterpreterAccess};
use crate::capabilities::tools::ToolAccess;
use crate::capabilities::{CallInputs, Contexts};
use crate::limits::CallLimiter;
use crate::workspace::staging::CallFiles;

/// Prepares one call's capabilities from its bundle's grants.
pub(crate) struct CallBuilder<'a> {
    bundle: &'a Arc<Bundle>,
    label: &'a str,
    audit: Audit,
    guard: Arc<FileGuard>,
    dirs: &'a [ResolvedDir],
    /// The state the call reads; none committed when unset.
    state: Option<Arc<dyn StateReader>>,
    tools: Option<ToolAccess>,
    staging: Option<CallFiles>,
    own_thread: bool,
    /// A command's streams, variables and args, for an interpreter's run,
    /// with the file system it sees.
    command: Option<(CommandIo, Vfs)>,
    interpreters: Option<InterpreterAccess>,
    timeout: Duration,
    /// Set when whoever asked for the call cancels it; nobody can when unset.
    cancel: Option<Cancellation>,
    /// Whom the call's questions reach.
    asker: Option<Arc<dyn Asker>>,
    /// Whether the call's result may carry content blocks: a tool's.
    attaching: bool,
    /// Slots of the instance pool held for what the call starts: the
    /// interpreters a backend's shell may run.
    reserved: u32,
}

impl<'a> CallBuilder<'a> {
    /// A call of `label` (a tool, a hook phase, a backend operation) into
    /// `bundle`, its file accesses under `guard`, its trail in `audit`. It
    /// sees the bundle's own directory grants and an empty state, and calls
    /// no tool, until told otherwise.
    pub(crate) fn new(
        bundle: &'a Arc<Bundle>,
        label: &'a str,
        audit: Audit,
        guard: Arc<FileGuard>,
    ) -> Self {
        let tools = (!bundle.manifest.grants.tools.is_empty())
            .then(|| ToolAccess::new(None, 0, Arc::default()));
        Self {
            bundle,
            label,
            audit,
            guard,
            dirs: &bundle.dirs,
            state: None,
            tools,
            staging: None,
            own_thread: false,
            command: None,
            interpreters: None,
            timeout: bundle.manifest.limits.timeout,
            cancel: None,
            asker: None,
            attaching: false,
            reserved: 0,
        }
    }

    /// The call runs a command in an interpreter: `io` are its streams,
    /// variables and args, `vfs` the only file system it sees.
    pub(crate) fn command(mut self, io: CommandIo, vfs: Vfs) -> Self {
        self.command = Some((io, vfs));
        self
    }

    /// The call may run the interpreters of `access`, holding slots of the
    /// instance pool for one run of any.
    pub(crate) fn interpreters(mut self, access: InterpreterAccess) -> Self {
        self.reserved = access.runner.slots();
        self.interpreters = Some(access);
        self
    }

    /// The call ends within `limit` too, when that comes before its bundle's timeout.
    pub(crate) fn within_time(mut self, limit: Duration) -> Self {
        self.timeout = self.timeout.min(limit);
        self
    }

    /// The call is a tool's, whose result may carry content blocks.
    pub(crate) fn attaching(mut self) -> Self {
        self.attaching = true;
        self
    }

    /// What stops the call before it ends, if anybody can.
    pub(crate) fn cancel(&self) -> Option<Cancellation> {
        self.cancel.clone()
    }

    /// How long the call may take.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Slots of the instance pool the call holds beyond its own instance's.
    pub(crate) fn reserved(&self) -> u32 {
        self.reserved
    }

    /// The bundle called.
    pub(crate) fn bundle(&self) -> &'a Arc<Bundle> {
        self.bundle
    }

    /// What is called, for the trail.
    pub(crate) fn label(&self) -> &'a str {
        self.label
    }

    /// The call's trail.
    pub(crate) fn audit(&self) -> &Audit {
        &self.audit
    }

    /// The call reads `state`.
    pub(crate) fn reading(mut self, state: Arc<dyn StateReader>) -> Self {
        self.state = Some(state);
        self
    }

    /// The call runs in `context`, its own calls going through `handle`;
    /// a bundle not granted tool calls gets no handle.
    pub(crate) fn within(
        mut self,
        context: CallContext,
        handle: Option<Arc<dyn NestedCalls>>,
    ) -> Self {
        if self.tools.is_some() {
            self.tools = Some(ToolAccess::new(handle, context.depth, context.files));
        }
        self.cancel = Some(context.cancel);
        self.asker = context.asker;
        self.reading(context.state)
    }

    /// The call sees `dirs`: its bundle's grants as the run narrows them.
    pub(crate) fn dirs(mut self, dirs: &'a [ResolvedDir]) -> Self {
        self.dirs = dirs;
        self
    }

    /// The call reads and writes the run's staged files through `files`.
    pub(crate) fn staging(mut self, files: CallFiles) -> Self {
        self.staging = Some(files);
        self
    }

    /// The call runs on a thread of its own, which its file operations may
    /// block instead of hopping to tokio's blocking pool for every read.
    pub(crate) fn on_own_thread(mut self) -> Self {
        self.own_thread = true;
        self
    }

    /// The call's store data.
    pub(crate) fn build(self) -> wasmtime::Result<CallState> {
        let bundle = self.bundle;
        let manifest = &bundle.manifest;
        let mut wasi = WasiCtxBuilder::new();
        wasi.allow_blocking_current_thread(self.own_thread);
        let capabilities = Contexts::prepare(
            CallInputs {
                grants: &manifest.grants,
                bundle: &manifest.name,
                secrets: &manifest.secrets,
                limits: manifest.limits,
                label: self.label,
                audit: &self.audit,
                guard: self.guard,
                dirs: self.dirs,
                allowlist: &bundle.network,
                network: &bundle.network_policy,
                state: self
                    .state
                    .unwrap_or_else(|| Arc::new(StateSnapshot::default())),
                tools: self.tools,
                staging: self.staging,
                command: self.command,
                interpreters: self.interpreters,
                asker: self.asker,
                attaching: self.attaching,
                own_thread: self.own_thread,
            },
            &mut wasi,
        )?;
        Ok(CallState {
            wasi: wasi.build(),
            http_ctx: wasmtime_wasi_http::WasiHttpCtx::new(),
            table: wasmtime::component::ResourceTable::new(),
            limiter: CallLimiter::new(manifest.limits.memory_bytes),
            bundle: Arc::clone(bundle),
            label: self.label.to_owned(),
            audit: self.audit,
            timeout: self.timeout,
            capabilities,
        })
    }
}
