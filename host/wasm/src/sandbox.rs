//! The per-call sandbox: what a store holds while one call runs. It is built
//! fresh for every call by [`CallBuilder`](crate::capabilities::CallBuilder)
//! from the bundle's grants, and holds only the capabilities granted: WASI
//! with the granted directories and variables, its network judged against
//! its bundle's allowlist, the guard of
//! every file access, bounded output, the call's own state writes, and, when
//! granted, its handle for tool calls and its layer of staged files. Each
//! import sees one capability through a view of it; when the call ends, what
//! it staged comes back as its [`Effects`].

use std::sync::Arc;

use cordon_kernel::{ContentBlock, FileWrites, StateWrite};
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::audit::Audit;
use crate::bindings::cordon::plugin::{hook_types, types};
use crate::bundle::Bundle;
use crate::capabilities::config::ConfigView;
use crate::capabilities::content::ContentOutput;
use crate::capabilities::dirs::DirAccess;
use crate::capabilities::elicit::{ElicitAccess, ElicitView};
use crate::capabilities::interpreters::vfs::{Vfs, VfsView};
use crate::capabilities::interpreters::{InterpreterAccess, InterpretersView};
use crate::capabilities::log::{LogOutput, LogView};
use crate::capabilities::network::http::HttpAccess;
use crate::capabilities::staging::StagingView;
use crate::capabilities::state::{StateAccess, StateView};
use crate::capabilities::tools::{ToolAccess, ToolsView};
use crate::limits::CallLimiter;
use crate::workspace::CallFiles;

/// Store data for one call.
pub(crate) struct CallState {
    pub(crate) wasi: WasiCtx,
    pub(crate) http_ctx: WasiHttpCtx,
    /// The call's outgoing HTTP, judged against its bundle's allowlist.
    pub(crate) http: HttpAccess,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: CallLimiter,
    pub(crate) bundle: Arc<Bundle>,
    /// The tool, hook phase or backend operation called, for the trail.
    pub(crate) label: String,
    pub(crate) audit: Audit,
    pub(crate) log: LogOutput,
    /// The content blocks a tool attached to its result.
    pub(crate) content: ContentOutput,
    /// Whom a tool's questions reach, when its bundle may ask.
    pub(crate) elicit: ElicitAccess,
    pub(crate) dirs: DirAccess,
    pub(crate) state: StateAccess,
    /// Present only for a bundle granted tool calls.
    pub(crate) tools: Option<ToolAccess>,
    /// Present only for a sandbox backend's call in a staged run.
    pub(crate) staging: Option<CallFiles>,
    /// Present only for an interpreter's run: the file system it sees.
    pub(crate) vfs: Option<Vfs>,
    /// Present only for a sandbox backend's call that may run interpreters.
    pub(crate) interpreters: Option<InterpreterAccess>,
    /// How long the call may take.
    pub(crate) timeout: std::time::Duration,
}

/// What a finished call staged: state writes and file changes.
#[derive(Default)]
pub(crate) struct Effects {
    pub(crate) writes: Vec<StateWrite>,
    pub(crate) files: FileWrites,
    /// The content blocks a tool attached to its result, and their size.
    pub(crate) blocks: Vec<ContentBlock>,
    pub(crate) blocks_size: usize,
}

impl CallState {
    /// The call's resource table.
    pub(crate) fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }

    /// Take out what the call staged, leaving the rest to be taken down
    /// with its instance. A backend's own layer of files fits its call quota
    /// already; a step's quota is the loop's to judge.
    pub(crate) fn take_effects(&mut self) -> Effects {
        let mut files = self
            .staging
            .take()
            .map(CallFiles::into_writes)
            .unwrap_or_default();
        if let Some(tools) = self.tools.take() {
            files.extend(tools.into_files());
        }
        Effects {
            writes: self.state.take_writes(),
            files,
            blocks_size: self.content.size(),
            blocks: self.content.take_blocks(),
        }
    }

    pub(crate) fn state_view(&mut self) -> StateView<'_> {
        StateView {
            grants: &self.bundle.manifest.grants.state,
            access: &mut self.state,
            audit: &self.audit,
        }
    }

    pub(crate) fn tools_view(&mut self) -> ToolsView<'_> {
        ToolsView {
            bundle: &self.bundle.manifest.name,
            granted: &self.bundle.manifest.grants.tools,
            label: &self.label,
            access: self.tools.as_mut(),
            state: &mut self.state,
            audit: &self.audit,
        }
    }

    pub(crate) fn staging_view(&mut self) -> StagingView<'_> {
        StagingView {
            files: self.staging.as_mut(),
            guard: &self.dirs.guard,
            audit: &self.audit,
        }
    }

    pub(crate) fn log_view(&mut self) -> LogView<'_> {
        LogView {
            output: &mut self.log,
            audit: &self.audit,
        }
    }

    pub(crate) fn vfs_view(&mut self) -> VfsView<'_> {
        VfsView {
            vfs: self.vfs.as_ref(),
            table: &mut self.table,
            audit: &self.audit,
        }
    }

    pub(crate) fn interpreters_view(&mut self) -> InterpretersView<'_> {
        InterpretersView {
            access: self.interpreters.as_ref(),
            staging: self.staging.as_ref(),
            audit: &self.audit,
        }
    }

    pub(crate) fn elicit_view(&mut self) -> ElicitView<'_> {
        ElicitView {
            access: &mut self.elicit,
            label: &self.label,
            audit: &self.audit,
        }
    }

    pub(crate) fn config_view(&mut self) -> ConfigView<'_> {
        ConfigView(&self.bundle.manifest.config)
    }
}

impl types::Host for CallState {}

impl hook_types::Host for CallState {}

/// Link the interfaces that hold only types.
pub(crate) fn add_types_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    types::add_to_linker::<CallState, HasSelf<CallState>>(linker, |state| state)?;
    hook_types::add_to_linker::<CallState, HasSelf<CallState>>(linker, |state| state)
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
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
