//! How a run looks while it happens: text for a person, or JSON lines, from the
//! loop's progress and the sandbox's events.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use cordon_kernel::{
    Approval, CallResult, Decision, Disposition, Event, EventSink, Observer, PendingCall, Progress,
    RunOutcome, Verdict,
};
use serde_json::{Value, json};

use crate::events::render;

/// `println!` that ignores a closed stdout (`cordon run ... | head`): the run
/// itself must not fail because nobody reads its progress any more.
macro_rules! say {
    () => {{
        let _ = writeln!(std::io::stdout().lock());
    }};
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// Prints progress and events, as text or as JSON lines.
pub(crate) struct Printer {
    json: bool,
    /// Whether streamed text left the cursor mid-line.
    mid_line: AtomicBool,
    /// What to say of the calls of tools that run outside any sandbox.
    unsandboxed: OnceLock<BTreeMap<String, String>>,
    /// The flags `runs resume` needs to find the run's store from where this
    /// command ran (` --workspace DIR` or ` --store PATH`), or nothing.
    store_flags: OnceLock<String>,
    /// Events about a call, held until the call's next line (`->` as it is
    /// judged, `<-` as it ends) is out, so each reads after what it is about.
    held: Mutex<Vec<Event>>,
}

impl Printer {
    pub(crate) fn new(json: bool) -> Self {
        Self {
            json,
            mid_line: AtomicBool::new(false),
            unsandboxed: OnceLock::new(),
            store_flags: OnceLock::new(),
            held: Mutex::default(),
        }
    }

    /// Print the held events about `call`, or every held event when `None`.
    fn release(&self, call: Option<&str>) {
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (due, kept): (Vec<Event>, Vec<Event>) = std::mem::take(&mut *held)
            .into_iter()
            .partition(|event| call.is_none() || event.call_id() == call);
        *held = kept;
        drop(held);
        for event in due {
            eprintln!("{}", render(&event));
        }
    }

    /// Name `flags` in the resume command a waiting run prints: what
    /// `runs resume` needs, run from the same folder, to find the store.
    pub(crate) fn resume_with(&self, flags: String) {
        let _ = self.store_flags.set(flags);
    }

    /// Say of the calls of the tools `unsandboxed` names, when they wait for
    /// a decision, where they run.
    pub(crate) fn mark_unsandboxed(&self, unsandboxed: BTreeMap<String, String>) {
        let _ = self.unsandboxed.set(unsandboxed);
    }

    /// End a line of streamed text before printing anything else.
    fn break_line(&self) {
        if self.mid_line.swap(false, Ordering::SeqCst) {
            say!();
        }
    }

    fn line(&self, value: Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{value}");
    }

    /// Print how the run ended or why it waits.
    pub(crate) fn outcome(&self, outcome: &RunOutcome) {
        if self.json {
            self.line(outcome_json(outcome));
            return;
        }
        self.break_line();
        match outcome {
            // The answer streamed as it came; it is not printed twice.
            RunOutcome::Ended { run_id, cause, .. } => {
                say!();
                say!("run {run_id} ended ({})", cause_word(cause));
            }
            RunOutcome::Waiting { run_id, pending } => {
                // A sub-agent's waiting calls, by their path from this run.
                let pending: Vec<PendingCall> =
                    pending.iter().flat_map(PendingCall::leaves).collect();
                say!();
                say!("run {run_id} is waiting for a decision on:");
                for call in &pending {
                    say!("  {}  {} {}", call.call.id, call.call.name, call.call.args);
                    say!(
                        "      {}",
                        call.reason
                            .asked()
                            .unwrap_or_else(|| INDETERMINATE.to_owned())
                    );
                    if let Some(note) = self
                        .unsandboxed
                        .get()
                        .and_then(|marked| marked.get(&call.call.name))
                    {
                        say!("      {note}");
                    }
                }
                let each: Vec<String> = pending
                    .iter()
                    .map(|call| format!("--approve {}", call.call.id))
                    .collect();
                let flags = self.store_flags.get().map_or("", String::as_str);
                say!(
                    "resume with: cordon runs resume {run_id}{flags} {}",
                    each.join(" ")
                );
                say!(
                    "  (or --deny CALL, --approve-all, --deny-all, with --reason TEXT for the model; on a terminal, `cordon runs resume {run_id}{flags}` asks)"
                );
            }
        }
    }
}

/// Why a call waits that was under way when its run stopped.
const INDETERMINATE: &str = "it was under way when the run stopped, so it may already have acted: \
     approving runs it again, denying tells the model it did not finish";

/// Who or what decided a call, in parentheses after its verdict: the rule
/// (or nothing for the default), or the person who answered and the rule
/// that asked them.
pub(crate) fn decided_by(decision: &Decision) -> String {
    let asked = decision
        .rule
        .as_deref()
        .map_or_else(String::new, |rule| format!("; rule `{rule}` asked"));
    match (&decision.answered, &decision.rule) {
        (Some(Approval::Approve), _) => format!(" (approved by the operator{asked})"),
        (Some(Approval::Deny), _) => format!(" (denied by the operator{asked})"),
        (Some(Approval::DenyBecause(reason)), _) => {
            format!(" (denied by the operator: {reason}{asked})")
        }
        (None, Some(rule)) => format!(" ({rule})"),
        (None, None) => String::new(),
    }
}

/// How a run ended, in words.
pub(crate) fn cause_word(cause: &cordon_kernel::EndCause) -> String {
    match cause {
        cordon_kernel::EndCause::FinalAnswer => "final answer".into(),
        cordon_kernel::EndCause::MaxSteps => "step limit".into(),
        cordon_kernel::EndCause::Cancelled => "cancelled".into(),
        cordon_kernel::EndCause::ServerStopped => "the server stopped".into(),
        cordon_kernel::EndCause::Error(message) => format!("error: {message}"),
        cordon_kernel::EndCause::Refused { hook, reason } => {
            format!("refused by hook `{hook}`: {reason}")
        }
        cordon_kernel::EndCause::Limit(detail) => format!("over budget: {detail}"),
    }
}

/// The outcome as one JSON object.
pub(crate) fn outcome_json(outcome: &RunOutcome) -> Value {
    match outcome {
        RunOutcome::Ended {
            run_id,
            cause,
            answer,
        } => {
            let mut value =
                json!({"type": "outcome", "run": run_id, "status": "ended", "answer": answer});
            // `cause` (and `detail` for an error) sit beside the other fields.
            if let (Some(fields), Ok(Value::Object(cause))) =
                (value.as_object_mut(), serde_json::to_value(cause))
            {
                fields.extend(cause);
            }
            value
        }
        RunOutcome::Waiting { run_id, pending } => {
            json!({"type": "outcome", "run": run_id, "status": "waiting", "pending": pending})
        }
    }
}

fn disposition_word(disposition: &Disposition) -> &'static str {
    match disposition {
        Disposition::Running => "running",
        Disposition::Waiting { .. } => "waiting",
        Disposition::Ended { .. } => "ended",
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 160 {
        let mut end = 157;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &text[..end])
    } else {
        text
    }
}

