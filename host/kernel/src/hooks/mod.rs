//! The hook port: plugins that run at fixed points of the loop to judge, filter
//! or observe it. The kernel decides when hooks run, in which order, and how
//! their answers combine; a [`HookSet`] only runs the hook it is asked to.
//!
//! Every phase returns a [`HookOutcome`]: the hook's answer, or the
//! [`ToolError`] that says why it has none (trap, timeout, limit, malformed
//! answer), plus the state writes it staged. The loop fails closed on an error.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

pub(crate) mod phase;

pub use phase::HookPhase;

use crate::event::Event;
use crate::message::{CallResult, ToolCall};
use crate::state::{StateReader, StateWrite};
use crate::tool::error::ToolError;

/// A model request as before-inference hooks see it.
#[derive(Debug, Clone, PartialEq)]
pub struct InferenceRequest {
    /// The step about to run, counting from 1.
    pub step: u32,
    /// The conversation so far, as a JSON list of messages.
    pub messages: Value,
}

/// A before-inference hook's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum InferenceVerdict {
    /// Make the request.
    Proceed,
    /// Add this text to the request's instructions.
    AddContext(String),
    /// Do not make the request; the run ends.
    Refuse(String),
}

/// A before-tool-call hook's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum GateVerdict {
    /// No objection.
    Allow,
    /// Refuse the call.
    Deny(String),
    /// Hold the call for a person.
    Ask(String),
    /// Run the call with these arguments, which the policy judges again.
    Rewrite(Value),
}

/// An after-tool-call hook's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// The model sees the result as it is.
    Keep,
    /// The model sees this instead, and only this is stored.
    Replace(CallResult),
}

/// How a call of a finished step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    /// The tool returned an output.
    Succeeded,
    /// The tool ran and failed.
    Failed,
    /// The call was refused and never ran.
    Denied,
}

/// A finished step as step-end hooks see it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSummary {
    /// The step, counting model requests from 1.
    pub step: u32,
    /// Its tool calls in the model's order, as they ran.
    pub calls: Vec<(ToolCall, CallStatus)>,
    /// The final answer, when the step gave one.
    pub answer: Option<String>,
}

/// What one hook call produced, and everything it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct HookOutcome<T> {
    /// The answer, or why there is none.
    pub result: Result<T, ToolError>,
    /// State writes the hook staged; empty unless `result` is `Ok`.
    pub writes: Vec<StateWrite>,
    /// What the hook said and what was refused or stopped, in order; kept
    /// whether or not the hook answered.
    pub events: Vec<Event>,
}

impl<T> HookOutcome<T> {
    /// A hook call that answered `value` and changed nothing.
    pub fn answered(value: T) -> Self {
        Self {
            result: Ok(value),
            writes: Vec::new(),
            events: Vec::new(),
        }
    }

