//! Where a command's events go: straight to stderr for a person, or collected for
//! the `--json` document.

use std::sync::Mutex;

use cordon_kernel::{Event, EventSink, LogLevel};

/// Prints events as they happen, or keeps them for the JSON output.
pub(crate) enum CliEvents {
    /// Print each event to stderr.
    Stderr,
    /// Keep every event.
    Collect(Mutex<Vec<Event>>),
}

impl CliEvents {
    pub(crate) fn new(json: bool) -> Self {
        if json {
            Self::Collect(Mutex::default())
        } else {
            Self::Stderr
        }
    }

    /// The collected events; empty when printing.
    pub(crate) fn take(&self) -> Vec<Event> {
        match self {
            Self::Stderr => Vec::new(),
            Self::Collect(events) => std::mem::take(
                &mut events
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            ),
        }
    }
}

impl EventSink for CliEvents {
    fn emit(&self, event: Event) {
        match self {
            Self::Stderr => eprintln!("{}", render(&event)),
            Self::Collect(events) => events
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(event),
        }
    }
}

/// One event as a line of text.
pub(crate) fn render(event: &Event) -> String {
    match event {
        Event::Log {
            bundle,
            level,
            message,
        } => {
            let level = match level {
                LogLevel::Trace => "trace",
                LogLevel::Debug => "debug",
                LogLevel::Info => "info",
                LogLevel::Warn => "warn",
                LogLevel::Error => "error",
            };
            format!("[{bundle}] {level}: {message}")
        }
        Event::Progress {
            bundle,
            done,
            total,
            message,
        } => match total {
            Some(total) => format!("[{bundle}] progress {done}/{total}: {message}"),
            None => format!("[{bundle}] progress {done}: {message}"),
        },
        Event::Denied(denial) => format!(
            "[{}] denied {} `{}`: {}",
            denial.bundle, denial.capability, denial.target, denial.reason
        ),
        Event::LimitExceeded {
            bundle,
            tool,
            limit,
            detail,
        } => format!("[{bundle}] {tool} stopped by the {limit} limit: {detail}"),
        Event::HookFailed {
            bundle,
            phase,
            call_id,
            error,
        } => match call_id {
            Some(call) => {
                format!("[{bundle}] {phase} hook failed on call {call}, failing closed: {error}")
            }
            None => format!("[{bundle}] {phase} hook failed, failing closed: {error}"),
        },
        Event::ArgumentsRewritten {
            bundle,
            call_id,
            original,
        } => format!("[{bundle}] rewrote the arguments of call {call_id} (were {original})"),
        Event::ObservationReplaced { bundle, call_id } => {
            format!("[{bundle}] replaced what the model sees of call {call_id}")
        }
        Event::ContextAdded { bundle, bytes } => {
            format!("[{bundle}] added {bytes} bytes of context to the model request")
        }
        Event::SkillDenied {
            skill,
            call_id,
            tool,
            reason,
        } => format!("[skill {skill}] denied call {call_id} of `{tool}`: {reason}"),
        Event::SkillDropped { skill, reason } => {
            format!("[skill {skill}] warning: dropped its activation: {reason}")
        }
    }
}
