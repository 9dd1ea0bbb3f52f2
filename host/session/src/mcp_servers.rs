//! The MCP servers a run's agent lists: the operator's approvals of them,
//! from `[mcp.NAME]` tables of its config, and the servers admitted under
//! them and connected.
//!
//! ```toml
//! [mcp.docs]                                # a remote server
//! origins = ["https://mcp.example.com"]     # where agents may reach it
//! bearer = { env = "DOCS_TOKEN" }           # sent to it, and to nothing else
//! timeout-secs = 60                         # per call (the default)
//! max-output-kib = 1024                     # per result (the default)
//! trusted = false                           # believe its tool annotations
//!
//! [mcp.git]                                 # a local server, over stdio
//! unsandboxed = true                        # it runs on this host, outside any sandbox
//! command = ["uvx", "mcp-server-git"]       # exactly this, in the workspace folder
//! env = { GIT_AUTHOR_NAME = "cordon" }      # besides PATH, HOME, LANG, TMPDIR
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::AgentDef;
use cordon_mcp_client::{LocalApproval, McpTools, ServerApproval, admit, connect};
use cordon_wasm::{NetworkPolicy, Origin, Scheme};
use serde::Deserialize;

use crate::error::{Result, SessionError};
use crate::network::{SecretSource, value};

/// How long a call may take when the operator does not say.
const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The largest result when the operator does not say.
const DEFAULT_OUTPUT_KIB: usize = 1024;

/// `[mcp.NAME]` as an operator config writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ApprovalTable {
    #[serde(default)]
    origins: Vec<String>,
    #[serde(default)]
    unsandboxed: bool,
    command: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    bearer: Option<SecretSource>,
    timeout_secs: Option<u64>,
    max_output_kib: Option<usize>,
    #[serde(default)]
    trusted: bool,
}

impl ApprovalTable {
    /// The approval `file`'s table for server `name` gives.
    pub fn approval(self, file: &Path, name: &str) -> Result<ServerApproval> {
        let written = format!("{}: [mcp.{name}]", file.display());
        let field = |field: &str| format!("field `mcp.{name}.{field}`");
        let invalid = |problem: String| SessionError::Invalid {
            file: file.display().to_string(),
            problem,
        };
        let mut origins = Vec::new();
        for (index, text) in self.origins.iter().enumerate() {
            let origin = Origin::parse(text).map_err(|reason| {
                invalid(format!(
                    "{}[{index}] = {text:?}: {reason}",
                    field("origins")
                ))
            })?;
            if origin.scheme() == Scheme::Tcp {
                return Err(invalid(format!(
                    "{}[{index}] = {text:?}: an MCP server is reached over https or http",
                    field("origins")
                )));
            }
            origins.push(origin);
        }
        let local = match (self.unsandboxed, self.command) {
            (true, Some(command)) if command.first().is_some_and(|program| !program.is_empty()) => {
                Some(LocalApproval {
                    command,
                    env: self.env,
                })
            }
            (true, _) => {
                return Err(invalid(format!(
                    "{}: `unsandboxed = true` approves one command: write `command = [\"program\", ...]`",
                    field("command")
                )));
            }
            (false, Some(_)) => {
                return Err(invalid(format!(
                    "{}: a local server runs on this host outside any sandbox; write `unsandboxed = true` to approve it",
                    field("command")
                )));
            }
            (false, None) if !self.env.is_empty() => {
                return Err(invalid(format!(
                    "{}: only a local server (`unsandboxed = true`, `command`) has an environment",
                    field("env")
                )));
            }
            (false, None) => None,
        };
        if origins.is_empty() && local.is_none() {
            return Err(invalid(format!(
                "[mcp.{name}]: approve a remote server with `origins = [\"https://...\"]` or a local one with `unsandboxed = true` and `command`"
            )));
        }
        let timeout = match self.timeout_secs {
            None => DEFAULT_TIMEOUT_SECS,
            Some(secs @ 1..=3600) => secs,
            Some(secs) => {
                return Err(invalid(format!(
                    "{} = {secs}: 1 to 3600 seconds",
                    field("timeout-secs")
                )));
            }
        };
        let output_kib = match self.max_output_kib {
            None => DEFAULT_OUTPUT_KIB,
            Some(kib @ 1..=65536) => kib,
            Some(kib) => {
                return Err(invalid(format!(
                    "{} = {kib}: 1 to 65536 KiB",
                    field("max-output-kib")
                )));
            }
        };
        let bearer = match &self.bearer {
            None => None,
            Some(source) => match value(source) {
                Ok(token) => Some(token),
                Err(reason) => {
                    eprintln!(
                        "warning: {}: {}: not provided: {reason}; MCP server `{name}` is reached without it",
                        file.display(),
                        field("bearer")
                    );
                    None
                }
            },
        };
        Ok(ServerApproval {
            written,
            origins,
            local,
            bearer,
            timeout: Duration::from_secs(timeout),
            trusted: self.trusted,
            output_bytes: output_kib * 1024,
        })
    }
}

/// The servers `agent` (read from `file`) lists, admitted under
/// `approvals` and connected, local ones starting in `workspace`, remote ones
/// reached under `policy`; `None` when it lists none. An admission refused
/// stops the run before anything starts; a server that cannot be reached is
/// left out with a loud error, unless `strict`. Returns, too, what a person
/// starting the run should read.
pub async fn open(
    agent: &AgentDef,
    file: Option<&Path>,
    approvals: &BTreeMap<String, ServerApproval>,
    policy: &Arc<NetworkPolicy>,
    workspace: &Path,
    strict: bool,
) -> Result<(Option<McpTools>, Vec<String>)> {
    if agent.mcp.is_empty() {
        return Ok((None, Vec::new()));
    }
    let shown = file.map_or_else(|| "the agent".to_owned(), |file| file.display().to_string());
    let mut admitted = Vec::new();
    for (name, declared) in &agent.mcp {
        admitted.push(admit(&shown, name, declared, approvals.get(name))?);
    }
    let mut connected = Vec::new();
    let mut notices = Vec::new();
    for server in admitted {
        let reach = server
            .unsandboxed()
            .unwrap_or_else(|| format!("MCP server `{}` over HTTP", server.name));
        match connect(server, policy, workspace).await {
            Ok(connection) => {
                notices.push(format!("{reach}: {} tools", connection.tools.len()));
                connected.push(connection);
            }
            Err(error) if strict => return Err(error.into()),
            Err(error) => eprintln!("error: {error}; its tools are left out of the run"),
        }
    }
    let tools = McpTools::new(connected);
    for warning in tools.warnings() {
        eprintln!("warning: {warning}");
    }
    Ok((Some(tools), notices))
}
