//! Hook bundles as the kernel's [`HookSet`]: each phase call runs in a fresh,
//! limited instance of the bundle, like a tool call, and everything the
//! component returns is checked before the kernel sees it: JSON must parse,
//! rewritten arguments and added context must fit the bundle's output limit. Any
//! failure is a typed error the kernel turns into a fail-closed decision.

use std::sync::Arc;

use cordon_kernel::{
    CallResult, CallStatus, GateVerdict, HookFuture, HookOutcome, HookPhase, HookSet,
    InferenceRequest, InferenceVerdict, Observation, StateReader, StepSummary, ToolCall, ToolError,
    ToolErrorKind,
};
use serde_json::Value;

use crate::audit::Audit;
use crate::bindings::cordon::plugin::hook_types;
use crate::bindings::{after_tool_call, before_inference, before_tool_call, step_end};
use crate::bundle::{Bundle, Exports, HookExports};
use crate::errors::{clip, from_wit_error, to_wit_error};
use crate::guarded::{self, Body, check_size};
use crate::plugins::{Plugins, PluginsInner};
use crate::sandbox::builder::CallBuilder;

/// Run `body` in a fresh instance of `bundle` as a guarded call reading
/// `state`, and check its answer with `check`; the outcome carries what the
/// hook staged, when it answered, and its trail either way.
async fn run_phase<T, U>(
    plugins: &Arc<PluginsInner>,
    bundle: &Arc<Bundle>,
    state: Arc<dyn StateReader>,
    phase: HookPhase,
    body: Body<T>,
    check: impl FnOnce(T, &Audit) -> Result<U, ToolError>,
) -> HookOutcome<U> {
    let audit = Audit::new(&bundle.manifest.name, Arc::clone(&plugins.events));
    let call = CallBuilder::new(bundle, phase.as_str(), audit.clone(), plugins.guard(bundle))
        .reading(state);
    let finished = guarded::call(&plugins.engine, call, false, body)
        .await
        .and_then(|answer| check(answer, &audit));
    HookOutcome {
        result: finished.result,
        writes: finished.effects.writes,
        events: audit.take(),
    }
}

/// Parse JSON text a hook returned.
fn parse(what: &str, text: &str) -> Result<Value, ToolError> {
    serde_json::from_str(text).map_err(|error| {
        ToolError::new(
            ToolErrorKind::Failed,
            format!("the hook returned malformed JSON as {what}: {error}"),
        )
    })
}

fn wit_call(call: &ToolCall) -> hook_types::ToolCall {
    hook_types::ToolCall {
        id: call.id.clone(),
        name: call.name.clone(),
        args: call.args.to_string(),
    }
}

impl Plugins {
    /// The hook bundle `name` and its exports, when it handles `phase`.
    fn hook(&self, name: &str, phase: HookPhase) -> Option<(&Arc<Bundle>, &HookExports)> {
        let bundle = self
            .inner
            .hooks
            .iter()
            .find(|bundle| bundle.manifest.name == name)?;
        match &bundle.exports {
            Exports::Hooks(exports) if bundle.manifest.hooks.contains(&phase) => {
                Some((bundle, exports))
            }
            _ => None,
        }
    }
}

fn unhandled<'a, T: Send + 'a>(name: &str, phase: HookPhase) -> HookFuture<'a, T> {
    let error = ToolError::new(
        ToolErrorKind::NotFound,
        format!("no hook bundle `{name}` handles {phase}"),
    );
    Box::pin(async move { HookOutcome::failed(error) })
}

impl HookSet for Plugins {
    fn handlers(&self, phase: HookPhase) -> Vec<String> {
        self.inner
            .hooks
            .iter()
            .filter(|bundle| bundle.manifest.hooks.contains(&phase))
            .map(|bundle| bundle.manifest.name.clone())
            .collect()
    }

