//! What a run reports while it happens: progress for observers, and the
//! collector that gathers a step's audit events, from the kernel and from
//! every outcome, so they commit with it.

use std::sync::{Arc, Mutex};

use crate::commit::Disposition;
use crate::event::{Event, EventSink};
use crate::message::{CallResult, ToolCall};
use crate::model::Retry;
use crate::policy::Decision;

/// Progress of a run, reported as it happens; the committed facts are the record.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Model text as it streams.
    Text(String),
    /// The model's response broke off and is being requested again: the text
    /// streamed since the step began does not count.
    Restarted,
    /// The model request failed and is tried again after a wait.
    Retrying(Retry),
    /// A call the model requested, with the gate's verdict.
    ToolCall {
        /// The call.
        call: ToolCall,
        /// The gate's verdict on it.
        decision: Decision,
    },
    /// What a call produced.
    ToolResult {
        /// The call.
        call_id: String,
        /// What it produced.
        result: CallResult,
    },
    /// A commit is durable.
    Committed {
        /// The commit's position in the run, from 1.
        seq: u64,
        /// The model step it belongs to (see [`RunRecord::steps`]).
        ///
        /// [`RunRecord::steps`]: crate::RunRecord::steps
        step: u32,
        /// Where the run stands after it.
        disposition: Disposition,
    },
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

/// Where a step's audit trail goes. The kernel's own events (a hook failed,
/// arguments were rewritten) are shown live and kept; the events a call or a
/// hook brought back in its outcome were shown live as they happened, and
/// are kept.
pub(crate) trait Trail: Send + Sync {
    /// Show `event` live and keep it.
    fn emit(&self, event: Event);
    /// Keep `events`, which came back with an outcome.
    fn record(&self, events: Vec<Event>);
}

/// The audit events of the current step, in the order they were admitted,
/// so they commit with it.
pub(crate) struct StepEvents {
    pending: Mutex<Vec<Event>>,
    live: Arc<dyn EventSink>,
}

impl StepEvents {
    /// A collector showing the kernel's own events on `live`.
    pub(crate) fn new(live: Arc<dyn EventSink>) -> Self {
        Self {
            pending: Mutex::new(Vec::new()),
            live,
        }
    }

    /// Where events are shown as they happen.
    pub(crate) fn live(&self) -> &Arc<dyn EventSink> {
        &self.live
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Event>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn drain(&self) -> Vec<Event> {
        std::mem::take(&mut self.lock())
    }
}

impl Trail for StepEvents {
    fn emit(&self, event: Event) {
        crate::spans::audit(&event);
        self.live.emit(event.clone());
        self.lock().push(event);
    }

    fn record(&self, events: Vec<Event>) {
        events.iter().for_each(crate::spans::audit);
        self.lock().extend(events);
    }
}
