//! What a run reports while it happens: progress for observers, and the
//! collector that gathers a step's audit events so they commit with it.

use std::sync::{Arc, Mutex};

use crate::commit::Disposition;
use crate::event::{Event, EventSink};
use crate::message::{CallResult, ToolCall};
use crate::policy::Decision;

/// Progress of a run, reported as it happens; the committed facts are the record.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Model text as it streams.
    Text(String),
    /// The model's response broke off and is being requested again: the text
    /// streamed since the step began does not count.
    Restarted,
    /// A call the model requested, with the gate's verdict.
    ToolCall { call: ToolCall, decision: Decision },
    /// What a call produced.
    ToolResult { call_id: String, result: CallResult },
    /// A step is durable.
    Committed { seq: u64, disposition: Disposition },
}

/// Receives progress as it happens.
pub trait Observer: Send + Sync {
    /// Report one piece of progress. Must not block for long.
    fn observe(&self, progress: Progress);
}

/// An [`Observer`] that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct Unobserved;

impl Observer for Unobserved {
    fn observe(&self, _progress: Progress) {}
}

/// Collects the audit events of the current step, so they commit with it, and
/// passes each on to another sink as it happens. Give it to the tool set as its
/// event sink and to the runtime.
pub struct StepEvents {
    pending: Mutex<Vec<Event>>,
    forward: Arc<dyn EventSink>,
}

impl StepEvents {
    /// A collector forwarding to `forward`.
    pub fn new(forward: Arc<dyn EventSink>) -> Self {
        Self {
            pending: Mutex::new(Vec::new()),
            forward,
        }
    }

    pub(crate) fn drain(&self) -> Vec<Event> {
        std::mem::take(
            &mut self
                .pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl EventSink for StepEvents {
    fn emit(&self, event: Event) {
        self.forward.emit(event.clone());
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(event);
    }
}
