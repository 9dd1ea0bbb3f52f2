//! The per-call sandbox: everything a store holds while one call runs. It is
//! built fresh for every call from the bundle's grants, so nothing leaks between
//! calls: WASI sees only the granted directories and environment variables, every
//! file access passes the run's file guard, every socket address is refused and
//! audited, stdout and stderr go to bounded buffers, state writes go to a
//! staging area. A sandbox backend's call also reaches its run's staged files
//! through a layer of its own, and only it does; a tool's call inside a run
//! holds the gate its own tool calls pass.

use std::net::SocketAddr;
use std::sync::Arc;

use cordon_kernel::{
    CallContext, Capability, Denial, Event, LogLevel, NestedCalls, StagedState, StateReader,
};
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::sockets::SocketAddrUse;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::bundle::{Bundle, ResolvedDir};
use crate::file_guard::FileGuard;
use crate::fs_guard::Listings;
use crate::limits::CallLimiter;
use crate::manifest::DirMode;
use crate::plugins::PluginsInner;
use crate::workspace::CallFiles;

/// Store data for one call.
pub(crate) struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: CallLimiter,
    pub(crate) bundle: Arc<Bundle>,
    pub(crate) plugins: Arc<PluginsInner>,
    /// Committed state as this call reads it, before its own writes.
    pub(crate) state: Arc<dyn StateReader>,
    /// The gate this call's own tool calls pass, inside a run.
    pub(crate) nested: Option<Arc<dyn NestedCalls>>,
    /// The tool being called.
    pub(crate) tool: String,
    /// How many tool calls enclose this one.
    pub(crate) depth: u32,
    pub(crate) staged: StagedState,
    /// This call's layer over the run's staged files, for a sandbox
    /// backend's call in a staged run; `None` for every other call.
    pub(crate) files: Option<CallFiles>,
    /// What the call's file accesses may reach.
    pub(crate) guard: Arc<FileGuard>,
    /// The directory listings the call has open.
    pub(crate) listings: Listings,
    /// Whether the call runs on a thread of its own, which its file
    /// operations may block.
    pub(crate) own_thread: bool,
    /// Bytes of log messages still allowed.
    pub(crate) log_budget: usize,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
}

/// What a call reaches besides its bundle's own grants and imports.
struct Reach<'a> {
    /// The directories preopened for it.
    dirs: &'a [ResolvedDir],
    /// Its layer over the run's staged files, for a sandbox backend in a
    /// staged run.
    files: Option<CallFiles>,
    /// Whether the call runs on a thread of its own, which its file
    /// operations may block.
    own_thread: bool,
}

/// The error a host import raises when the state store cannot answer.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct StateUnavailable(pub(crate) String);

/// The error a host import raises to stop a component that logs past its budget.
#[derive(Debug, thiserror::Error)]
#[error("log output exceeded the bundle's limit of {0} bytes")]
pub(crate) struct LogLimitExceeded(pub(crate) usize);

impl CallState {
    pub(crate) fn new(
        bundle: Arc<Bundle>,
        plugins: Arc<PluginsInner>,
        context: CallContext,
        tool: &str,
    ) -> wasmtime::Result<Self> {
        let dirs = bundle.dirs.clone();
        let reach = Reach {
            dirs: &dirs,
            files: None,
            own_thread: false,
        };
        Self::build(bundle, plugins, context, tool, reach)
    }

    /// Store data for operation `op` of a sandbox backend, which sees `dirs`
    /// (its grants as the run narrows them) and, when the run stages its
    /// writes, the run's staged `files`. The call must run on a thread of its
    /// own: its file operations block the calling thread.
    pub(crate) fn backend(
        bundle: Arc<Bundle>,
        plugins: Arc<PluginsInner>,
        op: &str,
        dirs: &[ResolvedDir],
        files: Option<CallFiles>,
    ) -> wasmtime::Result<Self> {
        let state: Arc<dyn StateReader> = Arc::new(cordon_kernel::StateSnapshot::default());
        let reach = Reach {
            dirs,
            files,
            own_thread: true,
        };
        Self::build(bundle, plugins, CallContext::outside_run(state), op, reach)
    }

