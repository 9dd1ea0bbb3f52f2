//! Grants as capabilities. Each kind of grant is one module that owns its
//! manifest section and its checks, the per-call context built from it, and
//! the import through which a component uses it: [`dirs`] (the filesystem),
//! [`env`], [`state`], [`tools`], [`staging`], [`interpreters`] (which a
//! backend's shell runs, and which see a read-only view of their own),
//! [`network`], [`elicit`] (a tool's questions to the person it runs for),
//! and the ones every bundle has, [`log`], [`config`] and (for a tool) [`content`]. [`CallBuilder`] is the one door
//! through which a call gets any of them: it gives a call exactly what its
//! bundle was granted, as the run narrows it, and a call's store holds
//! nothing else.

pub(crate) mod config;
pub(crate) mod content;
pub(crate) mod dirs;
pub(crate) mod elicit;
pub(crate) mod env;
pub(crate) mod interpreters;
pub(crate) mod log;
pub(crate) mod network;
pub(crate) mod staging;
pub(crate) mod state;
pub(crate) mod tools;

use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::{
    Asker, CallContext, Cancellation, NestedCalls, Reach, StateReader, StateSnapshot,
};
use wasmtime::component::Linker;
use wasmtime_wasi::WasiCtxBuilder;

use crate::audit::Audit;
use crate::bundle::Bundle;
use crate::limits::CallLimiter;
use crate::sandbox::CallState;
use crate::workspace::CallFiles;

use content::ContentOutput;
use dirs::guard::FileGuard;
use dirs::{DirAccess, DirMode, ResolvedDir};
use elicit::ElicitAccess;
use interpreters::vfs::Vfs;
use interpreters::{CommandIo, InterpreterAccess};
use log::LogOutput;
use state::StateAccess;
use tools::ToolAccess;

/// How far the calls of `bundle` can act, from the grants in force: past
/// their step when it may write a host directory, connect to any origin, or
/// call other tools. Nothing else it is granted acts outside the call: state
/// writes, log lines and content travel back with the outcome, variables
/// and read-only directories are only read, and a question only asks.
pub(crate) fn reach(bundle: &Bundle) -> Reach {
    let writes_files = bundle.dirs.iter().any(|dir| dir.mode == DirMode::Rw);
    let connects = !bundle.network.is_empty();
    let calls_tools = !bundle.manifest.grants.tools.is_empty();
    if writes_files || connects || calls_tools {
        Reach::Beyond
    } else {
        Reach::Outcome
    }
}

/// Prepares one call's capabilities from its bundle's grants.
pub(crate) struct CallBuilder<'a> {
    bundle: &'a Arc<Bundle>,
    label: &'a str,
    audit: Audit,
    guard: Arc<FileGuard>,
    dirs: &'a [ResolvedDir],
    state: Arc<dyn StateReader>,
    tools: Option<ToolAccess>,
    staging: Option<CallFiles>,
    own_thread: bool,
    /// A command's streams, variables and args, for an interpreter's run,
    /// with the file system it sees.
    command: Option<(CommandIo, Vfs)>,
    interpreters: Option<InterpreterAccess>,
    timeout: Duration,
    /// Set when whoever asked for the call cancels it.
    cancel: Cancellation,
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
            state: Arc::new(StateSnapshot::default()),
            tools,
            staging: None,
            own_thread: false,
            command: None,
            interpreters: None,
            timeout: bundle.manifest.limits.timeout,
            cancel: Cancellation::default(),
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
        self.reserved = access.interpreters.slots();
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

    /// What stops the call before it ends.
    pub(crate) fn cancel(&self) -> Cancellation {
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
        self.state = state;
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
        self.cancel = context.cancel;
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
        let limits = self.bundle.manifest.limits;
        let mut wasi = WasiCtxBuilder::new();
        let (log, vfs) = match self.command {
            None => (LogOutput::attach(&mut wasi, limits.log_bytes), None),
            Some((io, vfs)) => {
                let log = LogOutput::attach_command(&mut wasi, io.stdin, limits.output_bytes);
                wasi.args(&io.args);
                for (name, value) in &io.env {
                    wasi.env(name, value);
                }
                (log, Some(vfs))
            }
        };
        wasi.allow_blocking_current_thread(self.own_thread);
        env::grant(&mut wasi, &self.bundle.manifest.grants.env);
        dirs::preopen(&mut wasi, self.dirs)?;
        let http = network::grant(
            &mut wasi,
            self.bundle,
            &self.bundle.network_policy,
            &self.audit,
            self.label,
        );
        Ok(CallState {
            wasi: wasi.build(),
            http_ctx: wasmtime_wasi_http::WasiHttpCtx::new(),
            http,
            table: wasmtime::component::ResourceTable::new(),
            limiter: CallLimiter::new(limits.memory_bytes),
            bundle: Arc::clone(self.bundle),
            label: self.label.to_owned(),
            audit: self.audit,
            log,
            elicit: ElicitAccess::new(
                self.bundle.manifest.grants.elicit,
                self.attaching,
                self.asker,
            ),
            content: if self.attaching {
                ContentOutput::new(limits.output_bytes)
            } else {
                ContentOutput::refused()
            },
            dirs: DirAccess::new(self.guard, self.own_thread),
            state: StateAccess::new(self.state),
            tools: self.tools,
            staging: self.staging,
            vfs,
            interpreters: self.interpreters,
            timeout: self.timeout,
        })
    }
}

/// Link every capability's import, and the guarded filesystem over WASI's.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    dirs::wasi::add_to_linker(linker)?;
    crate::sandbox::add_types_to_linker(linker)?;
    log::add_to_linker(linker)?;
    content::add_to_linker(linker)?;
    elicit::add_to_linker(linker)?;
    config::add_to_linker(linker)?;
    state::add_to_linker(linker)?;
    tools::add_to_linker(linker)?;
    staging::add_to_linker(linker)?;
    interpreters::add_to_linker(linker)?;
    network::add_to_linker(linker)
}

/// Link what an interpreter's imports may reach: WASI with its filesystem
/// served by the interpreter's read-only view instead of the host's, name
/// lookup refused, and nothing of Cordon's: an interpreter is granted
/// nothing.
pub(crate) fn add_interpreter_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    interpreters::vfs::add_to_linker(linker)?;
    network::sockets::add_lookup_to_linker(linker)
}
