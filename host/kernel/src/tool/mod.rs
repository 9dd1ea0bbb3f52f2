//! Tools as the kernel sees them: their specs, their outputs, the closed set of
//! ways a call can fail, and the [`ToolSet`] port that tool hosts implement.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) mod annotations;
pub(crate) mod error;

pub use annotations::{Reach, ToolAnnotations};
pub use error::{ToolError, ToolErrorKind};

use crate::ask::Asker;
use crate::cancel::Cancellation;
use crate::content::ContentBlock;
use crate::event::Event;
use crate::file_rules::FileRules;
use crate::files::FileWrites;
use crate::skills::{ActiveSkills, SkillActivation};
use crate::state::{StateReader, StateStore, StateWrite};

/// What a tool tells the model and the host about itself. The schemas are
/// shared, so that the listing each step and request takes stays cheap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ToolSpec {
    /// Unique name across all loaded tools.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Arc<Value>,
    /// JSON Schema of the output, when promised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<Value>>,
    /// Effect hints.
    pub annotations: ToolAnnotations,
}

/// A successful tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The value the model observes.
    pub content: Value,
    /// Content blocks for clients that show them, beside the value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<ContentBlock>,
}

impl ToolOutput {
    /// An output of `content` alone.
    pub fn new(content: Value) -> Self {
        Self {
            content,
            blocks: Vec::new(),
        }
    }
}

/// What a call produced, and everything it changed: the state writes and
/// file changes it staged, the skills it activated and the audit events it
/// caused. Every effect of a call travels back here, and the caller decides
/// when, and whether, it is committed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallOutcome {
    /// The output, or why there is none.
    pub result: Result<ToolOutput, ToolError>,
    /// Writes staged by the call; empty unless `result` is `Ok`.
    pub writes: Vec<StateWrite>,
    /// File changes staged by the call; empty unless `result` is `Ok`.
    pub files: FileWrites,
    /// Skills the call activated: only the built-in `skill` tool activates
    /// any; empty unless `result` is `Ok`.
    pub skills: Vec<SkillActivation>,
    /// What the call said and what was refused or stopped, in order; kept
    /// whether or not the call succeeded.
    pub events: Vec<Event>,
}

impl ToolCallOutcome {
    /// A call that returned `content` and changed nothing.
    pub fn output(content: Value) -> Self {
        Self {
            result: Ok(ToolOutput::new(content)),
            writes: Vec::new(),
            files: FileWrites::new(),
            skills: Vec::new(),
            events: Vec::new(),
        }
    }

    /// A call that failed with `error`.
    pub fn error(error: ToolError) -> Self {
        Self {
            result: Err(error),
            writes: Vec::new(),
            files: FileWrites::new(),
            skills: Vec::new(),
            events: Vec::new(),
        }
    }

    /// This outcome with the state `writes` staged.
    pub fn with_writes(mut self, writes: Vec<StateWrite>) -> Self {
        self.writes = writes;
        self
    }

    /// This outcome with the skills `activated`.
    pub fn with_skills(mut self, activated: Vec<SkillActivation>) -> Self {
        self.skills = activated;
        self
    }

    /// This outcome with the audit `events` caused.
    pub fn with_events(mut self, events: Vec<Event>) -> Self {
        self.events = events;
        self
    }
}

/// The future a [`ToolSet`] call returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolCallOutcome> + Send + 'a>>;

/// What a tool call runs with besides its arguments.
#[derive(Clone)]
pub struct CallContext {
    /// Committed state as the call reads it.
    pub state: Arc<dyn StateReader>,
    /// The gate the call's own tool calls pass, inside a run. Outside a run
    /// (a single call from the command line or an embedder) there is no
    /// agent to judge them, and the tool set makes them directly.
    pub nested: Option<Arc<dyn NestedCalls>>,
    /// How many tool calls enclose this one.
    pub depth: u32,
    /// The file changes the calls enclosing this one have staged so far,
    /// which it sees over the committed files; empty for a call the loop or
    /// an operator makes.
    pub files: Arc<FileWrites>,
    /// The skills active in the run as the call's step began; none outside
    /// a run.
    pub skills: Arc<ActiveSkills>,
    /// Set when whoever asked for the call cancels it.
    pub cancel: Cancellation,
    /// Whom the call's questions reach; `None` when nobody can be asked.
    pub asker: Option<Arc<dyn Asker>>,
    /// File rules the call obeys beside the run's own, which the host
    /// enforces wherever the call reaches files: a sub-agent's, with those
    /// of every agent above it; `None` when the run's own are all.
    pub rules: Option<Arc<FileRules>>,
}

impl CallContext {
    /// A call made outside any run, reading `state`.
    pub fn outside_run(state: Arc<dyn StateReader>) -> Self {
        Self {
            state,
            nested: None,
            depth: 0,
            files: Arc::default(),
            skills: ActiveSkills::none(),
            cancel: Cancellation::default(),
            asker: None,
            rules: None,
        }
    }
}

