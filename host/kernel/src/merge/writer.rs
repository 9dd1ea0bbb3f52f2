//! Who staged a batch of writes: the name every conflict and refusal gives.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::hooks::phase::HookPhase;

/// Who staged a batch of writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "writer", rename_all = "kebab-case")]
pub enum Writer {
    /// A tool call.
    Tool {
        /// The call.
        call_id: String,
        /// The tool it called.
        tool: String,
    },
    /// A hook, for the call it judged or filtered when there is one.
    Hook {
        /// The hook's bundle.
        bundle: String,
        /// The phase it ran in.
        phase: HookPhase,
        /// The call it judged or filtered, if any.
        call_id: Option<String>,
    },
}

impl fmt::Display for Writer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tool { call_id, tool } => write!(f, "call {call_id} ({tool})"),
            Self::Hook {
                bundle,
                phase,
                call_id: Some(call_id),
            } => write!(f, "hook {bundle} ({phase} of call {call_id})"),
            Self::Hook {
                bundle,
                phase,
                call_id: None,
            } => write!(f, "hook {bundle} ({phase})"),
        }
    }
}