    /// A hook call that produced no answer, for `error`.
    pub fn failed(error: ToolError) -> Self {
        Self {
            result: Err(error),
            writes: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// The future a [`HookSet`] call returns.
pub type HookFuture<'a, T> = Pin<Box<dyn Future<Output = HookOutcome<T>> + Send + 'a>>;

/// The port through which the kernel runs hooks.
pub trait HookSet: Send + Sync {
    /// The hooks that handle `phase`, in the order they run.
    fn handlers(&self, phase: HookPhase) -> Vec<String>;

    /// These hooks and the loaded hook bundles `more` names, in their
    /// order: what a sub-agent choosing hooks of its own runs under; `None`
    /// for a set that runs every loaded hook already.
    fn widened(&self, more: &[String]) -> Option<Arc<dyn HookSet>> {
        let _ = more;
        None
    }

    /// Run hook `hook`'s before-inference phase.
    fn before_inference<'a>(
        &'a self,
        hook: &'a str,
        request: &'a InferenceRequest,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, InferenceVerdict>;

    /// Run hook `hook`'s before-tool-call phase on `call`.
    fn before_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, GateVerdict>;

    /// Run hook `hook`'s after-tool-call phase on `call` and its `result`.
    fn after_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        result: &'a CallResult,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, Observation>;

    /// Run hook `hook`'s step-end phase.
    fn step_end<'a>(
        &'a self,
        hook: &'a str,
        summary: &'a StepSummary,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, ()>;
}

/// A [`HookSet`] without hooks.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

fn unhandled<'a, T: Send + 'a>(hook: &str, phase: HookPhase) -> HookFuture<'a, T> {
    let error = ToolError::new(
        crate::tool::error::ToolErrorKind::NotFound,
        format!("no hook `{hook}` handles {phase}"),
    );
    Box::pin(async move { HookOutcome::failed(error) })
}

impl HookSet for NoHooks {
    fn handlers(&self, _phase: HookPhase) -> Vec<String> {
        Vec::new()
    }

    fn before_inference<'a>(
        &'a self,
        hook: &'a str,
        _request: &'a InferenceRequest,
        _state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, InferenceVerdict> {
        unhandled(hook, HookPhase::BeforeInference)
    }

    fn before_tool_call<'a>(
        &'a self,
        hook: &'a str,
        _call: &'a ToolCall,
        _state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, GateVerdict> {
        unhandled(hook, HookPhase::BeforeToolCall)
    }

    fn after_tool_call<'a>(
        &'a self,
        hook: &'a str,
        _call: &'a ToolCall,
        _result: &'a CallResult,
        _state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, Observation> {
        unhandled(hook, HookPhase::AfterToolCall)
    }

    fn step_end<'a>(
        &'a self,
        hook: &'a str,
        _summary: &'a StepSummary,
        _state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, ()> {
        unhandled(hook, HookPhase::StepEnd)
    }
}

/// The hooks of another [`HookSet`] an agent chose (`hooks = [...]` in its
/// file): only those handle any phase, and a call naming any other is
/// refused, as a hook nobody loaded would be.
pub struct ChosenHooks {
    inner: Arc<dyn HookSet>,
    chosen: BTreeSet<String>,
}

impl ChosenHooks {
    /// The hooks of `inner` named in `chosen`.
    pub fn new(inner: Arc<dyn HookSet>, chosen: &[String]) -> Self {
        Self {
            inner,
            chosen: chosen.iter().cloned().collect(),
        }
    }
}

impl HookSet for ChosenHooks {
    fn widened(&self, more: &[String]) -> Option<Arc<dyn HookSet>> {
        let mut chosen = self.chosen.clone();
        chosen.extend(more.iter().cloned());
        Some(Arc::new(Self {
            inner: Arc::clone(&self.inner),
            chosen,
        }))
    }

    fn handlers(&self, phase: HookPhase) -> Vec<String> {
        self.inner
            .handlers(phase)
            .into_iter()
            .filter(|hook| self.chosen.contains(hook))
            .collect()
    }

    fn before_inference<'a>(
        &'a self,
        hook: &'a str,
        request: &'a InferenceRequest,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, InferenceVerdict> {
        if !self.chosen.contains(hook) {
            return unhandled(hook, HookPhase::BeforeInference);
        }
        self.inner.before_inference(hook, request, state)
    }

    fn before_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, GateVerdict> {
        if !self.chosen.contains(hook) {
            return unhandled(hook, HookPhase::BeforeToolCall);
        }
        self.inner.before_tool_call(hook, call, state)
    }

    fn after_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        result: &'a CallResult,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, Observation> {
        if !self.chosen.contains(hook) {
            return unhandled(hook, HookPhase::AfterToolCall);
        }
        self.inner.after_tool_call(hook, call, result, state)
    }

    fn step_end<'a>(
        &'a self,
        hook: &'a str,
        summary: &'a StepSummary,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, ()> {
        if !self.chosen.contains(hook) {
            return unhandled(hook, HookPhase::StepEnd);
        }
        self.inner.step_end(hook, summary, state)
    }
}