/// The port through which a tool calls a tool inside a run. The loop gives
/// each call its own handle; a call through it is judged like a model's call
/// (the agent's tool list, its policy, the before-tool-call hooks, the
/// budget), passes the after-tool-call hooks, and is recorded as a child of
/// the calling call. Its state writes come back in the outcome and join the
/// caller's.
pub trait NestedCalls: Send + Sync {
    /// Call `name` with `args` on behalf of the call this handle belongs to,
    /// reading `state` and seeing `files`, the caller's staged file changes,
    /// over the committed files.
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        state: Arc<dyn StateReader>,
        files: Arc<FileWrites>,
    ) -> ToolFuture<'a>;
}

/// The port through which the kernel lists and calls tools.
pub trait ToolSet: Send + Sync {
    /// Every tool this set provides, in a stable order.
    fn specs(&self) -> Vec<ToolSpec>;

    /// The spec of the tool `name`, when this set provides it: the one
    /// [`ToolSet::specs`] lists under that name.
    fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.specs().into_iter().find(|spec| spec.name == name)
    }

    /// Call the tool `name` with `args` in `context`. Every failure is a
    /// [`ToolError`]; a tool set never panics on a tool's behalf and never
    /// commits state itself.
    fn call<'a>(&'a self, name: &'a str, args: Value, context: CallContext) -> ToolFuture<'a>;

    /// How far a call of `name` can act. A set that cannot tell answers
    /// [`Reach::Beyond`], as does a name it does not provide.
    fn reach(&self, name: &str) -> Reach {
        let _ = name;
        Reach::Beyond
    }
}

/// Call `name` outside any run and commit its writes to `store` if it succeeds:
/// the path for single tool calls, such as `cordon tool call`.
pub async fn call_committed(
    tools: &dyn ToolSet,
    store: Arc<dyn StateStore>,
    name: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    let outcome = tools
        .call(name, args, CallContext::outside_run(store.clone()))
        .await;
    let output = outcome.result?;
    store.apply(&outcome.writes).map_err(|error| {
        ToolError::new(
            ToolErrorKind::Failed,
            format!("state commit failed: {error}"),
        )
    })?;
    Ok(output)
}

/// Several tool sets offered as one, such as the loaded plugins and the
/// built-in workspace tools. The first set that provides a name serves it;
/// [`ToolSets::new`] reports names provided twice.
pub struct ToolSets {
    sets: Vec<Arc<dyn ToolSet>>,
    specs: Vec<ToolSpec>,
    owners: std::collections::BTreeMap<String, usize>,
}

impl ToolSets {
    /// `sets` as one, or the names more than one of them provides.
    pub fn new(sets: Vec<Arc<dyn ToolSet>>) -> Result<Self, Vec<String>> {
        let mut specs = Vec::new();
        let mut owners = std::collections::BTreeMap::new();
        let mut twice = Vec::new();
        for (index, set) in sets.iter().enumerate() {
            for spec in set.specs() {
                if owners.insert(spec.name.clone(), index).is_some() {
                    twice.push(spec.name);
                } else {
                    specs.push(spec);
                }
            }
        }
        if !twice.is_empty() {
            return Err(twice);
        }
        Ok(Self {
            sets,
            specs,
            owners,
        })
    }
}

impl ToolSet for ToolSets {
    fn specs(&self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.owners
            .get(name)
            .and_then(|&index| self.sets[index].spec(name))
    }

    fn call<'a>(&'a self, name: &'a str, args: Value, context: CallContext) -> ToolFuture<'a> {
        match self.owners.get(name) {
            Some(&index) => self.sets[index].call(name, args, context),
            None => Box::pin(async move {
                ToolCallOutcome::error(ToolError::new(
                    ToolErrorKind::NotFound,
                    unknown_tool(name, self.owners.keys().map(String::as_str)),
                ))
            }),
        }
    }

    fn reach(&self, name: &str) -> Reach {
        self.owners
            .get(name)
            .map_or(Reach::Beyond, |&index| self.sets[index].reach(name))
    }
}

/// Of `names`, the one nearest to `name` by edit distance, when it is near
/// enough to be what was meant: at most half its length away.
pub fn nearest_name<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .map(|candidate| (strsim::levenshtein(candidate, name), candidate))
        .filter(|(distance, candidate)| *distance <= candidate.len().max(name.len()) / 2)
        .min()
        .map(|(_, candidate)| candidate)
}

/// Why a call of `name` found no tool among `names`, with the nearest name
/// when one is near.
pub fn unknown_tool<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    match nearest_name(name, names) {
        Some(nearest) => format!("no tool named `{name}`; the nearest is `{nearest}`"),
        None => format!("no tool named `{name}`"),
    }
}

/// Why `args` break the schema `validator` checks, each problem with where it
/// is; `None` when they fit.
pub fn schema_problems(validator: &jsonschema::Validator, args: &Value) -> Option<String> {
    // Judged without collecting first: valid arguments are the usual case.
    if validator.is_valid(args) {
        return None;
    }
    let problems: Vec<String> = validator
        .iter_errors(args)
        .map(|error| {
            let at = error.instance_path().to_string();
            if at.is_empty() {
                error.to_string()
            } else {
                format!("at {at}: {error}")
            }
        })
        .collect();
    (!problems.is_empty()).then(|| problems.join("; "))
}
