//! What a Cordon host assembles before it runs anything, in one place the
//! `cordon` CLI, the MCP server and embedders share: the operator's settings
//! ([`operator`], [`network`], [`defaults`]), the plugin host and the
//! plugins search path ([`context`], [`plugin_path`]), the skills ([`skillset`]), the agent's MCP servers
//! ([`mcp_servers`]), the compile cache ([`cache`]), the run store ([`store`]) and which of its runs
//! a process drives ([`driving`]), and
//! the whole of a run's tools, hooks and sandbox ([`assembly`]), or the
//! plugins alone for commands outside a run ([`toolbox`]). What stops any
//! of it is a [`SessionError`] naming the file, field or flag at fault.

pub mod assembly;
pub mod cache;
pub mod context;
pub mod defaults;
pub mod driving;
pub mod error;
pub mod live;
pub mod mcp_servers;
pub mod network;
pub mod operator;
pub mod packages;
pub mod plugin_path;
pub mod settings;
pub mod skillset;
pub mod store;
pub mod toolbox;
pub mod xdg;

pub use assembly::{Assembly, Launch, Reloaded};
pub use error::SessionError;
pub use plugin_path::PluginPath;
pub use settings::HostSettings;
pub use toolbox::Toolbox;
