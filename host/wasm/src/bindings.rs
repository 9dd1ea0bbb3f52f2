//! Host-side bindings generated from `wit/`. Every import is async (host calls may
//! wait, for example on a nested tool call) and trappable (the host can stop a
//! component that exceeds its log budget).
//!
//! The world below exists only for the host: it includes every world a
//! plugin is built against, so that it imports everything the host provides
//! and exports every interface a bundle of some kind exports, and a new
//! import reaches the host through the worlds that may use it. No component
//! exports them all; a bundle's exports are looked up one interface at a
//! time (`GuestIndices::new`), so a component needs only the ones its kind
//! and manifest call for.

wasmtime::component::bindgen!({
    path: "../../wit",
    inline: "
        package cordon:host;

        world runtime {
            include cordon:plugin/tool-plugin@0.1.0;
            include cordon:plugin/hook-plugin@0.1.0;
            include cordon:plugin/sandbox-backend@0.1.0;
            include cordon:plugin/interpreter-plugin@0.1.0;
        }
    ",
    world: "cordon:host/runtime",
    imports: { default: async | trappable },
    exports: { default: async },
});

pub(crate) use cordon::plugin::types::{ToolAnnotations, ToolSpec};
pub(crate) use exports::cordon::plugin::{
    after_tool_call, before_inference, before_tool_call, interpreter, step_end, tool, workspace,
};

/// The interface a tool component must export, without version.
pub(crate) const TOOL_EXPORT: &str = "cordon:plugin/tool";
/// The interface a sandbox backend must export, without version.
pub(crate) const WORKSPACE_EXPORT: &str = "cordon:plugin/workspace";
/// The interface an interpreter must export, without version.
pub(crate) const INTERPRETER_EXPORT: &str = "cordon:plugin/interpreter";
/// The version of the contract this host implements.
pub(crate) const CONTRACT_VERSION: &str = "0.1.0";
