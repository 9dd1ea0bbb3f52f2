//! The tools of the connected servers as one [`ToolSet`]: server `docs`'s
//! tool `search` is `docs.search` to the agent, its rules and its hooks.
//! Arguments are checked against the server's schema before they leave;
//! annotations are believed only for a server the operator trusts, and the
//! worst case otherwise; a call stops at its timeout or when whoever asked
//! for it cancels, and the server hears the cancellation.

use std::collections::BTreeMap;
use std::sync::Arc;

use cordon_kernel::{
    CallContext, ToolAnnotations, ToolCallOutcome, ToolError, ToolErrorKind, ToolFuture, ToolSet,
    ToolSpec, schema_problems,
};
use rmcp::model::{CallToolRequestParams, Tool};
use serde_json::Value;

use crate::admission::Admitted;
use crate::connect::Connection;
use crate::result::outcome;

/// The longest tool name a server may give, as MCP allows.
const NAME_BYTES: usize = 128;

/// One tool of one server.
struct Route {
    server: usize,
    name: String,
    validator: Option<Arc<jsonschema::Validator>>,
}

/// The tools of every connected server.
pub struct McpTools {
    servers: Vec<Connection>,
    specs: Vec<ToolSpec>,
    routes: BTreeMap<String, Route>,
    warnings: Vec<String>,
}

impl McpTools {
    /// The tools `servers` listed. A tool whose name cannot travel is left
    /// out with a warning.
    pub fn new(servers: Vec<Connection>) -> Self {
        let mut specs = Vec::new();
        let mut routes = BTreeMap::new();
        let mut warnings = Vec::new();
        for (index, server) in servers.iter().enumerate() {
            let name = &server.admitted.name;
            for tool in &server.tools {
                if !travels(&tool.name) {
                    warnings.push(format!(
                        "MCP server `{name}`: tool {:?} is left out: a tool's name is 1 to {NAME_BYTES} of `A-Z`, `a-z`, `0-9`, `_`, `-` and `.`",
                        tool.name
                    ));
                    continue;
                }
                let full = format!("{name}.{}", tool.name);
                if routes.contains_key(&full) {
                    warnings.push(format!(
                        "MCP server `{name}`: tool {:?} is listed twice; the first is kept",
                        tool.name
                    ));
                    continue;
                }
                let spec = spec(&full, tool, server.admitted.trusted);
                let validator = jsonschema::validator_for(&spec.input_schema)
                    .ok()
                    .map(Arc::new);
                routes.insert(
                    full,
                    Route {
                        server: index,
                        name: tool.name.to_string(),
                        validator,
                    },
                );
                specs.push(spec);
            }
        }
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        Self {
            servers,
            specs,
            routes,
            warnings,
        }
    }

    /// What the operator should hear about the servers' tools.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// For every tool that runs outside any sandbox, what a person deciding
    /// about its calls should know, by tool name.
    pub fn unsandboxed(&self) -> BTreeMap<String, String> {
        self.routes
            .iter()
            .filter_map(|(tool, route)| {
                let note = self.servers[route.server].admitted.unsandboxed()?;
                Some((tool.clone(), note))
            })
            .collect()
    }

    /// The server that serves `tool`, as admitted.
    pub fn server_of(&self, tool: &str) -> Option<&Admitted> {
        let route = self.routes.get(tool)?;
        Some(&self.servers[route.server].admitted)
    }
}

impl ToolSet for McpTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn call<'a>(&'a self, name: &'a str, args: Value, context: CallContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let Some(route) = self.routes.get(name) else {
                return ToolCallOutcome::error(ToolError::new(
                    ToolErrorKind::NotFound,
                    format!("no tool named `{name}`"),
                ));
            };
            let server = &self.servers[route.server];
            let admitted = &server.admitted;
            if let Some(problems) = route
                .validator
                .as_deref()
                .and_then(|validator| schema_problems(validator, &args))
            {
                return ToolCallOutcome::error(ToolError::new(
                    ToolErrorKind::InvalidInput,
                    format!("arguments of `{name}`: {problems}"),
                ));
            }
            let mut params = CallToolRequestParams::new(route.name.clone());
            match args {
                Value::Object(arguments) => params = params.with_arguments(arguments),
                Value::Null => {}
                other => {
                    return ToolCallOutcome::error(ToolError::new(
                        ToolErrorKind::InvalidInput,
                        format!("arguments of `{name}` are an object, not {other}"),
                    ));
                }
            }
            let call =
                tokio::time::timeout(admitted.timeout, server.service.peer().call_tool(params));
            tokio::select! {
                answered = call => match answered {
                    Ok(Ok(result)) => outcome(&admitted.name, result, admitted.output_bytes),
                    Ok(Err(error)) => ToolCallOutcome::error(ToolError::new(
                        ToolErrorKind::Failed,
                        format!("MCP server `{}`: {error}", admitted.name),
                    )),
                    Err(_) => ToolCallOutcome::error(ToolError::new(
                        ToolErrorKind::Timeout,
                        format!(
                            "MCP server `{}` did not answer within {}s; the operator sets `timeout-secs` under its `[mcp.{}]`",
                            admitted.name,
                            admitted.timeout.as_secs(),
                            admitted.name
                        ),
                    )),
                },
                () = context.cancel.cancelled() => ToolCallOutcome::error(ToolError::new(
                    ToolErrorKind::Cancelled,
                    format!("the call to MCP server `{}` was cancelled", admitted.name),
                )),
            }
        })
    }
}

/// Whether a server's tool `name` can travel as part of a Cordon tool name.
fn travels(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The spec of `tool` as `full`, its annotations believed when `trusted`.
fn spec(full: &str, tool: &Tool, trusted: bool) -> ToolSpec {
    let description = tool
        .description
        .as_deref()
        .or(tool.title.as_deref())
        .unwrap_or_default()
        .to_owned();
    let annotations = match (&tool.annotations, trusted) {
        (Some(hints), true) => ToolAnnotations {
            read_only: hints.read_only_hint.unwrap_or(false),
            destructive: hints.destructive_hint.unwrap_or(true),
            idempotent: hints.idempotent_hint.unwrap_or(false),
            open_world: hints.open_world_hint.unwrap_or(true),
        },
        _ => ToolAnnotations::UNTRUSTED,
    };
    ToolSpec {
        name: full.to_owned(),
        description,
        input_schema: Arc::new(Value::Object((*tool.input_schema).clone())),
        output_schema: tool
            .output_schema
            .as_ref()
            .map(|schema| Arc::new(Value::Object((**schema).clone()))),
        annotations,
    }
}
