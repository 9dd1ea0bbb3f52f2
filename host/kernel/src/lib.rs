//! Cordon's native core.
//!
//! The kernel owns the contracts every other crate speaks: what a tool is and how a
//! call ends ([`tool`]), the agent's typed state and how staged writes apply
//! ([`state`]), the events that make up the audit trail ([`event`]), and which
//! tool calls may run ([`policy`]). It knows nothing of WebAssembly, SQL or
//! HTTP; adapters implement its ports.

pub mod event;
pub mod policy;
pub mod state;
pub mod tool;

pub use event::{Capability, Denial, Event, EventLog, EventSink, LimitKind, LogLevel};
pub use policy::{Decision, PermissionPolicy, PolicyError, Rule, Verdict};
pub use state::{
    MemoryStateStore, StagedState, StateError, StateOp, StateStore, StateStoreError, StateWrite,
    apply_writes,
};
pub use tool::{
    ToolAnnotations, ToolError, ToolErrorKind, ToolFuture, ToolOutput, ToolSet, ToolSpec,
};
