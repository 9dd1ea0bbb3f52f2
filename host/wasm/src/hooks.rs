//! Hook bundles as the kernel's [`HookSet`]: each phase call runs in a fresh,
//! limited instance of the bundle, like a tool call, and everything the
//! component returns is checked before the kernel sees it: JSON must parse,
//! rewritten arguments and added context must fit the bundle's output limit. Any
//! failure is a typed error the kernel turns into a fail-closed decision.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use cordon_kernel::{
    CallContext, CallResult, CallStatus, GateVerdict, HookFuture, HookOutcome, HookPhase, HookSet,
    InferenceRequest, InferenceVerdict, Observation, StateReader, StepSummary, ToolCall, ToolError,
    ToolErrorKind,
};
use serde_json::Value;
use wasmtime::Store;
use wasmtime::component::Instance;

use crate::bindings::cordon::plugin::hook_types;
use crate::bindings::{after_tool_call, before_inference, before_tool_call, step_end};
use crate::bundle::{Bundle, Exports, HookExports};
use crate::call::{self, check_size, from_wit_error, settle, to_wit_error};
use crate::plugins::{Plugins, PluginsInner};
use crate::sandbox::CallState;

/// The body of one phase call: given the store and a fresh instance, call the
/// export. Owns what it needs so that it can borrow only the store.
type Body<T> = Box<
    dyn for<'s> FnOnce(
            &'s mut Store<CallState>,
            Instance,
        ) -> Pin<Box<dyn Future<Output = wasmtime::Result<T>> + Send + 's>>
        + Send,
>;

/// Run `body` in a fresh, limited instance of `bundle`, once the instance
/// pool has a slot for it.
async fn run_phase<T: Send + 'static>(
    plugins: &Arc<PluginsInner>,
    bundle: &Arc<Bundle>,
    state: Arc<dyn StateReader>,
    phase: HookPhase,
    body: Body<T>,
) -> HookOutcome<T> {
    let timeout = bundle.manifest.limits.timeout;
    let ran = plugins
        .engine
        .admission
        .run(false, timeout, async {
            let context = CallContext::outside_run(state);
            let mut store = match call::limited_store(plugins, context, bundle, phase.as_str()) {
                Ok(store) => store,
                Err(error) => {
                    return HookOutcome::failed(ToolError::new(
                        ToolErrorKind::Failed,
                        format!("cannot prepare the sandbox: {error:#}"),
                    ));
                }
            };
            let returned = tokio::time::timeout(timeout, async {
                let instance = bundle.pre.instantiate_async(&mut store).await?;
                body(&mut store, instance).await
            })
            .await;
            match settle(plugins, phase.as_str(), returned, store.data()) {
                Ok(value) => HookOutcome {
                    result: Ok(value),
                    writes: store.into_data().staged.into_writes(),
                },
                Err(error) => HookOutcome::failed(error),
            }
        })
        .await;
    ran.unwrap_or_else(|full| {
        HookOutcome::failed(call::pool_full(plugins, bundle, phase.as_str(), &full))
    })
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

/// Replace the answer of a finished phase call with the result of `check`.
fn map_answer<T, U>(
    outcome: HookOutcome<T>,
    check: impl FnOnce(T) -> Result<U, ToolError>,
) -> HookOutcome<U> {
    match outcome.result.and_then(check) {
        Ok(value) => HookOutcome {
            result: Ok(value),
            writes: outcome.writes,
        },
        Err(error) => HookOutcome::failed(error),
    }
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
            let outcome = run_phase(&self.inner, bundle, state, phase, body).await;
            map_answer(outcome, |verdict| match verdict {
                before_inference::InferenceVerdict::Proceed => Ok(InferenceVerdict::Proceed),
                before_inference::InferenceVerdict::AddContext(text) => {
                    check_size(
                        &self.inner,
                        bundle,
                        phase.as_str(),
                        "added context",
                        text.len(),
                    )?;
                    Ok(InferenceVerdict::AddContext(text))
                }
                before_inference::InferenceVerdict::Refuse(reason) => {
                    Ok(InferenceVerdict::Refuse(clip(reason, bundle)))
                }
            })
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
            let outcome = run_phase(&self.inner, bundle, state, phase, body).await;
            map_answer(outcome, |verdict| match verdict {
                before_tool_call::Verdict::Allow => Ok(GateVerdict::Allow),
                before_tool_call::Verdict::Deny(reason) => {
                    Ok(GateVerdict::Deny(clip(reason, bundle)))
                }
                before_tool_call::Verdict::Ask(reason) => {
                    Ok(GateVerdict::Ask(clip(reason, bundle)))
                }
                before_tool_call::Verdict::Rewrite(args) => {
                    check_size(
                        &self.inner,
                        bundle,
                        phase.as_str(),
                        "rewritten arguments",
                        args.len(),
                    )?;
                    Ok(GateVerdict::Rewrite(parse("rewritten arguments", &args)?))
                }
            })
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
            let outcome = run_phase(&self.inner, bundle, state, phase, body).await;
            let max = bundle.manifest.limits.output_bytes;
            map_answer(outcome, |observation| match observation {
                after_tool_call::Observation::Keep => Ok(Observation::Keep),
                after_tool_call::Observation::Replace(Ok(text)) => {
                    check_size(
                        &self.inner,
                        bundle,
                        phase.as_str(),
                        "replacement",
                        text.len(),
                    )?;
                    Ok(Observation::Replace(CallResult::Output(parse(
                        "replacement",
                        &text,
                    )?)))
                }
                after_tool_call::Observation::Replace(Err(error)) => Ok(Observation::Replace(
                    CallResult::Error(from_wit_error(error, max)),
                )),
            })
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
            run_phase(&self.inner, bundle, state, phase, body).await
        })
    }
}

/// A hook's reason, cut to the bundle's output limit.
fn clip(mut reason: String, bundle: &Bundle) -> String {
    let max = bundle.manifest.limits.output_bytes;
    if reason.len() > max {
        let mut end = max;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason.truncate(end);
        reason.push_str("...");
    }
    reason
}
