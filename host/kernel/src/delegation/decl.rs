//! Sub-agents as an agent file declares them: `[agents.NAME]`, either a
//! child's own agent file narrowed further by the table, or the child
//! written inline; and `[delegation]`, the bounds on a tree of runs.
//!
//! A child only narrows. What it declares of itself (tools, permission
//! rules, file rules, steps, hooks) is kept beside its parent's at each
//! call, never instead of it ([`AgentDef::within`]): its calls pass its
//! parent's hooks and its own, and obey its parent's file rules and its own.
//! What it cannot narrow that way (its workspace, skills, MCP servers) it
//! must leave to its parent, and a child file that sets any of them is
//! refused naming the field.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::agent::{AgentDef, AgentError, ModelSettings};
use crate::policy::{PermissionPolicy, PolicyTable, Verdict};
use crate::tool::ToolSpec;

/// The most sub-agent files one agent file may include, nested.
const FILE_NESTING: usize = 16;

/// The most sub-agent files one agent file may read in all, however they
/// include each other.
const FILES_IN_ALL: usize = 64;

/// A sub-agent an agent may delegate to, as the model sees it: the tool
/// `agent.NAME`.
#[derive(Debug, Clone)]
pub struct SubAgent {
    /// The tool it is to the model (`agent.NAME`), with what it does.
    pub spec: ToolSpec,
    /// The sub-agent, narrowed by its table but not yet by the agent
    /// calling it ([`AgentDef::within`] does that at each call).
    pub agent: AgentDef,
    /// The folder its relative paths (a scripted model's file) resolve
    /// against: its file's, or its parent's for one written inline.
    pub dir: PathBuf,
}

/// How far a tree of runs may grow (`[delegation]`). A sub-agent's own
/// bounds hold beneath it as far as they are tighter than its parent's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DelegationLimits {
    /// How many delegations deep a tree may go below its root.
    #[serde(default = "default_depth")]
    pub max_depth: u32,
    /// How many sub-agents one step may call at once.
    #[serde(default = "default_children_per_step")]
    pub max_children_per_step: u32,
    /// How many sub-agents' runs one root run may start, in all.
    #[serde(default = "default_child_runs")]
    pub max_child_runs: u32,
    /// The model tokens (read and written) a root run and its sub-agents'
    /// runs may spend together; unbounded when unset.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// The seconds a root run and its sub-agents' runs may be driven for,
    /// from its start or each resume; unbounded when unset.
    #[serde(default)]
    pub max_seconds: Option<u64>,
}

fn default_depth() -> u32 {
    3
}

fn default_children_per_step() -> u32 {
    4
}

fn default_child_runs() -> u32 {
    32
}

impl Default for DelegationLimits {
    fn default() -> Self {
        Self {
            max_depth: default_depth(),
            max_children_per_step: default_children_per_step(),
            max_child_runs: default_child_runs(),
            max_tokens: None,
            max_seconds: None,
        }
    }
}

impl DelegationLimits {
    /// Each bound the tighter of these and `outer`'s.
    pub(crate) fn within(self, outer: Self) -> Self {
        Self {
            max_depth: self.max_depth.min(outer.max_depth),
            max_children_per_step: self.max_children_per_step.min(outer.max_children_per_step),
            max_child_runs: self.max_child_runs.min(outer.max_child_runs),
            max_tokens: tighter(self.max_tokens, outer.max_tokens),
            max_seconds: tighter(self.max_seconds, outer.max_seconds),
        }
    }
}

/// The tighter of two optional bounds.
fn tighter(mine: Option<u64>, outer: Option<u64>) -> Option<u64> {
    match (mine, outer) {
        (Some(mine), Some(outer)) => Some(mine.min(outer)),
        (mine, outer) => mine.or(outer),
    }
}

/// `[agents.NAME]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct SubAgentTable {
    description: String,
    file: Option<PathBuf>,
    instructions: Option<String>,
    model: Option<String>,
    tools: Option<Vec<String>>,
    max_steps: Option<u32>,
    permissions: Option<PolicyTable>,
    sandbox: Option<String>,
    hooks: Option<Vec<String>>,
}

