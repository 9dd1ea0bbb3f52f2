//! The agent definition: an immutable description of what a run executes.

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::delegation::decl::{self, DelegationLimits, Including, SubAgent, SubAgentTable};
use crate::policy::{PermissionPolicy, PolicyError, PolicyTable};
use crate::typed_state::{MergePolicy, Scope, StateKey};
use std::cell::Cell;
use std::sync::Arc;

/// What a run executes. Immutable once built; a run never changes it.
#[derive(Debug, Clone)]
pub struct AgentDef {
    /// The agent's name.
    pub name: String,
    /// Instructions the model receives with every step.
    pub instructions: String,
    /// Which model to use, such as `scripted:demo.toml`; the host resolves it.
    pub model: Option<String>,
    /// How to reach and sample the model.
    pub model_settings: ModelSettings,
    /// The most model steps a run may take; the last one must answer without tools.
    pub max_steps: u32,
    /// The gate every tool call passes.
    pub permissions: PermissionPolicy,
    /// Declared state keys. When any are declared, the model sees only these,
    /// and a call that writes any other key, or leaves a value its schema
    /// rejects, fails and commits nothing. When none are, state is open.
    pub state: BTreeMap<String, StateKey>,
    /// The sandbox backend holding the agent's workspace, such as `dir`; the
    /// host resolves it.
    pub sandbox: Option<String>,
    /// Whether the operator trusts the agent to change its workspace folder
    /// directly. An untrusted agent's file changes are staged and committed
    /// with each step (a transactional workspace).
    pub trusted: bool,
    /// Folders of skills (or skill folders) the agent offers, as written:
    /// relative paths are relative to the agent file; the host resolves them.
    pub skills: Vec<PathBuf>,
    /// The MCP servers whose tools join the run, by name; the host admits
    /// each only as far as the operator approved it.
    pub mcp: BTreeMap<String, McpServerDecl>,
    /// The hook bundles that run, by name, when the agent file chooses
    /// (`hooks = [...]`; `[]` runs none); `None` runs every hook bundle
    /// loaded.
    pub hooks: Option<Vec<String>>,
    /// The sub-agents it may delegate to, by name: the model calls each as
    /// the tool `agent.NAME`.
    pub agents: BTreeMap<String, Arc<SubAgent>>,
    /// How far a tree of runs under it may grow.
    pub delegation: DelegationLimits,
    tools: GlobSet,
    tool_patterns: Vec<String>,
    /// The tool lists of the agents that delegate to this one, each of
    /// which a tool must match too.
    outer_tools: Vec<Arc<GlobSet>>,
    /// Whether an agent delegates to this one ([`AgentDef::within`]).
    delegated: bool,
    /// Keys bundles declare for an agent whose state is open: their scope,
    /// merge policy and schema hold, and state stays open.
    adopted: BTreeMap<String, StateKey>,
    /// The bundle whose declaration each adopted key follows.
    adopted_from: BTreeMap<String, String>,
}

/// A bundle's declaration of a state key that the agent declares otherwise.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "state key `{key}`: {} declares {field} = \"{agent}\", and bundle `{owner}`, which writes it, declares {field} = \"{bundle}\"",
    first.as_ref().map_or_else(|| "the agent".to_owned(), |first| format!("bundle `{first}`"))
)]
pub struct StateDisagreement {
    /// The key.
    pub key: String,
    /// The bundle declaring it.
    pub owner: String,
    /// The bundle whose earlier declaration it contradicts; `None` for the
    /// agent's own.
    pub first: Option<String>,
    /// What differs: `scope` or `merge`.
    pub field: &'static str,
    /// The agent's value, or the first bundle's.
    pub agent: String,
    /// The bundle's value.
    pub bundle: String,
}

/// How the agent's model is reached and sampled; each unset value is the
/// provider's default.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ModelSettings {
    /// The provider's base URL.
    pub base_url: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// The most output tokens per step.
    pub max_tokens: Option<u32>,
    /// Whether the model is sent the images tool results carry; the
    /// provider decides when the agent does not say.
    pub images: Option<bool>,
}

