//! The per-call sandbox: what a store holds while one call runs. It is built
//! fresh for every call by the call builder (in `builder`) from the
//! bundle's grants, and holds only the capabilities granted: WASI with the
//! granted directories and variables, its network judged against its
//! bundle's allowlist, and each capability's context, which the
//! capabilities' registration list names. Each
//! import sees one capability through a view of it; when the call ends, what
//! it staged comes back as its [`Effects`].

pub(crate) mod builder;

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::audit::Audit;
use crate::bundle::Bundle;
use crate::capabilities::{CallData, CallParts, Contexts};
use crate::limits::CallLimiter;

pub(crate) use crate::capabilities::Effects;

/// Store data for one call.
pub(crate) struct CallState {
    pub(crate) wasi: WasiCtx,
    pub(crate) http_ctx: WasiHttpCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: CallLimiter,
    pub(crate) bundle: Arc<Bundle>,
    /// The tool, hook phase or backend operation called, for the trail.
    pub(crate) label: String,
    pub(crate) audit: Audit,
    /// How long the call may take.
    pub(crate) timeout: Duration,
    /// What the call holds of each capability.
    pub(crate) capabilities: Contexts,
}

impl CallState {
    /// Take out what the call staged, leaving the rest to be taken down
    /// with its instance.
    pub(crate) fn take_effects(&mut self) -> Effects {
        self.capabilities.take_effects()
    }
}

impl CallData for CallState {
    fn call(&mut self) -> CallParts<'_> {
        CallParts {
            contexts: &mut self.capabilities,
            grants: &self.bundle.manifest.grants,
            bundle: &self.bundle.manifest.name,
            config: &self.bundle.manifest.config,
            label: &self.label,
            audit: &self.audit,
            wasi: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.capabilities.http,
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
