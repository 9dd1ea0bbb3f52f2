//! Events: what components said and what the host refused, attributed to the
//! bundle responsible. The [`EventSink`] port receives them; [`EventLog`] keeps them
//! in memory for callers that want to inspect a call's trail.

use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hooks::phase::HookPhase;
use crate::tool::error::ToolError;

/// Severity of a component's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogLevel {
    /// Fine-grained detail of what the component does.
    Trace,
    /// Detail useful when debugging the component.
    Debug,
    /// Ordinary information.
    Info,
    /// Something unexpected that the component carried on past.
    Warn,
    /// A failure.
    Error,
}

/// The kind of capability a denial concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Capability {
    /// Reading a state key.
    StateRead,
    /// Writing a state key.
    StateWrite,
    /// Calling another tool.
    ToolCall,
    /// Opening a network connection or resolving a name.
    Network,
    /// Opening a file or directory.
    Filesystem,
    /// Asking the person a call runs for a question.
    Elicit,
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::StateRead => "state-read",
            Self::StateWrite => "state-write",
            Self::ToolCall => "tool-call",
            Self::Network => "network",
            Self::Filesystem => "filesystem",
            Self::Elicit => "elicit",
        })
    }
}

/// A refused capability request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    /// The bundle that asked.
    pub bundle: String,
    /// What it asked for.
    pub capability: Capability,
    /// The key, tool, address or path it asked about.
    pub target: String,
    /// Why it was refused.
    pub reason: String,
}

/// A resource limit a call ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitKind {
    /// The bundle's linear memory limit.
    Memory,
    /// The bundle's fuel, the budget of instructions a call may execute.
    Fuel,
    /// The bundle's time limit for one call.
    Timeout,
    /// The size of a value a component returns, such as a tool's result.
    Output,
    /// Bytes a component logs or prints to stdout and stderr.
    Log,
    /// How deeply tool calls may nest inside each other.
    CallDepth,
    /// Bytes or paths a call, a step or a run stages in a workspace.
    Staging,
    /// Slots of the instance pool, when none freed in time.
    Instances,
    /// A call's network use: requests, body sizes, connection and response times.
    Network,
    /// A sandboxed shell's own limits: how many commands one line runs and
    /// how deeply its functions, subshells and scripts nest.
    Shell,
    /// How far a tree of sub-agents' runs may grow: how deep, how many at
    /// once in a step, how many in all (`[delegation]`).
    Delegation,
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Memory => "memory",
            Self::Fuel => "fuel",
            Self::Timeout => "timeout",
            Self::Output => "output",
            Self::Log => "log",
            Self::CallDepth => "call-depth",
            Self::Staging => "staging",
            Self::Instances => "instances",
            Self::Network => "network",
            Self::Shell => "shell",
            Self::Delegation => "delegation",
        })
    }
}

/// One entry of the trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// A component's message, from the log interface or its stdout/stderr.
    Log {
        /// The bundle that logged it.
        bundle: String,
        /// Its severity.
        level: LogLevel,
        /// The message.
        message: String,
    },
    /// A component's progress report.
    Progress {
        /// The bundle that reported it.
        bundle: String,
        /// Units of work done so far.
        done: u64,
        /// Units of work in all, when known.
        total: Option<u64>,
        /// What the component is doing.
        message: String,
    },
    /// The host refused a capability request.
    Denied(Denial),
    /// A call hit a resource limit and was stopped.
    LimitExceeded {
        /// The bundle whose call was stopped.
        bundle: String,
        /// What ran into the limit: a tool, a hook phase or a backend operation.
        tool: String,
        /// Which limit.
        limit: LimitKind,
        /// What was exceeded, such as `fuel limit of 1000 exhausted`.
        detail: String,
    },
    /// A hook trapped, timed out, hit a limit, answered something malformed or
    /// staged writes that were refused; the loop failed closed.
    HookFailed {
        /// The hook's bundle.
        bundle: String,
        /// The phase it ran in.
        phase: HookPhase,
        /// The tool call it was judging, for the tool-call phases.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// How it failed.
        error: ToolError,
    },
    /// A before-tool-call hook replaced a call's arguments.
    ArgumentsRewritten {
        /// The hook's bundle.
        bundle: String,
        /// The call whose arguments were replaced.
        call_id: String,
        /// The arguments before the rewrite.
        original: Value,
    },
    /// An after-tool-call hook replaced what the model observes of a call.
    ObservationReplaced {
        /// The hook's bundle.
        bundle: String,
        /// The call whose observation was replaced.
        call_id: String,
    },
    /// A before-inference hook added text to a model request's instructions.
    ContextAdded {
        /// The hook's bundle.
        bundle: String,
        /// The length of the added text, in bytes.
        bytes: usize,
    },
    /// An active skill's `allowed-tools` left a call out, so it was denied;
    /// or the call named a tool of a skill that is not active.
    SkillDenied {
        /// The skill.
        skill: String,
        /// The call.
        call_id: String,
        /// The tool it named.
        tool: String,
        /// Why, as the model reads it.
        reason: String,
    },
    /// A resumed run dropped an activation: the skill's SKILL.md changed
    /// since it was activated, or the skill is no longer there.
    SkillDropped {
        /// The skill.
        skill: String,
        /// Why.
        reason: String,
    },
}

impl Event {
    /// The tool call the event is about, for the events a hook or a skill
    /// raises while the loop judges a call or reads its result.
    pub fn call_id(&self) -> Option<&str> {
        match self {
            Self::HookFailed { call_id, .. } => call_id.as_deref(),
            Self::ArgumentsRewritten { call_id, .. }
            | Self::ObservationReplaced { call_id, .. }
            | Self::SkillDenied { call_id, .. } => Some(call_id),
            Self::Log { .. }
            | Self::Progress { .. }
            | Self::Denied(_)
            | Self::LimitExceeded { .. }
            | Self::ContextAdded { .. }
            | Self::SkillDropped { .. } => None,
        }
    }
}

/// Receives events as they happen.
pub trait EventSink: Send + Sync {
    /// Record one event. Must not block for long: it runs on the call path.
    fn emit(&self, event: Event);
}

/// An [`EventSink`] that keeps every event in memory.
#[derive(Debug, Default)]
pub struct EventLog {
    events: Mutex<Vec<Event>>,
}

impl EventLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of every event so far, oldest first.
    pub fn snapshot(&self) -> Vec<Event> {
        self.lock().clone()
    }

    /// Every denial so far, oldest first.
    pub fn denials(&self) -> Vec<Denial> {
        self.lock()
            .iter()
            .filter_map(|event| match event {
                Event::Denied(denial) => Some(denial.clone()),
                _ => None,
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Event>> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl EventSink for EventLog {
    fn emit(&self, event: Event) {
        self.lock().push(event);
    }
}
