//! Opening an admitted server: a local one started as the operator approved
//! it (in the workspace folder, with a cleared environment but for `PATH`,
//! `HOME`, `LANG`, `TMPDIR` and the approved variables, its stderr shown
//! line by line), a remote one over streamable HTTP with a client that
//! resolves through the network policy, never follows a redirect, ignores
//! proxy variables and bounds every response. Both are initialized and
//! their tools listed before the run starts.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use cordon_wasm::{Host, NetworkPolicy, SecretValue};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::admission::{Admitted, LocalApproval, Transport, origin_of};
use crate::vetted::{VettedResolver, reachable};

/// How long a server has to answer `initialize` and list its tools.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a TCP connection to a remote server may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The variables of Cordon's environment a local server sees.
const KEPT_ENV: [&str; 4] = ["PATH", "HOME", "LANG", "TMPDIR"];

/// An initialized server and the tools it listed.
pub struct Connection {
    /// The server as admitted.
    pub admitted: Admitted,
    /// Its tools, as it listed them.
    pub tools: Vec<Tool>,
    pub(crate) service: RunningService<RoleClient, ClientConfig>,
}

/// Why a server could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("MCP server `{name}`: {message}")]
pub struct ConnectError {
    /// The server.
    pub name: String,
    /// What went wrong.
    pub message: String,
}

/// Open `admitted`, a local server starting in `workspace`, a remote one
/// reached under `policy`.
pub async fn connect(
    admitted: Admitted,
    policy: &Arc<NetworkPolicy>,
    workspace: &Path,
) -> Result<Connection, ConnectError> {
    let fail = |message: String| ConnectError {
        name: admitted.name.clone(),
        message,
    };
    let handler = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("cordon", env!("CARGO_PKG_VERSION")),
    );
    let started = match &admitted.transport {
        Transport::Local(local) => {
            let transport = spawn(&admitted.name, local, workspace).map_err(fail)?;
            tokio::time::timeout(START_TIMEOUT, handler.serve(transport)).await
        }
        Transport::Remote { url, bearer } => {
            preflight(url, policy).await.map_err(fail)?;
            let transport = http_transport(
                url,
                bearer.as_ref().map(SecretValue::expose),
                policy,
                admitted.output_bytes,
            )
            .map_err(fail)?;
            tokio::time::timeout(START_TIMEOUT, handler.serve(transport)).await
        }
    };
    let service = started
        .map_err(|_| {
            fail(format!(
                "did not answer `initialize` within {}s",
                START_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|error| fail(format!("initialize failed: {}", initialize_failure(&error))))?;
    let tools = tokio::time::timeout(START_TIMEOUT, service.peer().list_all_tools())
        .await
        .map_err(|_| {
            fail(format!(
                "did not list its tools within {}s",
                START_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|error| fail(format!("tools/list failed: {}", deepest(&error))))?;
    Ok(Connection {
        admitted,
        tools,
        service,
    })
}

/// Start `local` in `workspace`, its stderr shown prefixed with `name`.
fn spawn(name: &str, local: &LocalApproval, workspace: &Path) -> Result<TokioChildProcess, String> {
    let (program, args) = local
        .command
        .split_first()
        .ok_or("the approved command is empty")?;
    let mut command = tokio::process::Command::new(program);
    command.args(args).current_dir(workspace).env_clear();
    for key in KEPT_ENV {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    command.envs(&local.env);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("starting `{program}`: {error}"))?;
    if let Some(stderr) = stderr {
        let name = name.to_owned();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("mcp server `{name}`: {line}");
            }
        });
    }
    Ok(transport)
}

/// Whether `url`'s host has an address a connection may go to, checked
/// before connecting so that a refusal reads as one; the connection itself
/// resolves through the same checks.
async fn preflight(url: &url::Url, policy: &NetworkPolicy) -> Result<(), String> {
    let (_, host, _) = origin_of(url)?;
    let (name, found) = match host {
        Host::Ip(ip) => (ip.to_string(), vec![ip]),
        Host::Name(name) => {
            let found = policy
                .resolver
                .resolve(&name)
                .await
                .map_err(|error| format!("resolving {name}: {error}"))?;
            (name, found)
        }
    };
    reachable(policy, &name, &found)
        .map(drop)
        .map_err(|error| error.to_string())
}

/// Why `initialize` failed, in the words of the deepest cause a transport
/// gives.
fn initialize_failure(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, .. } => deepest(error.error.as_ref()),
        other => deepest(other),
    }
}

/// What went wrong at the bottom of `error`'s chain of causes.
fn deepest(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// The streamable HTTP transport to `url`, its connections judged by
/// `policy`, each response at most twice `output_bytes`.
fn http_transport(
    url: &url::Url,
    bearer: Option<&str>,
    policy: &Arc<NetworkPolicy>,
    output_bytes: usize,
) -> Result<StreamableHttpClientTransport<mcp_reqwest::Client>, String> {
    let client = mcp_reqwest::Client::builder()
        .tls_backend_preconfigured(policy.tls_config())
        .dns_resolver(Arc::new(VettedResolver {
            policy: Arc::clone(policy),
        }))
        .redirect(mcp_reqwest::redirect::Policy::none())
        .no_proxy()
        .http1_only()
        .connect_timeout(CONNECT_TIMEOUT)
        .build()
        .map_err(|error| format!("building the HTTP client: {error}"))?;
    let limit = output_bytes.saturating_mul(2);
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
        .max_json_response_size(limit)
        .max_sse_event_size(limit)
        .max_error_response_size(64 * 1024);
    if let Some(token) = bearer {
        config = config.auth_header(token);
    }
    Ok(StreamableHttpClientTransport::with_client(client, config))
}