/// Why an agent definition was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// The file cannot be read or parsed.
    #[error("{file}: {message}")]
    File {
        /// The agent file.
        file: String,
        /// Why it cannot be read or parsed.
        message: String,
    },
    /// A value is not acceptable.
    #[error("{file}: field `{field}`: {message}")]
    Invalid {
        /// The agent file.
        file: String,
        /// The field at fault, such as `max-steps` or `permissions.deny[1]`.
        field: String,
        /// Why the value was refused.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct AgentFile {
    name: String,
    #[serde(default)]
    instructions: String,
    model: Option<String>,
    base_url: Option<String>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    images: Option<bool>,
    #[serde(default = "default_tools")]
    tools: Vec<String>,
    #[serde(default = "default_max_steps")]
    max_steps: u32,
    #[serde(default)]
    permissions: PolicyTable,
    #[serde(default)]
    state: BTreeMap<String, StateTable>,
    sandbox: Option<String>,
    #[serde(default)]
    trusted: bool,
    #[serde(default)]
    skills: Vec<PathBuf>,
    #[serde(default)]
    mcp: BTreeMap<String, McpTable>,
    hooks: Option<Vec<String>>,
    #[serde(default)]
    agents: BTreeMap<String, SubAgentTable>,
    #[serde(default)]
    delegation: DelegationLimits,
}

/// `[mcp.NAME]` as an agent file writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct McpTable {
    url: Option<String>,
    command: Option<Vec<String>>,
}

/// An MCP server an agent file lists, as written there. Its tools join the
/// run as `NAME.TOOL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServerDecl {
    /// A server reached over streamable HTTP at `url`.
    Remote {
        /// The endpoint, such as `https://mcp.example.com/mcp`.
        url: String,
    },
    /// A server the host starts and speaks to over stdio: a program and its
    /// arguments.
    Local {
        /// The program, then its arguments.
        command: Vec<String>,
    },
}

impl McpTable {
    fn build(self) -> Result<McpServerDecl, String> {
        match (self.url, self.command) {
            (Some(url), None) => Ok(McpServerDecl::Remote { url }),
            (None, Some(command)) if command.first().is_some_and(|program| !program.is_empty()) => {
                Ok(McpServerDecl::Local { command })
            }
            (None, Some(_)) => Err("`command` names a program, then its arguments".into()),
            (Some(_), Some(_)) => {
                Err("write `url` for a remote server or `command` for a local one, not both".into())
            }
            (None, None) => Err(
                "write `url = \"https://...\"` for a remote server or `command = [\"program\", ...]` for a local one"
                    .into(),
            ),
        }
    }
}

