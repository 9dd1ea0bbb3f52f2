//! What a sub-agent's run shows while it happens: its calls and their
//! results, through its parent's observer, each named by its path from the
//! parent (`call-2-1/call-1-1`), the name its approval would take. Its text
//! and its commits are its own run's and are not shown as its parent's.

use std::sync::Arc;

use crate::progress::{Observer, Progress};

/// A parent's observer, seen from the sub-agent the call `prefix` names.
pub(crate) struct Shown {
    parent: Arc<dyn Observer>,
    /// The delegating call's id and `/`.
    prefix: String,
}

impl Shown {
    /// `parent`'s observer for the sub-agent of call `call_id`.
    pub(crate) fn new(parent: Arc<dyn Observer>, call_id: &str) -> Self {
        Self {
            parent,
            prefix: format!("{call_id}/"),
        }
    }
}

impl Observer for Shown {
    fn observe(&self, progress: Progress) {
        match progress {
            Progress::ToolCall { mut call, decision } => {
                call.id.insert_str(0, &self.prefix);
                self.parent.observe(Progress::ToolCall { call, decision });
            }
            Progress::ToolResult { call_id, result } => {
                self.parent.observe(Progress::ToolResult {
                    call_id: format!("{}{call_id}", self.prefix),
                    result,
                });
            }
            Progress::Text(_)
            | Progress::Restarted
            | Progress::Retrying(_)
            | Progress::Committed { .. } => {}
        }
    }
}