/// Where an agent file is read from, and the files that include it, so
/// that a file including itself is named rather than followed.
pub(crate) struct Including<'a> {
    /// The file, as errors name it.
    pub(crate) file: &'a str,
    /// Its workspace backend: a sub-agent works in its parent's.
    pub(crate) sandbox: Option<&'a str>,
    /// Whether its workspace is trusted.
    pub(crate) trusted: bool,
    /// How it reaches and samples its model, which its inline sub-agents
    /// share.
    pub(crate) settings: &'a ModelSettings,
    /// The files including it, outermost first, itself last.
    pub(crate) chain: &'a [PathBuf],
    /// How many sub-agent files the agent at the top has read so far.
    pub(crate) loaded: &'a Cell<usize>,
}

/// Whether `name` may name a sub-agent: the model calls it as `agent.NAME`.
fn name_problem(name: &str) -> Option<&'static str> {
    let starts = name.bytes().next().is_some_and(|b| b.is_ascii_lowercase());
    let rest = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    (!starts || !rest || name.len() > 48).then_some(
        "a sub-agent's name is 1 to 48 of `a-z`, `0-9`, `-` and `_`, starting with a letter",
    )
}

/// The sub-agents `tables` declare, for the agent file `including`.
pub(crate) fn sub_agents(
    including: &Including<'_>,
    tables: BTreeMap<String, SubAgentTable>,
) -> Result<BTreeMap<String, Arc<SubAgent>>, AgentError> {
    let dir = Path::new(including.file)
        .parent()
        .unwrap_or_else(|| Path::new(""))
        .to_path_buf();
    let mut agents = BTreeMap::new();
    for (name, table) in tables {
        let field = format!("agents.{name}");
        let invalid = |field: &str, message: String| AgentError::Invalid {
            file: including.file.to_owned(),
            field: field.to_owned(),
            message,
        };
        if let Some(problem) = name_problem(&name) {
            return Err(invalid(&field, problem.into()));
        }
        if table.description.trim().is_empty() {
            return Err(invalid(
                &format!("{field}.description"),
                "say what the sub-agent does: the model reads it to choose".into(),
            ));
        }
        if let Some(sandbox) = &table.sandbox
            && Some(sandbox.as_str()) != including.sandbox
        {
            return Err(invalid(
                &format!("{field}.sandbox"),
                format!(
                    "a sub-agent works in its parent's workspace ({}), not in `{sandbox}`",
                    including.sandbox.unwrap_or("none")
                ),
            ));
        }
        let description = table.description.clone();
        let (agent, child_dir) = match &table.file {
            Some(file) => {
                let path = dir.join(file);
                let mut agent = child_file(including, &path, &format!("{field}.file"))?;
                narrow(&mut agent, table, &invalid, &field)?;
                let child_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                (agent, child_dir)
            }
            None => {
                let mut agent = inline(&name, table, &invalid, &field)?;
                // An inline sub-agent shares its file's model settings.
                agent.model_settings = including.settings.clone();
                (agent, dir.clone())
            }
        };
        let spec = super::spec::spec_of(&name, &description);
        agents.insert(
            name,
            Arc::new(SubAgent {
                spec,
                agent,
                dir: child_dir,
            }),
        );
    }
    Ok(agents)
}

