//! The `cordon` binary driven as its users drive it, one module per job:
//! each module's tests run a scratch project (see `support`) through the
//! commands a person, an MCP client or a worker fleet would type. They share
//! one test binary, so the build links it once; run one group with
//! `cargo test -p cordon-cli --test all safeguards::`.

mod support;

mod approve;
mod build;
mod cli;
mod config;
mod conformance;
mod delegation;
mod docs;
mod first_run;
mod mcp;
mod mcp_at_once;
mod mcp_client;
mod network;
mod packages;
mod postgres;
mod run;
mod safeguards;
mod skills;
mod telemetry;
mod ui;
mod workers;
mod workspace;
