//! Events: what components said and what the host refused, attributed to the
//! bundle responsible. The [`EventSink`] port receives them; [`EventLog`] keeps them
//! in memory for callers that want to inspect a call's trail.

use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hooks::HookPhase;
use crate::tool::ToolError;

/// Severity of a component's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
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
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::StateRead => "state-read",
            Self::StateWrite => "state-write",
            Self::ToolCall => "tool-call",
            Self::Network => "network",
            Self::Filesystem => "filesystem",
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
    Memory,
    Fuel,
    Timeout,
    Output,
    Log,
    CallDepth,
    /// Bytes or paths a call, a step or a run stages in a workspace.
    Staging,
    /// Slots of the instance pool, when none freed in time.
    Instances,
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
        })
    }
}

/// One entry of the trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// A component's message, from the log interface or its stdout/stderr.
    Log {
        bundle: String,
        level: LogLevel,
        message: String,
    },
    /// A component's progress report.
    Progress {
        bundle: String,
        done: u64,
        total: Option<u64>,
        message: String,
    },
    /// The host refused a capability request.
    Denied(Denial),
    /// A call hit a resource limit and was stopped.
    LimitExceeded {
        bundle: String,
        tool: String,
        limit: LimitKind,
        detail: String,
    },
    /// A hook trapped, timed out, hit a limit, answered something malformed or
    /// staged writes that were refused; the loop failed closed.
    HookFailed {
        bundle: String,
        phase: HookPhase,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        error: ToolError,
    },
    /// A before-tool-call hook replaced a call's arguments.
    ArgumentsRewritten {
        bundle: String,
        call_id: String,
        /// The arguments before the rewrite.
        original: Value,
    },
    /// An after-tool-call hook replaced what the model observes of a call.
    ObservationReplaced { bundle: String, call_id: String },
    /// A before-inference hook added text to a model request's instructions.
    ContextAdded { bundle: String, bytes: usize },
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