    fn before_inference<'a>(
        &'a self,
        hook: &'a str,
        request: &'a InferenceRequest,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, InferenceVerdict> {
        let phase = HookPhase::BeforeInference;
        let Some((
            bundle,
            HookExports {
                before_inference: Some(indices),
                ..
            },
        )) = self.hook(hook, phase)
        else {
            return unhandled(hook, phase);
        };
        let indices = indices.clone();
        let request = before_inference::Inference {
            step: request.step,
            messages: request.messages.to_string(),
        };
        Box::pin(async move {
            let body: Body<before_inference::InferenceVerdict> =
                Box::new(move |store, instance| {
                    Box::pin(async move {
                        let guest = indices.load(&mut *store, &instance)?;
                        guest.call_before_inference(&mut *store, &request).await
                    })
                });
            let max = bundle.manifest.limits.output_bytes;
            run_phase(
                &self.inner,
                bundle,
                state,
                phase,
                body,
                |verdict, audit| match verdict {
                    before_inference::InferenceVerdict::Proceed => Ok(InferenceVerdict::Proceed),
                    before_inference::InferenceVerdict::AddContext(text) => {
                        check_size(audit, phase.as_str(), "added context", text.len(), max)?;
                        Ok(InferenceVerdict::AddContext(text))
                    }
                    before_inference::InferenceVerdict::Refuse(reason) => {
                        Ok(InferenceVerdict::Refuse(clipped(reason, bundle)))
                    }
                },
            )
            .await
        })
    }

    fn before_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, GateVerdict> {
        let phase = HookPhase::BeforeToolCall;
        let Some((
            bundle,
            HookExports {
                before_tool_call: Some(indices),
                ..
            },
        )) = self.hook(hook, phase)
        else {
            return unhandled(hook, phase);
        };
        let indices = indices.clone();
        let wit = wit_call(call);
        Box::pin(async move {
            let body: Body<before_tool_call::Verdict> = Box::new(move |store, instance| {
                Box::pin(async move {
                    let guest = indices.load(&mut *store, &instance)?;
                    guest.call_before_tool_call(&mut *store, &wit).await
                })
            });
            let max = bundle.manifest.limits.output_bytes;
            run_phase(
                &self.inner,
                bundle,
                state,
                phase,
                body,
                |verdict, audit| match verdict {
                    before_tool_call::Verdict::Allow => Ok(GateVerdict::Allow),
                    before_tool_call::Verdict::Deny(reason) => {
                        Ok(GateVerdict::Deny(clipped(reason, bundle)))
                    }
                    before_tool_call::Verdict::Ask(reason) => {
                        Ok(GateVerdict::Ask(clipped(reason, bundle)))
                    }
                    before_tool_call::Verdict::Rewrite(args) => {
                        check_size(
                            audit,
                            phase.as_str(),
                            "rewritten arguments",
                            args.len(),
                            max,
                        )?;
                        Ok(GateVerdict::Rewrite(parse("rewritten arguments", &args)?))
                    }
                },
            )
            .await
        })
    }

    fn after_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        result: &'a CallResult,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, Observation> {
        let phase = HookPhase::AfterToolCall;
        let Some((
            bundle,
            HookExports {
                after_tool_call: Some(indices),
                ..
            },
        )) = self.hook(hook, phase)
        else {
            return unhandled(hook, phase);
        };
        let indices = indices.clone();
        let wit = wit_call(call);
        let outcome = match result {
            CallResult::Output(value) => Ok(value.to_string()),
            CallResult::Error(error) => Err(to_wit_error(error.clone())),
        };
        Box::pin(async move {
            let body: Body<after_tool_call::Observation> = Box::new(move |store, instance| {
                Box::pin(async move {
                    let guest = indices.load(&mut *store, &instance)?;
                    guest
                        .call_after_tool_call(&mut *store, &wit, outcome.as_ref())
                        .await
                })
            });
            let max = bundle.manifest.limits.output_bytes;
            run_phase(
                &self.inner,
                bundle,
                state,
                phase,
                body,
                |observation, audit| match observation {
                    after_tool_call::Observation::Keep => Ok(Observation::Keep),
                    after_tool_call::Observation::Replace(Ok(text)) => {
                        check_size(audit, phase.as_str(), "replacement", text.len(), max)?;
                        Ok(Observation::Replace(CallResult::Output(parse(
                            "replacement",
                            &text,
                        )?)))
                    }
                    after_tool_call::Observation::Replace(Err(error)) => Ok(Observation::Replace(
                        CallResult::Error(from_wit_error(error, max)),
                    )),
                },
            )
            .await
        })
    }

    fn step_end<'a>(
        &'a self,
        hook: &'a str,
        summary: &'a StepSummary,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, ()> {
        let phase = HookPhase::StepEnd;
        let Some((
            bundle,
            HookExports {
                step_end: Some(indices),
                ..
            },
        )) = self.hook(hook, phase)
        else {
            return unhandled(hook, phase);
        };
        let indices = indices.clone();
        let wit = step_end::StepSummary {
            step: summary.step,
            calls: summary
                .calls
                .iter()
                .map(|(call, status)| step_end::FinishedCall {
                    call: wit_call(call),
                    status: match status {
                        CallStatus::Succeeded => step_end::CallStatus::Succeeded,
                        CallStatus::Failed => step_end::CallStatus::Failed,
                        CallStatus::Denied => step_end::CallStatus::Denied,
                    },
                })
                .collect(),
            answer: summary.answer.clone(),
        };
        Box::pin(async move {
            let body: Body<()> = Box::new(move |store, instance| {
                Box::pin(async move {
                    let guest = indices.load(&mut *store, &instance)?;
                    guest.call_step_end(&mut *store, &wit).await
                })
            });
            run_phase(&self.inner, bundle, state, phase, body, |(), _| Ok(())).await
        })
    }
}

/// A hook's reason, cut to the bundle's output limit.
fn clipped(text: String, bundle: &Bundle) -> String {
    clip(text, bundle.manifest.limits.output_bytes)
}
