//! Cordon as an MCP server. The tools of an assembled run (its plugins and,
//! with a sandbox, the workspace tools) are offered to MCP clients; every
//! call is a step of a served run ([`cordon_kernel::ServedRun`]), so it
//! passes the operator's policy and hooks, runs in a fresh sandboxed instance
//! with its bundle's grants and limits, and is committed with its verdict and
//! audit events, visible in `cordon runs show` like any run. Requests run at
//! once, each on a run of its own while it runs ([`lanes`]).
//!
//! [`names`] maps tool names to the set clients accept, [`catalog`] is what
//! `tools/list` shows and how `tools/call` finds its tool, [`approvals`]
//! turns `ask` verdicts into elicitation and [`questions`] tools' own
//! questions, [`sealed`] keeps 2026-07-28 rounds' request state, [`relay`] forwards components'
//! progress and logs to the request whose call made them, [`server`] is the handler, [`watch`] follows the
//! plugins folder, and [`serve_stdio`] (on [`stdio`]'s streams) and
//! [`http`] the transports.

pub mod approvals;
pub mod catalog;
pub mod http;
pub mod lanes;
pub mod names;
pub mod questions;
pub mod relay;
pub mod sealed;
pub mod server;
pub mod stdio;
mod trace;
pub mod watch;

pub use catalog::{Catalog, CatalogError};
pub use lanes::{Lanes, Opener};
pub use relay::Relay;
pub use server::CordonMcp;

use rmcp::ServiceExt;

/// Serve `server` on this process's standard input and output until the
/// client closes them.
pub async fn serve_stdio(server: CordonMcp) -> anyhow::Result<()> {
    let streams = stdio::streams()
        .map_err(|error| anyhow::anyhow!("serving on standard input and output: {error}"))?;
    let running = server
        .serve(streams)
        .await
        .map_err(|error| anyhow::anyhow!("the MCP session did not start: {error}"))?;
    running
        .waiting()
        .await
        .map_err(|error| anyhow::anyhow!("the MCP session failed: {error}"))?;
    Ok(())
}