impl Observer for Printer {
    fn observe(&self, progress: Progress) {
        if self.json {
            let value = match &progress {
                Progress::Text(text) => json!({"type": "text", "text": text}),
                Progress::Restarted => json!({"type": "restarted"}),
                Progress::Retrying(retry) => json!({"type": "retrying", "retry": retry}),
                Progress::ToolCall { call, decision } => {
                    json!({"type": "tool-call", "call": call, "decision": decision})
                }
                Progress::ToolResult { call_id, result } => {
                    json!({"type": "tool-result", "call": call_id, "result": result})
                }
                Progress::Committed {
                    seq,
                    step,
                    disposition,
                } => {
                    json!({"type": "committed", "seq": seq, "step": step, "disposition": disposition})
                }
            };
            self.line(value);
            return;
        }
        match progress {
            Progress::Text(text) => {
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "{text}");
                let _ = out.flush();
                self.mid_line.store(!text.ends_with('\n'), Ordering::SeqCst);
            }
            Progress::Restarted => {
                self.break_line();
                say!("(the model's response broke off; asking again)");
            }
            Progress::Retrying(retry) => {
                self.break_line();
                say!(
                    "(the model provider: {}; trying again in {:.1} s, attempt {} of {})",
                    retry.reason,
                    Duration::from_millis(retry.after_ms).as_secs_f64(),
                    retry.attempt,
                    retry.attempts
                );
            }
            Progress::ToolCall { call, decision } => {
                let verdict = match decision.verdict {
                    Verdict::Allow => "allow",
                    Verdict::Ask => "ask",
                    Verdict::Deny => "deny",
                };
                let rule = decided_by(&decision);
                self.break_line();
                say!(
                    "-> {} {} {}: {verdict}{rule}",
                    call.id,
                    call.name,
                    short(&call.args)
                );
                self.release(Some(&call.id));
            }
            Progress::ToolResult { call_id, result } => {
                self.break_line();
                match result {
                    CallResult::Output(value) => say!("<- {call_id} ok {}", short(&value)),
                    CallResult::Error(error) => {
                        say!("<- {call_id} {}: {}", error.kind, error.message)
                    }
                }
                self.release(Some(&call_id));
            }
            Progress::Committed {
                step, disposition, ..
            } => {
                self.break_line();
                self.release(None);
                say!(
                    "== {} committed ({})",
                    step_name(step),
                    disposition_word(&disposition)
                );
            }
        }
    }
}

impl Drop for Printer {
    /// A command that stops before its next commit still says what it held.
    fn drop(&mut self) {
        if !self.json {
            self.release(None);
        }
    }
}

impl EventSink for Printer {
    fn emit(&self, event: Event) {
        if self.json {
            self.line(json!({"type": "event", "event": event}));
        } else if event.call_id().is_some() {
            self.held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(event);
        } else {
            self.break_line();
            eprintln!("{}", render(&event));
        }
    }
}

/// A model step as progress and `runs show` name it: `step N`, or `prompt`
/// for what a run commits before the model's first turn.
pub(crate) fn step_name(step: u32) -> String {
    if step == 0 {
        "prompt".to_owned()
    } else {
        format!("step {step}")
    }
}
