//! A run's tools and hooks behind one swap, so a long-lived host (the MCP
//! server) can take in a plugins folder that changed without restarting the
//! run: each call and each hook phase takes the set current when it starts
//! and keeps it to its end, and a swap replaces tools and hooks together.

use std::sync::{Arc, RwLock};

use cordon_kernel::{
    CallContext, CallResult, GateVerdict, HookFuture, HookPhase, HookSet, InferenceRequest,
    InferenceVerdict, Observation, Reach, StateReader, StepSummary, ToolCall, ToolFuture, ToolSet,
    ToolSpec,
};

/// The tools and hooks in force.
#[derive(Clone)]
pub struct Current {
    /// Every tool offered.
    pub tools: Arc<dyn ToolSet>,
    /// The hooks, in order.
    pub hooks: Arc<dyn HookSet>,
}

/// Tools and hooks that can be replaced while a run goes on.
pub struct LiveSet {
    current: RwLock<Current>,
}

impl LiveSet {
    /// A set starting with `current`.
    pub fn new(current: Current) -> Self {
        Self {
            current: RwLock::new(current),
        }
    }

    /// The set in force now.
    pub fn current(&self) -> Current {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Put `next` in force for every call and hook phase starting after.
    pub fn swap(&self, next: Current) {
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = next;
    }
}

impl ToolSet for LiveSet {
    fn specs(&self) -> Vec<ToolSpec> {
        self.current().tools.specs()
    }

    fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.current().tools.spec(name)
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        args: serde_json::Value,
        context: CallContext,
    ) -> ToolFuture<'a> {
        let tools = self.current().tools;
        Box::pin(async move { tools.call(name, args, context).await })
    }

    fn reach(&self, name: &str) -> Reach {
        self.current().tools.reach(name)
    }
}

impl HookSet for LiveSet {
    fn handlers(&self, phase: HookPhase) -> Vec<String> {
        self.current().hooks.handlers(phase)
    }

    fn before_inference<'a>(
        &'a self,
        hook: &'a str,
        request: &'a InferenceRequest,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, InferenceVerdict> {
        let hooks = self.current().hooks;
        Box::pin(async move { hooks.before_inference(hook, request, state).await })
    }

    fn before_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, GateVerdict> {
        let hooks = self.current().hooks;
        Box::pin(async move { hooks.before_tool_call(hook, call, state).await })
    }

    fn after_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        result: &'a CallResult,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, Observation> {
        let hooks = self.current().hooks;
        Box::pin(async move { hooks.after_tool_call(hook, call, result, state).await })
    }

    fn step_end<'a>(
        &'a self,
        hook: &'a str,
        summary: &'a StepSummary,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, ()> {
        let hooks = self.current().hooks;
        Box::pin(async move { hooks.step_end(hook, summary, state).await })
    }
}