    fn build(
        bundle: Arc<Bundle>,
        plugins: Arc<PluginsInner>,
        context: CallContext,
        tool: &str,
        reach: Reach<'_>,
    ) -> wasmtime::Result<Self> {
        let Reach {
            dirs,
            files,
            own_thread,
        } = reach;
        let limits = bundle.manifest.limits;
        let stdout = MemoryOutputPipe::new(limits.log_bytes);
        let stderr = MemoryOutputPipe::new(limits.log_bytes);
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(stdout.clone()).stderr(stderr.clone());
        // A backend's call runs on a thread of its own (see
        // `workspace::backend`), so its file operations may block that thread
        // instead of hopping to tokio's blocking pool for every read.
        wasi.allow_blocking_current_thread(own_thread);
        for name in &bundle.manifest.grants.env {
            if let Ok(value) = std::env::var(name) {
                wasi.env(name, value);
            }
        }
        for dir in dirs {
            let perms = match dir.mode {
                DirMode::Ro => FsPerms::ReadOnly,
                DirMode::Rw => FsPerms::ReadWrite,
            };
            wasi.preopened_dir(&dir.host, &dir.guest, perms)?;
        }
        let events = Arc::clone(&plugins.events);
        let name = bundle.manifest.name.clone();
        wasi.allow_tcp(true)
            .allow_udp(true)
            .allow_ip_name_lookup(false)
            .socket_addr_check(move |addr: SocketAddr, usage: SocketAddrUse| {
                // Binding an ephemeral port on no particular address is how every
                // connect and send begins; allowing it lets the refusal (and the
                // audit event) name the real destination.
                if is_implicit_bind(addr, usage) {
                    return Box::pin(async { true });
                }
                events.emit(Event::Denied(Denial {
                    bundle: name.clone(),
                    capability: Capability::Network,
                    target: addr.to_string(),
                    reason: format!("{} is not granted", socket_use(usage)),
                }));
                Box::pin(async { false })
            });
        let guard = plugins.guard(&bundle);
        Ok(Self {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limiter: CallLimiter::new(limits.memory_bytes),
            log_budget: limits.log_bytes,
            bundle,
            plugins,
            state: context.state,
            nested: context.nested,
            tool: tool.to_owned(),
            depth: context.depth,
            staged: StagedState::new(),
            files,
            guard,
            listings: Listings::default(),
            own_thread,
            stdout,
            stderr,
        })
    }

    /// The call's resource table.
    pub(crate) fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }

    /// Record a refusal in the trail.
    pub(crate) fn deny(&self, capability: Capability, target: &str, reason: &str) {
        self.plugins.events.emit(Event::Denied(Denial {
            bundle: self.bundle.manifest.name.clone(),
            capability,
            target: target.to_owned(),
            reason: reason.to_owned(),
        }));
    }

    /// Whether stdout or stderr filled its buffer.
    pub(crate) fn stdio_full(&self) -> bool {
        let cap = self.bundle.manifest.limits.log_bytes;
        self.stdout.contents().len() >= cap || self.stderr.contents().len() >= cap
    }

    /// What the component said last on stderr before it stopped: the message of
    /// a Rust panic when there was one, otherwise the last non-empty line.
    pub(crate) fn last_words(&self) -> Option<String> {
        let bytes = self.stderr.contents();
        let text = String::from_utf8_lossy(&bytes);
        if let Some(start) = text.rfind("panicked at ") {
            let mut lines = text[start..].lines();
            let location = lines.next().unwrap_or_default().trim_end_matches(':');
            let message: Vec<&str> = lines
                .take_while(|line| !line.starts_with("note: "))
                .collect();
            return Some(format!("{location}: {}", message.join(" ")));
        }
        text.lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .map(str::to_owned)
    }

    /// Turn what the component wrote to stdout and stderr into log events.
    pub(crate) fn flush_stdio(&self) {
        for (pipe, level) in [
            (&self.stdout, LogLevel::Info),
            (&self.stderr, LogLevel::Warn),
        ] {
            let bytes = pipe.contents();
            let text = String::from_utf8_lossy(&bytes);
            for line in text.lines().filter(|line| !line.trim().is_empty()) {
                self.plugins.events.emit(Event::Log {
                    bundle: self.bundle.manifest.name.clone(),
                    level,
                    message: line.to_owned(),
                });
            }
        }
    }
}

fn is_implicit_bind(addr: SocketAddr, usage: SocketAddrUse) -> bool {
    matches!(usage, SocketAddrUse::TcpBind | SocketAddrUse::UdpBind)
        && addr.ip().is_unspecified()
        && addr.port() == 0
}

fn socket_use(usage: SocketAddrUse) -> &'static str {
    match usage {
        SocketAddrUse::TcpBind => "binding a TCP socket",
        SocketAddrUse::TcpListen => "listening on a TCP socket",
        SocketAddrUse::TcpAccept => "accepting a TCP connection",
        SocketAddrUse::TcpConnect => "connecting a TCP socket",
        SocketAddrUse::UdpBind => "binding a UDP socket",
        SocketAddrUse::UdpSend => "sending a UDP datagram",
        SocketAddrUse::UdpReceive => "receiving a UDP datagram",
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}
