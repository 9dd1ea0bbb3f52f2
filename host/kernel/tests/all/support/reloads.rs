//! Tools and hooks replaced while a step is under way, for the tests of
//! what a reload changes and when.

use std::sync::{Arc, Mutex};

use cordon_kernel::{
    CallResult, GateVerdict, HookFuture, HookOutcome, HookPhase, HookSet, InferenceRequest,
    InferenceVerdict, NoHooks, Observation, Reloadable, StateReader, StepSummary, ToolCall,
    ToolCallOutcome, ToolOutput, ToolSet,
};
use serde_json::Value;

use super::{Functions, Handler};

/// Tools and hooks a test replaces while a request is under way.
pub(crate) struct Reloads(Mutex<(Arc<dyn ToolSet>, Arc<dyn HookSet>)>);

impl Reloadable for Reloads {
    fn in_force(&self) -> (Arc<dyn ToolSet>, Arc<dyn HookSet>) {
        self.0.lock().unwrap().clone()
    }
}

/// What answers the phases [`Reloading`] does not handle.
static UNHANDLED: NoHooks = NoHooks;

/// A before-tool-call hook that runs `reload` the first time it judges a
/// call, as a reload landing while the gate waits on a hook would.
pub(crate) struct Reloading {
    reload: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl HookSet for Reloading {
    fn handlers(&self, phase: HookPhase) -> Vec<String> {
        match phase {
            HookPhase::BeforeToolCall => vec!["reloading".into()],
            _ => Vec::new(),
        }
    }

    fn before_inference<'a>(
        &'a self,
        hook: &'a str,
        request: &'a InferenceRequest,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, InferenceVerdict> {
        UNHANDLED.before_inference(hook, request, state)
    }

    fn before_tool_call<'a>(
        &'a self,
        _hook: &'a str,
        _call: &'a ToolCall,
        _state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, GateVerdict> {
        if let Some(reload) = self.reload.lock().unwrap().take() {
            reload();
        }
        Box::pin(async { HookOutcome::answered(GateVerdict::Allow) })
    }

    fn after_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        result: &'a CallResult,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, Observation> {
        UNHANDLED.after_tool_call(hook, call, result, state)
    }

    fn step_end<'a>(
        &'a self,
        hook: &'a str,
        summary: &'a StepSummary,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, ()> {
        UNHANDLED.step_end(hook, summary, state)
    }
}

/// A tool answering `value` whatever it is asked.
pub(crate) fn answering(value: Value) -> Handler {
    Box::new(move |_, _| ToolCallOutcome {
        files: Default::default(),
        skills: Vec::new(),
        events: Vec::new(),
        result: Ok(ToolOutput {
            content: value.clone(),
            blocks: Vec::new(),
        }),
        writes: Vec::new(),
    })
}

/// Tools and hooks starting with `before` and a hook that, the first time it
/// judges a call, puts `after` (with no hooks) in force.
pub(crate) fn reloading(before: Arc<Functions>, after: Arc<Functions>) -> Arc<Reloads> {
    let reloads = Arc::new(Reloads(Mutex::new((
        before as Arc<dyn ToolSet>,
        Arc::new(NoHooks) as Arc<dyn HookSet>,
    ))));
    let replacement = (
        after as Arc<dyn ToolSet>,
        Arc::new(NoHooks) as Arc<dyn HookSet>,
    );
    let weak = Arc::downgrade(&reloads);
    let reload: Box<dyn FnOnce() + Send> = Box::new(move || {
        if let Some(reloads) = weak.upgrade() {
            *reloads.0.lock().unwrap() = replacement;
        }
    });
    reloads.0.lock().unwrap().1 = Arc::new(Reloading {
        reload: Mutex::new(Some(reload)),
    });
    reloads
}
