//! Cordon as an MCP client. An agent file lists MCP servers (`[mcp.NAME]`);
//! the operator approves each in its own config, out of the agent's reach:
//! a remote server only at origins the operator grants, reached through the
//! network policy every bundle obeys, and a local server only when the
//! operator marks it `unsandboxed = true` with the exact command it runs.
//! [`admit`] matches the one against the other, [`connect`] opens the
//! admitted servers, and [`McpTools`] offers their tools to the run as
//! `NAME.TOOL`, every call passing the same gate, hooks, approvals and step
//! commit as a component's.

mod admission;
mod connect;
mod result;
mod tools;
mod vetted;

pub use admission::{Admitted, LocalApproval, Refusal, ServerApproval, Transport, admit};
pub use connect::{ConnectError, Connection, connect};
pub use tools::McpTools;