/// Whether `name` may name an MCP server: its tools travel as `NAME.TOOL`.
fn mcp_name_problem(name: &str) -> Option<&'static str> {
    let starts = name.bytes().next().is_some_and(|b| b.is_ascii_lowercase());
    let rest = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !starts || !rest || name.len() > 32 {
        Some("a server's name is 1 to 32 of `a-z`, `0-9` and `-`, starting with a letter")
    } else {
        None
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateTable {
    schema: Option<Value>,
    #[serde(default)]
    scope: Scope,
    #[serde(default)]
    merge: MergePolicy,
}

fn default_tools() -> Vec<String> {
    vec!["*".into()]
}

fn default_max_steps() -> u32 {
    12
}

impl AgentDef {
    /// An agent named `name` that may use tools matching `tools` under `permissions`.
    pub fn new(
        name: &str,
        instructions: &str,
        tools: &[&str],
        max_steps: u32,
        permissions: PermissionPolicy,
    ) -> Result<Self, PolicyError> {
        let patterns: Vec<String> = tools.iter().map(|tool| (*tool).to_owned()).collect();
        let set = tool_set(&patterns).map_err(|(pattern, reason)| PolicyError::Rule {
            rule: pattern,
            reason,
        })?;
        Ok(Self {
            name: name.to_owned(),
            instructions: instructions.to_owned(),
            model: None,
            model_settings: ModelSettings::default(),
            max_steps: max_steps.max(1),
            permissions,
            state: BTreeMap::new(),
            sandbox: None,
            trusted: false,
            skills: Vec::new(),
            mcp: BTreeMap::new(),
            hooks: None,
            agents: BTreeMap::new(),
            delegation: DelegationLimits::default(),
            tools: set,
            tool_patterns: patterns,
            outer_tools: Vec::new(),
            delegated: false,
            adopted: BTreeMap::new(),
            adopted_from: BTreeMap::new(),
        })
    }

    /// Read an agent file:
    ///
    /// ```toml
    /// name = "researcher"
    /// instructions = "Answer from the workspace's files."
    /// model = "scripted:script.toml"     # or openai:MODEL, anthropic:MODEL
    /// temperature = 0.2                  # optional, 0 to 2
    /// max-tokens = 2048                  # optional: output tokens per step
    /// images = true                      # optional: send tool results' images to the model
    /// base-url = "http://localhost:11434/v1"  # optional: the provider's endpoint
    /// tools = ["files.*", "jq.query"]
    /// max-steps = 8
    /// sandbox = "dir"            # optional: the workspace's sandbox backend
    /// trusted = false            # the default: file changes are transactional
    /// skills = ["skills"]        # folders of skills, relative to this file
    /// [mcp.docs]                 # an MCP server's tools join as `docs.TOOL`,
    /// url = "https://mcp.example.com/mcp"  # as far as the operator approved it
    /// [mcp.git]
    /// command = ["uvx", "mcp-server-git"]
    /// [state.notes]
    /// schema = { type = "array" }
    /// scope = "thread"           # or "run" (the default)
    /// merge = "commutative"      # or "exclusive" (the default), "disjoint"
    /// [permissions]
    /// default = "ask"
    /// allow = ["files.*"]
    /// deny = ["files.read(path=**/.env)"]
    /// ```
    pub fn load(file: &Path) -> Result<Self, AgentError> {
        let chain: Vec<PathBuf> = file.canonicalize().into_iter().collect();
        Self::load_file(file, &chain, None, &Cell::new(0))
    }

    /// Read the agent file of a sub-agent, which `chain` includes, working
    /// in its parent's workspace (`parent`: its backend and whether it is
    /// trusted).
    /// `loaded` counts the sub-agent files read for the agent at the top.
    pub(crate) fn load_within(
        file: &Path,
        chain: &[PathBuf],
        parent: (Option<&str>, bool),
        loaded: &Cell<usize>,
    ) -> Result<Self, AgentError> {
        Self::load_file(file, chain, Some(parent), loaded)
    }

    fn load_file(
        file: &Path,
        chain: &[PathBuf],
        parent: Option<(Option<&str>, bool)>,
        loaded: &Cell<usize>,
    ) -> Result<Self, AgentError> {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file).map_err(|error| AgentError::File {
            file: name.clone(),
            message: format!("cannot read: {error}"),
        })?;
        Self::parse_in(&name, &text, chain, parent, loaded)
    }

    /// Parse agent file `text`, reporting errors against `file`; the files
    /// of its sub-agents are read relative to `file`'s folder.
    pub fn parse(file: &str, text: &str) -> Result<Self, AgentError> {
        let chain: Vec<PathBuf> = Path::new(file).canonicalize().into_iter().collect();
        Self::parse_in(file, text, &chain, None, &Cell::new(0))
    }

    fn parse_in(
        file: &str,
        text: &str,
        chain: &[PathBuf],
        parent: Option<(Option<&str>, bool)>,
        loaded: &Cell<usize>,
    ) -> Result<Self, AgentError> {
        let parsed: AgentFile = toml::from_str(text).map_err(|error| AgentError::File {
            file: file.to_owned(),
            message: error.to_string().trim_end().to_owned(),
        })?;
        let invalid = |field: &str, message: String| AgentError::Invalid {
            file: file.to_owned(),
            field: field.to_owned(),
            message,
        };
        if parsed.max_steps == 0 {
            return Err(invalid("max-steps", "must be at least 1".into()));
        }
        if let Some(temperature) = parsed.temperature
            && !(0.0..=2.0).contains(&temperature)
        {
            return Err(invalid(
                "temperature",
                format!("{temperature} is outside 0 to 2"),
            ));
        }
        if parsed.max_tokens == Some(0) {
            return Err(invalid("max-tokens", "must be at least 1".into()));
        }
        let tools = tool_set(&parsed.tools)
            .map_err(|(pattern, reason)| invalid("tools", format!("{pattern:?}: {reason}")))?;
        let permissions = parsed.permissions.build().map_err(|(field, error)| {
            invalid(&format!("permissions.{field}"), error.to_string())
        })?;
        let mut state = BTreeMap::new();
        for (key, table) in parsed.state {
            let declared = StateKey::new(table.schema)
                .map_err(|message| invalid(&format!("state.{key}.schema"), message))?
                .in_scope(table.scope)
                .merged_by(table.merge);
            state.insert(key, declared);
        }
        let mut mcp = BTreeMap::new();
        for (name, table) in parsed.mcp {
            if let Some(problem) = mcp_name_problem(&name) {
                return Err(invalid(&format!("mcp.{name}"), problem.into()));
            }
            let declared = table
                .build()
                .map_err(|message| invalid(&format!("mcp.{name}"), message))?;
            mcp.insert(name, declared);
        }
        // A sub-agent file's own sub-agents work in the workspace of the
        // agent at the top, as it does.
        let (sandbox, trusted) = parent.unwrap_or((parsed.sandbox.as_deref(), parsed.trusted));
        let model_settings = ModelSettings {
            base_url: parsed.base_url,
            temperature: parsed.temperature,
            max_tokens: parsed.max_tokens,
            images: parsed.images,
        };
        let agents = decl::sub_agents(
            &Including {
                file,
                sandbox,
                trusted,
                settings: &model_settings,
                chain,
                loaded,
            },
            parsed.agents,
        )?;
        Ok(Self {
            name: parsed.name,
            instructions: parsed.instructions,
            model: parsed.model,
            model_settings,
            max_steps: parsed.max_steps,
            permissions,
            state,
            sandbox: parsed.sandbox,
            trusted: parsed.trusted,
            skills: parsed.skills,
            mcp,
            hooks: parsed.hooks,
            agents,
            delegation: parsed.delegation,
            tools,
            tool_patterns: parsed.tools,
            outer_tools: Vec::new(),
            delegated: false,
            adopted: BTreeMap::new(),
            adopted_from: BTreeMap::new(),
        })
    }

    /// The agent's `tools` patterns that match none of `offered`, as written.
    pub fn unmatched_tools<'a>(&self, offered: impl IntoIterator<Item = &'a str>) -> Vec<&str> {
        let mut matched = vec![false; self.tool_patterns.len()];
        for name in offered {
            for index in self.tools.matches(name) {
                matched[index] = true;
            }
        }
        self.tool_patterns
            .iter()
            .zip(matched)
            .filter(|(_, matched)| !matched)
            .map(|(pattern, _)| pattern.as_str())
            .collect()
    }

    /// Whether the agent may use the tool `name` at all: its own list
    /// allows it, and so does the list of every agent delegating to it.
    pub fn uses_tool(&self, name: &str) -> bool {
        self.tools.is_match(name) && self.outer_tools.iter().all(|outer| outer.is_match(name))
    }

    /// Keep the tools matching `patterns` too, beside the agent's own list.
    pub(crate) fn narrow_tools(&mut self, patterns: &[String]) -> Result<(), (String, String)> {
        self.outer_tools.push(Arc::new(tool_set(patterns)?));
        Ok(())
    }

    /// This agent as `parent` delegates to it: it may use only the tools
    /// both may, each call is judged by both policies and the stricter
    /// verdict stands, and the tighter delegation bounds hold.
    pub fn within(&self, parent: &AgentDef) -> AgentDef {
        let mut narrowed = self.clone();
        narrowed.outer_tools.push(Arc::new(parent.tools.clone()));
        narrowed
            .outer_tools
            .extend(parent.outer_tools.iter().cloned());
        narrowed.permissions = self.permissions.within(&parent.permissions);
        narrowed.delegation = self.delegation.within(parent.delegation);
        // The bundles that run for the parent run for the child too, and
        // their keys keep their declarations there.
        for (key, owner) in &parent.adopted_from {
            if let (Some(declared), None) = (parent.key(key), self.key(key)) {
                narrowed.adopted_from.insert(key.clone(), owner.clone());
                narrowed.adopted.insert(key.clone(), declared.clone());
                if !narrowed.state.is_empty() {
                    narrowed.state.insert(key.clone(), declared.clone());
                }
            }
        }
        // The parent's counters count in the child as in the parent,
        // whatever the child declares of them, so a budget cannot be
        // escaped by declaring its key otherwise.
        for key in parent.counters() {
            if let Some(declared) = parent.key(key) {
                if narrowed.state.is_empty() {
                    narrowed.adopted.insert(key.to_owned(), declared.clone());
                } else {
                    narrowed.state.insert(key.to_owned(), declared.clone());
                }
            }
        }
        narrowed.delegated = true;
        narrowed
    }

    /// Whether this is a sub-agent as its parent delegates to it, whose
    /// run writes no thread-scoped state: what a sub-agent changes travels
    /// back with its answer, and the thread's state would not.
    pub fn is_delegated(&self) -> bool {
        self.delegated
    }

    /// The run-scoped keys merged `commutative`, declared by the agent or
    /// adopted from a bundle: counters, such as a budget's, which count
    /// across a tree of runs (a sub-agent's run starts from its parent's
    /// count, and what it adds travels back with its answer).
    pub(crate) fn counters(&self) -> Vec<&str> {
        self.state
            .iter()
            .chain(&self.adopted)
            .filter(|(_, declared)| {
                declared.merge == MergePolicy::Commutative && declared.scope == Scope::Run
            })
            .map(|(key, _)| key.as_str())
            .collect()
    }

    /// The hook bundles the agent and its sub-agents, at any depth, choose
    /// by name, each with the agent choosing it.
    pub fn chosen_hooks(&self) -> Vec<(&str, &str)> {
        let mut chosen: Vec<(&str, &str)> = self
            .hooks
            .iter()
            .flatten()
            .map(|hook| (self.name.as_str(), hook.as_str()))
            .collect();
        for sub in self.agents.values() {
            chosen.extend(sub.agent.chosen_hooks());
        }
        chosen
    }

    /// The tools the agent's sub-agents are to the model: `agent.NAME` each.
    pub fn sub_agent_tools(&self) -> impl Iterator<Item = String> + '_ {
        self.agents
            .keys()
            .map(|name| format!("{}{name}", crate::delegation::spec::PREFIX))
    }

    /// Declare state key `key`, optionally with a schema.
    pub fn with_state(self, key: &str, schema: Option<Value>) -> Result<Self, String> {
        Ok(self.with_state_key(key, StateKey::new(schema)?))
    }

    /// Declare state key `key` as `declared`.
    pub fn with_state_key(mut self, key: &str, declared: StateKey) -> Self {
        self.state.insert(key.to_owned(), declared);
        self
    }

    /// The scope of `key`: as declared, and run scope for undeclared keys.
    pub fn scope_of(&self, key: &str) -> Scope {
        self.key(key).map_or(Scope::Run, |declared| declared.scope)
    }

    /// The merge policy of `key`: as declared, and exclusive for undeclared keys.
    pub fn merge_of(&self, key: &str) -> MergePolicy {
        self.key(key)
            .map_or(MergePolicy::Exclusive, |declared| declared.merge)
    }

    /// Whether any key the agent declares or adopted lives on its thread.
    pub(crate) fn keeps_thread_state(&self) -> bool {
        self.state
            .values()
            .chain(self.adopted.values())
            .any(|declared| declared.scope == Scope::Thread)
    }

    /// The declaration of `key`: the agent's, or one it adopted.
    pub fn key(&self, key: &str) -> Option<&StateKey> {
        self.state.get(key).or_else(|| self.adopted.get(key))
    }

    /// Adopt bundle `owner`'s declaration of `key`, a key it writes. A key
    /// the agent (or an earlier bundle) declares keeps that schema and must
    /// agree in scope and merge policy; an agent that declares other keys
    /// declares this one too; an agent whose state is open keeps it open,
    /// the key's scope, merge policy and schema holding.
    pub fn adopt_state_key(
        &mut self,
        owner: &str,
        key: &str,
        declared: StateKey,
    ) -> Result<(), Box<StateDisagreement>> {
        if let Some(mine) = self.key(key) {
            let differs = |field, agent: String, bundle: String| {
                Box::new(StateDisagreement {
                    key: key.to_owned(),
                    owner: owner.to_owned(),
                    first: self.adopted_from.get(key).cloned(),
                    field,
                    agent,
                    bundle,
                })
            };
            if mine.scope != declared.scope {
                return Err(differs(
                    "scope",
                    mine.scope.to_string(),
                    declared.scope.to_string(),
                ));
            }
            if mine.merge != declared.merge {
                return Err(differs(
                    "merge",
                    mine.merge.to_string(),
                    declared.merge.to_string(),
                ));
            }
            return Ok(());
        }
        self.adopted_from.insert(key.to_owned(), owner.to_owned());
        if self.state.is_empty() {
            self.adopted.insert(key.to_owned(), declared);
        } else {
            self.state.insert(key.to_owned(), declared);
        }
        Ok(())
    }

    /// Whether writes to `key` are allowed: every key when none is declared.
    pub fn declares(&self, key: &str) -> bool {
        self.state.is_empty() || self.state.contains_key(key)
    }

    /// The tool patterns as written.
    pub fn tool_patterns(&self) -> &[String] {
        &self.tool_patterns
    }
}

