//! What a tool declares of its effects, and how far the host knows its calls
//! can act: the two facts permission rules and resuming read.

use serde::{Deserialize, Serialize};

/// Effect hints a tool declares about itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ToolAnnotations {
    /// Changes nothing outside its output.
    pub read_only: bool,
    /// May delete or overwrite something unrecoverable.
    pub destructive: bool,
    /// A repeat with the same arguments has no further effect.
    pub idempotent: bool,
    /// Reaches systems outside the agent's workspace.
    pub open_world: bool,
}

impl ToolAnnotations {
    /// What the host assumes of a tool whose annotations no one vouches for:
    /// it may change and destroy things and reach the outside world, and
    /// running it twice is not known to be harmless. Permission rules and
    /// resuming treat the tools of a bundle the operator does not trust so,
    /// whatever the bundle declares.
    pub const UNTRUSTED: ToolAnnotations = ToolAnnotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    };

    /// Whether running the tool again, after a crash lost whether it ran, is
    /// harmless: it changes nothing, or a repeat changes nothing more.
    pub fn repeatable(self) -> bool {
        self.read_only || self.idempotent
    }
}

/// How far a tool's calls can act, as the host that runs them knows from
/// what it grants them, not from what the tool says of itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Everything a call changes travels back with its outcome (state
    /// writes, staged files, events) and reaches the store only through the
    /// step commit: the host grants it nothing that acts past the step. A call
    /// lost before its step commits has changed nothing, so running it again
    /// is running it for the first time.
    Outcome,
    /// A call may change what the step commit does not hold: host files,
    /// other systems over the network, other tools. What the host cannot
    /// vouch for counts as this.
    Beyond,
}
