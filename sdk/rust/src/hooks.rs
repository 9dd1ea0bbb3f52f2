//! Hook plugins: code that runs at fixed points of the agent loop to judge,
//! filter or observe it. Each phase is a trait and an export macro, so a
//! component exports exactly the phases it implements:
//!
//! | Phase | Trait | Macro | Returns |
//! |---|---|---|---|
//! | before each model request | [`BeforeInference`] | [`export_before_inference!`](crate::export_before_inference) | [`InferenceVerdict`] |
//! | before each tool call | [`BeforeToolCall`] | [`export_before_tool_call!`](crate::export_before_tool_call) | [`Verdict`] |
//! | after each tool call | [`AfterToolCall`] | [`export_after_tool_call!`](crate::export_after_tool_call) | [`Observation`] |
//! | at the end of each step | [`StepEnd`] | [`export_step_end!`](crate::export_step_end) | nothing |
//!
//! ```ignore
//! use cordon_sdk::hooks::{BeforeToolCall, ToolCall, Verdict};
//!
//! struct NoDeletes;
//!
//! impl BeforeToolCall for NoDeletes {
//!     fn before_tool_call(call: ToolCall) -> Verdict {
//!         if call.name.ends_with(".delete") {
//!             Verdict::Deny("deleting is not allowed here".into())
//!         } else {
//!             Verdict::Allow
//!         }
//!     }
//! }
//!
//! cordon_sdk::export_before_tool_call!(NoDeletes);
//! ```
//!
//! The manifest lists the phases under `plugin.hooks`; the host calls only
//! those. Hooks reach state, logs, tools and configuration through the same
//! granted, typed wrappers as tools.

use serde_json::Value;

use crate::ToolError;

/// A tool call as a hook sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// Identifier of the call, unique within the run.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments: the model's, or an earlier hook's rewrite.
    pub args: Value,
}

/// A gate's verdict on a tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// No objection.
    Allow,
    /// Refuse the call, with the reason the model sees.
    Deny(String),
    /// Hold the call for a person's approval, with the reason they see.
    Ask(String),
    /// Run the call with these arguments instead; the host's policy judges them again.
    Rewrite(Value),
}

/// What the model observes of a finished call.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// The result as it is.
    Keep,
    /// This result instead.
    Replace(Result<Value, ToolError>),
}

/// The model request about to be made.
#[derive(Debug, Clone, PartialEq)]
pub struct Inference {
    /// The step about to run, counting from 1.
    pub step: u32,
    /// The conversation so far, as a JSON list of messages.
    pub messages: Value,
}

/// What should happen to a model request.
#[derive(Debug, Clone, PartialEq)]
pub enum InferenceVerdict {
    /// Make the request as it is.
    Proceed,
    /// Add this text to the instructions of this request.
    AddContext(String),
    /// Do not make the request; the run ends with this reason.
    Refuse(String),
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

/// A finished step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSummary {
    /// The step, counting model requests from 1.
    pub step: u32,
    /// Its tool calls, in the model's order.
    pub calls: Vec<(ToolCall, CallStatus)>,
    /// The final answer, when the step gave one.
    pub answer: Option<String>,
}

/// Runs before every model request.
pub trait BeforeInference {
    /// Judge the request.
    fn before_inference(request: Inference) -> InferenceVerdict;
}

/// Judges each tool call before it runs.
pub trait BeforeToolCall {
    /// Judge the call.
    fn before_tool_call(call: ToolCall) -> Verdict;
}

/// Sees each tool result before the model does.
pub trait AfterToolCall {
    /// Decide what the model observes of `result`.
    fn after_tool_call(call: ToolCall, result: Result<Value, ToolError>) -> Observation;
}

/// Observes every finished step; state writes it stages commit with the step.
pub trait StepEnd {
    /// Observe the step.
    fn step_end(summary: StepSummary);
}

/// Exports `$ty` as this component's [`BeforeInference`] hook.
#[macro_export]
macro_rules! export_before_inference {
    ($ty:ty) => {
        #[doc(hidden)]
        struct __CordonBeforeInference;

        impl $crate::__private::hooks::before_inference::Guest for __CordonBeforeInference {
            fn before_inference(
                request: $crate::__private::hooks::before_inference::Inference,
            ) -> $crate::__private::hooks::before_inference::InferenceVerdict {
                $crate::__private::hooks::run_before_inference::<$ty>(request)
            }
        }

        $crate::hook_bindings::before_inference::export_before_inference!(
            __CordonBeforeInference with_types_in $crate::hook_bindings::before_inference
        );
    };
}

/// Exports `$ty` as this component's [`BeforeToolCall`] hook.
#[macro_export]
macro_rules! export_before_tool_call {
    ($ty:ty) => {
        #[doc(hidden)]
        struct __CordonBeforeToolCall;

        impl $crate::__private::hooks::before_tool_call::Guest for __CordonBeforeToolCall {
            fn before_tool_call(
                call: $crate::__private::hooks::ToolCallWit,
            ) -> $crate::__private::hooks::before_tool_call::Verdict {
                $crate::__private::hooks::run_before_tool_call::<$ty>(call)
            }
        }

        $crate::hook_bindings::before_tool_call::export_before_tool_call!(
            __CordonBeforeToolCall with_types_in $crate::hook_bindings::before_tool_call
        );
    };
}

