//! One call's audit trail. Every refusal, limit hit and log line of a call
//! into a bundle is shown live as it happens and kept with the call; what is
//! kept travels back in the call's outcome, and the step that admits the
//! outcome commits it. No event reaches a commit any other way.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cordon_kernel::{
    Capability, Denial, Event, EventSink, LimitKind, LogLevel, ToolError, ToolErrorKind,
};

/// The trail of one call into one bundle. Cheap to clone: the clones share
/// it, so a check that runs outside the store (a socket address, a thread
/// abandoned at the deadline) adds to the same trail.
#[derive(Clone)]
pub(crate) struct Audit {
    trail: Arc<Trail>,
}

struct Trail {
    /// The bundle called, whom every event names.
    bundle: String,
    /// Where events are shown as they happen.
    live: Arc<dyn EventSink>,
    kept: Mutex<Vec<Event>>,
}

impl Audit {
    /// The trail of a call into `bundle`, shown live on `live`.
    pub(crate) fn new(bundle: impl Into<String>, live: Arc<dyn EventSink>) -> Self {
        Self {
            trail: Arc::new(Trail {
                bundle: bundle.into(),
                live,
                kept: Mutex::new(Vec::new()),
            }),
        }
    }

    fn kept(&self) -> MutexGuard<'_, Vec<Event>> {
        self.trail
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Show `event` live and keep it.
    pub(crate) fn emit(&self, event: Event) {
        self.trail.live.emit(event.clone());
        self.kept().push(event);
    }

    /// Keep `events`, which a nested call brought back and already showed.
    pub(crate) fn keep(&self, events: Vec<Event>) {
        self.kept().extend(events);
    }

    /// Record that `capability` on `target` was refused, and why.
    pub(crate) fn deny(&self, capability: Capability, target: &str, reason: &str) {
        self.emit(Event::Denied(Denial {
            bundle: self.trail.bundle.clone(),
            capability,
            target: target.to_owned(),
            reason: reason.to_owned(),
        }));
    }

    /// Record a line the component logged.
    pub(crate) fn log(&self, level: LogLevel, message: String) {
        self.emit(Event::Log {
            bundle: self.trail.bundle.clone(),
            level,
            message,
        });
    }

    /// Record progress the component reported.
    pub(crate) fn progress(&self, done: u64, total: Option<u64>, message: String) {
        self.emit(Event::Progress {
            bundle: self.trail.bundle.clone(),
            done,
            total,
            message,
        });
    }

    /// Record that `label` (a tool, a hook phase, a backend operation) ran
    /// past `limit`, and give the error that ends it: a `timeout` for time,
    /// a `limit` for anything else.
    pub(crate) fn exceeded(&self, label: &str, limit: LimitKind, detail: String) -> ToolError {
        self.reached(label, limit, detail.clone());
        let kind = match limit {
            LimitKind::Timeout => ToolErrorKind::Timeout,
            _ => ToolErrorKind::Limit,
        };
        ToolError::new(kind, detail)
    }

    /// Record that `label` ran into `limit` and was stopped by it there,
    /// inside the component (a shell line its backend ended): the call
    /// itself goes on to its result.
    pub(crate) fn reached(&self, label: &str, limit: LimitKind, detail: String) {
        self.emit(Event::LimitExceeded {
            bundle: self.trail.bundle.clone(),
            tool: label.to_owned(),
            limit,
            detail,
        });
    }

    /// Everything kept so far, in order, leaving the trail empty.
    pub(crate) fn take(&self) -> Vec<Event> {
        std::mem::take(&mut self.kept())
    }
}