/// The child agent file at `path`, which may set nothing a sub-agent
/// leaves to its parent.
fn child_file(including: &Including<'_>, path: &Path, field: &str) -> Result<AgentDef, AgentError> {
    let invalid = |message: String| AgentError::Invalid {
        file: including.file.to_owned(),
        field: field.to_owned(),
        message,
    };
    let canonical = path
        .canonicalize()
        .map_err(|error| invalid(format!("cannot read {}: {error}", path.display())))?;
    if including.chain.contains(&canonical) {
        return Err(invalid(format!(
            "{} includes itself through its sub-agents",
            path.display()
        )));
    }
    if including.chain.len() >= FILE_NESTING {
        return Err(invalid(format!(
            "sub-agent files nest more than {FILE_NESTING} deep"
        )));
    }
    including.loaded.set(including.loaded.get() + 1);
    if including.loaded.get() > FILES_IN_ALL {
        return Err(invalid(format!(
            "an agent's sub-agents may read at most {FILES_IN_ALL} agent files in all"
        )));
    }
    let mut chain = including.chain.to_vec();
    chain.push(canonical);
    let child = AgentDef::load_within(
        path,
        &chain,
        (including.sandbox, including.trusted),
        including.loaded,
    )?;
    let child_file = path.display().to_string();
    let left_to_parent = |field: &str, what: &str| AgentError::Invalid {
        file: child_file.clone(),
        field: field.to_owned(),
        message: format!(
            "a sub-agent uses its parent's {what}; declare it in the agent that delegates ({})",
            including.file
        ),
    };
    if child.sandbox.is_some() && child.sandbox.as_deref() != including.sandbox {
        return Err(left_to_parent("sandbox", "workspace"));
    }
    if child.trusted && !including.trusted {
        return Err(left_to_parent("trusted", "workspace, transactional or not"));
    }
    if !child.skills.is_empty() {
        return Err(left_to_parent("skills", "skills"));
    }
    if !child.mcp.is_empty() {
        return Err(left_to_parent("mcp", "MCP servers"));
    }
    Ok(child)
}

/// The sub-agent `name` written inline in its table: its permission rules
/// add to its parent's, and without any it adds none.
fn inline(
    name: &str,
    table: SubAgentTable,
    invalid: &dyn Fn(&str, String) -> AgentError,
    field: &str,
) -> Result<AgentDef, AgentError> {
    let tools: Vec<&str> = match &table.tools {
        Some(tools) => tools.iter().map(String::as_str).collect(),
        None => vec!["*"],
    };
    let steps = table.max_steps.unwrap_or(12);
    if steps == 0 {
        return Err(invalid(
            &format!("{field}.max-steps"),
            "must be at least 1".into(),
        ));
    }
    let mut agent = AgentDef::new(
        name,
        table.instructions.as_deref().unwrap_or_default(),
        &tools,
        steps,
        PermissionPolicy::new(Verdict::Allow),
    )
    .map_err(|error| invalid(&format!("{field}.tools"), error.to_string()))?;
    agent.model = table.model;
    agent.hooks = table.hooks;
    if let Some(permissions) = table.permissions {
        agent.permissions = built(permissions, invalid, field)?;
    }
    Ok(agent)
}

/// A child file's agent narrowed by the rest of its table.
fn narrow(
    agent: &mut AgentDef,
    table: SubAgentTable,
    invalid: &dyn Fn(&str, String) -> AgentError,
    field: &str,
) -> Result<(), AgentError> {
    if let Some(instructions) = table.instructions {
        agent.instructions = instructions;
    }
    if let Some(model) = table.model {
        agent.model = Some(model);
    }
    if let Some(hooks) = table.hooks {
        agent.hooks.get_or_insert_with(Vec::new).extend(hooks);
    }
    if let Some(steps) = table.max_steps {
        if steps == 0 {
            return Err(invalid(
                &format!("{field}.max-steps"),
                "must be at least 1".into(),
            ));
        }
        agent.max_steps = agent.max_steps.min(steps);
    }
    if let Some(tools) = table.tools {
        agent.narrow_tools(&tools).map_err(|(pattern, reason)| {
            invalid(&format!("{field}.tools"), format!("{pattern:?}: {reason}"))
        })?;
    }
    if let Some(permissions) = table.permissions {
        let outer = built(permissions, invalid, field)?;
        agent.permissions = agent.permissions.within(&outer);
    }
    Ok(())
}

/// The policy `table` writes for `[agents.NAME.permissions]`.
fn built(
    table: PolicyTable,
    invalid: &dyn Fn(&str, String) -> AgentError,
    field: &str,
) -> Result<PermissionPolicy, AgentError> {
    table
        .build_or(Verdict::Allow)
        .map_err(|(at, error)| invalid(&format!("{field}.permissions.{at}"), error.to_string()))
}
