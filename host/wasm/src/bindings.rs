//! Host-side bindings generated from `wit/`. Every import is async (host calls may
//! wait, for example on a nested tool call) and trappable (the host can stop a
//! component that exceeds its log budget).

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "tool-plugin",
    imports: { default: async | trappable },
    exports: { default: async },
});

pub(crate) use cordon::plugin::types::{ToolAnnotations, ToolSpec};

/// The interface a tool component must export, without version.
pub(crate) const TOOL_EXPORT: &str = "cordon:plugin/tool";
/// The version of the contract this host implements.
pub(crate) const CONTRACT_VERSION: &str = "0.1.0";