fn tool_set(patterns: &[String]) -> Result<GlobSet, (String, String)> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|error| (pattern.clone(), error.to_string()))?;
        builder.add(glob);
    }
    builder
        .build()
        .map_err(|error| (patterns.join(", "), error.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Verdict;

    fn counter() -> StateKey {
        StateKey::new(Some(serde_json::json!({"type": "integer"})))
            .unwrap()
            .merged_by(MergePolicy::Commutative)
    }

    #[test]
    fn tools_patterns_that_match_nothing_offered_are_named() {
        let agent = AgentDef::parse(
            "a.toml",
            "name = \"a\"\ntools = [\"files.*\", \"jq.query\", \"fils.*\"]\n",
        )
        .unwrap();
        assert_eq!(
            agent.unmatched_tools(["files.read", "jq.query"]),
            ["fils.*"]
        );
        assert_eq!(agent.unmatched_tools([]).len(), 3);
    }

    #[test]
    fn mcp_servers_are_read_as_remote_or_local_and_anything_else_is_named() {
        let agent = AgentDef::parse(
            "a.toml",
            "name = \"a\"\n[mcp.docs]\nurl = \"https://d.test/mcp\"\n[mcp.git]\ncommand = [\"uvx\", \"mcp-server-git\"]\n",
        )
        .unwrap();
        assert_eq!(
            agent.mcp["docs"],
            McpServerDecl::Remote {
                url: "https://d.test/mcp".into()
            }
        );
        assert_eq!(
            agent.mcp["git"],
            McpServerDecl::Local {
                command: vec!["uvx".into(), "mcp-server-git".into()]
            }
        );
        for (table, says) in [
            ("[mcp.docs]\n", "field `mcp.docs`: write `url"),
            (
                "[mcp.docs]\nurl = \"https://d.test\"\ncommand = [\"x\"]\n",
                "not both",
            ),
            ("[mcp.docs]\ncommand = []\n", "names a program"),
            (
                "[mcp.Docs]\nurl = \"https://d.test\"\n",
                "field `mcp.Docs`: a server's name",
            ),
            (
                "[mcp.docs]\nurl = \"https://d.test\"\nenv = {}\n",
                "unknown field `env`",
            ),
        ] {
            let error = AgentDef::parse("a.toml", &format!("name = \"a\"\n{table}"))
                .unwrap_err()
                .to_string();
            assert!(error.contains(says), "{table}: {error}");
        }
    }

    #[test]
    fn a_bundles_key_is_adopted_by_open_and_closed_agents_alike() {
        let mut open = AgentDef::parse("a.toml", "name = \"a\"").unwrap();
        open.adopt_state_key("budget", "budget.calls", counter())
            .unwrap();
        assert_eq!(open.merge_of("budget.calls"), MergePolicy::Commutative);
        assert!(open.declares("anything"), "open state stays open");
        assert!(
            open.key("budget.calls")
                .unwrap()
                .check(&serde_json::json!("x"))
                .is_err()
        );

        let mut closed =
            AgentDef::parse("a.toml", "name = \"a\"\n[state.notes]\nscope = \"thread\"").unwrap();
        closed
            .adopt_state_key("budget", "budget.calls", counter())
            .unwrap();
        assert!(closed.declares("budget.calls") && !closed.declares("other"));
        assert_eq!(closed.merge_of("budget.calls"), MergePolicy::Commutative);
    }

    #[test]
    fn an_agent_disagreeing_with_a_bundle_on_a_key_is_told_what_differs() {
        let mut agent = AgentDef::parse(
            "a.toml",
            "name = \"a\"\n[state.\"budget.calls\"]\nmerge = \"exclusive\"",
        )
        .unwrap();
        let disagreement = agent
            .adopt_state_key("budget", "budget.calls", counter())
            .unwrap_err();
        assert_eq!(disagreement.field, "merge");
        assert_eq!(
            disagreement.to_string(),
            "state key `budget.calls`: the agent declares merge = \"exclusive\", and bundle `budget`, which writes it, declares merge = \"commutative\""
        );
        let mut agreeing = AgentDef::parse(
            "a.toml",
            "name = \"a\"\n[state.\"budget.calls\"]\nmerge = \"commutative\"\nschema = { type = \"integer\", maximum = 5 }",
        )
        .unwrap();
        agreeing
            .adopt_state_key("budget", "budget.calls", counter())
            .unwrap();
        assert!(
            agreeing
                .key("budget.calls")
                .unwrap()
                .check(&serde_json::json!(9))
                .is_err(),
            "the agent's own schema holds"
        );

        for state in ["", "\n[state.notes]"] {
            let mut agent = AgentDef::parse("a.toml", &format!("name = \"a\"{state}")).unwrap();
            agent
                .adopt_state_key("budget", "budget.calls", counter())
                .unwrap();
            let second = agent
                .adopt_state_key("rogue", "budget.calls", StateKey::new(None).unwrap())
                .unwrap_err();
            assert_eq!(second.first.as_deref(), Some("budget"), "{state}");
            assert!(
                second
                    .to_string()
                    .starts_with("state key `budget.calls`: bundle `budget` declares merge"),
                "{second}"
            );
            assert_eq!(agent.merge_of("budget.calls"), MergePolicy::Commutative);
        }
    }

    #[test]
    fn an_agent_file_sets_tools_steps_and_permissions() {
        let agent = AgentDef::parse(
            "agent.toml",
            "name = \"a\"\ntools = [\"files.*\"]\nmax-steps = 3\n[permissions]\ndefault = \"deny\"\nallow = [\"files.read\"]\n",
        )
        .unwrap();
        assert!(agent.uses_tool("files.read"));
        assert!(!agent.uses_tool("notes.add"));
        assert_eq!(agent.max_steps, 3);
        let args = serde_json::json!({});
        assert_eq!(
            agent
                .permissions
                .decide("files.read", crate::tool::ToolAnnotations::default(), &args)
                .verdict,
            Verdict::Allow
        );
        assert_eq!(
            agent
                .permissions
                .decide("files.list", crate::tool::ToolAnnotations::default(), &args)
                .verdict,
            Verdict::Deny
        );
    }

    #[test]
    fn model_settings_come_from_the_agent_file() {
        let agent = AgentDef::parse(
            "agent.toml",
            "name = \"a\"\nmodel = \"openai:gpt\"\ntemperature = 0.2\nmax-tokens = 512\nbase-url = \"http://localhost:11434/v1\"\nimages = false\n",
        )
        .unwrap();
        assert_eq!(
            agent.model_settings,
            ModelSettings {
                base_url: Some("http://localhost:11434/v1".into()),
                temperature: Some(0.2),
                max_tokens: Some(512),
                images: Some(false),
            }
        );
    }

    #[test]
    fn defaults_ask_before_every_call() {
        let agent = AgentDef::parse("agent.toml", "name = \"a\"").unwrap();
        assert!(agent.uses_tool("anything"));
        let args = serde_json::json!({});
        assert_eq!(
            agent
                .permissions
                .decide("anything", crate::tool::ToolAnnotations::default(), &args)
                .verdict,
            Verdict::Ask
        );
    }

    #[test]
    fn errors_name_the_file_and_field() {
        for (text, needle) in [
            ("name = \"a\"\nmax-steps = 0", "`max-steps`"),
            (
                "name = \"a\"\n[permissions]\nallow = [\"Bad(\"]",
                "`permissions.allow[0]`",
            ),
            ("name = \"a\"\nsteps = 3", "steps"),
            (
                "name = \"a\"\n[state.k]\nschema = { type = 3 }",
                "`state.k.schema`",
            ),
            ("name = \"a\"\ntemperature = 3.5", "`temperature`"),
            ("name = \"a\"\nmax-tokens = 0", "`max-tokens`"),
        ] {
            let error = AgentDef::parse("agent.toml", text).unwrap_err().to_string();
            assert!(
                error.starts_with("agent.toml") && error.contains(needle),
                "{error}"
            );
        }
    }
}
