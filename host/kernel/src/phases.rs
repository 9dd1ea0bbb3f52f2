//! The hook phases around the gate: before-inference, after-tool-call and
//! step-end. Each runs the phase's hooks in order, admits their staged writes
//! into the step, and fails closed: a failed before-inference hook refuses the
//! request, a failed after-tool-call hook withholds the observation, a failed
//! step-end hook loses its writes. Every failure is a `hook-failed` event.

use tracing::Instrument;

use crate::event::Event;
use crate::hooks::{
    HookPhase, HookSet, InferenceRequest, InferenceVerdict, Observation, StepSummary,
};
use crate::merge::{Admit, Refusal, StateConflict, StepState, Writer};
use crate::message::{CallResult, ToolCall};
use crate::progress::Trail;
use crate::spans;
use crate::tool::{ToolError, ToolErrorKind};

/// What the before-inference hooks decided.
pub(crate) enum Inference {
    /// Make the request, with this text added to the instructions.
    Proceed { context: Vec<String> },
    /// Do not make it.
    Refused { hook: String, reason: String },
}

/// Admit a hook's writes; a refusal becomes the hook's failure.
fn admit(
    step: &mut dyn Admit,
    writer: Writer,
    writes: Vec<crate::state::StateWrite>,
) -> Result<Result<(), ToolError>, StateConflict> {
    match step.admit(writer, writes) {
        Ok(()) => Ok(Ok(())),
        Err(Refusal::Conflict(conflict)) => Err(conflict),
        Err(Refusal::Rejected(reason)) => Ok(Err(ToolError::new(ToolErrorKind::Failed, reason))),
    }
}

fn report(
    events: &dyn Trail,
    hook: &str,
    phase: HookPhase,
    call_id: Option<&str>,
    error: &ToolError,
) {
    events.emit(Event::HookFailed {
        bundle: hook.to_owned(),
        phase,
        call_id: call_id.map(str::to_owned),
        error: error.clone(),
    });
}

/// Run the before-inference hooks on `request`.
pub(crate) async fn before_inference(
    hooks: &dyn HookSet,
    events: &dyn Trail,
    step: &mut StepState,
    request: &InferenceRequest,
) -> Result<Inference, StateConflict> {
    let phase = HookPhase::BeforeInference;
    let mut context = Vec::new();
    for hook in hooks.handlers(phase) {
        let outcome = hooks
            .before_inference(&hook, request, step.view())
            .instrument(spans::hook(&hook, phase, None))
            .await;
        events.record(outcome.events);
        let writer = Writer::Hook {
            bundle: hook.clone(),
            phase,
            call_id: None,
        };
        let verdict = match outcome.result {
            Ok(verdict) => admit(step, writer, outcome.writes)?.map(|()| verdict),
            Err(error) => Err(error),
        };
        match verdict {
            Err(error) => {
                report(events, &hook, phase, None, &error);
                return Ok(Inference::Refused {
                    reason: format!("the hook failed: {error}"),
                    hook,
                });
            }
            Ok(InferenceVerdict::Proceed) => {}
            Ok(InferenceVerdict::AddContext(text)) => {
                events.emit(Event::ContextAdded {
                    bundle: hook.clone(),
                    bytes: text.len(),
                });
                context.push(text);
            }
            Ok(InferenceVerdict::Refuse(reason)) => return Ok(Inference::Refused { hook, reason }),
        }
    }
    Ok(Inference::Proceed { context })
}

/// Run the after-tool-call hooks on `call`'s `result`, each seeing the previous
/// one's replacement, and return what the model observes.
pub(crate) async fn observe(
    hooks: &dyn HookSet,
    events: &dyn Trail,
    step: &mut dyn Admit,
    call: &ToolCall,
    mut result: CallResult,
) -> Result<CallResult, StateConflict> {
    let phase = HookPhase::AfterToolCall;
    for hook in hooks.handlers(phase) {
        let outcome = hooks
            .after_tool_call(&hook, call, &result, step.view())
            .instrument(spans::hook(&hook, phase, Some(&call.id)))
            .await;
        events.record(outcome.events);
        let writer = Writer::Hook {
            bundle: hook.clone(),
            phase,
            call_id: Some(call.id.clone()),
        };
        let observation = match outcome.result {
            Ok(observation) => admit(step, writer, outcome.writes)?.map(|()| observation),
            Err(error) => Err(error),
        };
        match observation {
            Err(error) => {
                report(events, &hook, phase, Some(&call.id), &error);
                return Ok(CallResult::Error(ToolError::new(
                    ToolErrorKind::Failed,
                    format!("the result was withheld because hook `{hook}` failed: {error}"),
                )));
            }
            Ok(Observation::Keep) => {}
            Ok(Observation::Replace(replacement)) => {
                events.emit(Event::ObservationReplaced {
                    bundle: hook.clone(),
                    call_id: call.id.clone(),
                });
                result = replacement;
            }
        }
    }
    Ok(result)
}

/// Run the step-end hooks on `summary`. A failed hook's writes are dropped.
pub(crate) async fn step_end(
    hooks: &dyn HookSet,
    events: &dyn Trail,
    step: &mut StepState,
    summary: &StepSummary,
) -> Result<(), StateConflict> {
    let phase = HookPhase::StepEnd;
    for hook in hooks.handlers(phase) {
        let outcome = hooks
            .step_end(&hook, summary, step.view())
            .instrument(spans::hook(&hook, phase, None))
            .await;
        events.record(outcome.events);
        let writer = Writer::Hook {
            bundle: hook.clone(),
            phase,
            call_id: None,
        };
        let done = match outcome.result {
            Ok(()) => admit(step, writer, outcome.writes)?,
            Err(error) => Err(error),
        };
        if let Err(error) = done {
            report(events, &hook, phase, None, &error);
        }
    }
    Ok(())
}