/// Exports `$ty` as this component's [`AfterToolCall`] hook.
#[macro_export]
macro_rules! export_after_tool_call {
    ($ty:ty) => {
        #[doc(hidden)]
        struct __CordonAfterToolCall;

        impl $crate::__private::hooks::after_tool_call::Guest for __CordonAfterToolCall {
            fn after_tool_call(
                call: $crate::__private::hooks::ToolCallWit,
                result: ::std::result::Result<
                    ::std::string::String,
                    $crate::__private::WitToolError,
                >,
            ) -> $crate::__private::hooks::after_tool_call::Observation {
                $crate::__private::hooks::run_after_tool_call::<$ty>(call, result)
            }
        }

        $crate::hook_bindings::after_tool_call::export_after_tool_call!(
            __CordonAfterToolCall with_types_in $crate::hook_bindings::after_tool_call
        );
    };
}

/// Exports `$ty` as this component's [`StepEnd`] hook.
#[macro_export]
macro_rules! export_step_end {
    ($ty:ty) => {
        #[doc(hidden)]
        struct __CordonStepEnd;

        impl $crate::__private::hooks::step_end::Guest for __CordonStepEnd {
            fn step_end(summary: $crate::__private::hooks::step_end::StepSummary) {
                $crate::__private::hooks::run_step_end::<$ty>(summary)
            }
        }

        $crate::hook_bindings::step_end::export_step_end!(
            __CordonStepEnd with_types_in $crate::hook_bindings::step_end
        );
    };
}

/// The glue the export macros expand to; not part of the public API.
#[doc(hidden)]
pub mod glue {
    use serde_json::Value;

    use super::{
        AfterToolCall, BeforeInference, BeforeToolCall, CallStatus, Inference, InferenceVerdict,
        Observation, StepEnd, StepSummary, ToolCall, Verdict,
    };
    use crate::ToolError;
    use crate::bindings::cordon::plugin::types::ToolError as WitToolError;
    pub use crate::hook_bindings::after_tool_call::exports::cordon::plugin::after_tool_call;
    pub use crate::hook_bindings::before_inference::exports::cordon::plugin::before_inference;
    pub use crate::hook_bindings::before_tool_call::cordon::plugin::hook_types::ToolCall as ToolCallWit;
    pub use crate::hook_bindings::before_tool_call::exports::cordon::plugin::before_tool_call;
    pub use crate::hook_bindings::step_end::exports::cordon::plugin::step_end;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or(Value::Null)
    }

    fn call_of(call: ToolCallWit) -> ToolCall {
        ToolCall {
            args: parse(&call.args),
            id: call.id,
            name: call.name,
        }
    }

    pub fn run_before_inference<T: BeforeInference>(
        request: before_inference::Inference,
    ) -> before_inference::InferenceVerdict {
        let request = Inference {
            step: request.step,
            messages: parse(&request.messages),
        };
        match T::before_inference(request) {
            InferenceVerdict::Proceed => before_inference::InferenceVerdict::Proceed,
            InferenceVerdict::AddContext(text) => {
                before_inference::InferenceVerdict::AddContext(text)
            }
            InferenceVerdict::Refuse(reason) => before_inference::InferenceVerdict::Refuse(reason),
        }
    }

    pub fn run_before_tool_call<T: BeforeToolCall>(call: ToolCallWit) -> before_tool_call::Verdict {
        match T::before_tool_call(call_of(call)) {
            Verdict::Allow => before_tool_call::Verdict::Allow,
            Verdict::Deny(reason) => before_tool_call::Verdict::Deny(reason),
            Verdict::Ask(reason) => before_tool_call::Verdict::Ask(reason),
            Verdict::Rewrite(args) => before_tool_call::Verdict::Rewrite(args.to_string()),
        }
    }

    pub fn run_after_tool_call<T: AfterToolCall>(
        call: ToolCallWit,
        result: Result<String, WitToolError>,
    ) -> after_tool_call::Observation {
        let result = result.map(|text| parse(&text)).map_err(ToolError::from);
        match T::after_tool_call(call_of(call), result) {
            Observation::Keep => after_tool_call::Observation::Keep,
            Observation::Replace(result) => after_tool_call::Observation::Replace(
                result
                    .map(|value| value.to_string())
                    .map_err(WitToolError::from),
            ),
        }
    }

    pub fn run_step_end<T: StepEnd>(summary: step_end::StepSummary) {
        let calls = summary
            .calls
            .into_iter()
            .map(|finished| {
                let status = match finished.status {
                    step_end::CallStatus::Succeeded => CallStatus::Succeeded,
                    step_end::CallStatus::Failed => CallStatus::Failed,
                    step_end::CallStatus::Denied => CallStatus::Denied,
                };
                (call_of(finished.call), status)
            })
            .collect();
        T::step_end(StepSummary {
            step: summary.step,
            calls,
            answer: summary.answer,
        });
    }
}
