//! The points of the loop at which hooks run.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A point of the loop at which hooks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookPhase {
    /// Before every model request.
    BeforeInference,
    /// Before every tool call the policy does not deny.
    BeforeToolCall,
    /// After every tool call that ran.
    AfterToolCall,
    /// At the end of every step that ran tools or answered.
    StepEnd,
}

impl HookPhase {
    /// Every phase, in loop order.
    pub const ALL: [Self; 4] = [
        Self::BeforeInference,
        Self::BeforeToolCall,
        Self::AfterToolCall,
        Self::StepEnd,
    ];

    /// The phase's name in manifests and the WIT contract.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BeforeInference => "before-inference",
            Self::BeforeToolCall => "before-tool-call",
            Self::AfterToolCall => "after-tool-call",
            Self::StepEnd => "step-end",
        }
    }

    /// The phase named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|phase| phase.as_str() == name)
    }
}

impl fmt::Display for HookPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
