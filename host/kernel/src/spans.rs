//! The spans the loop opens and the span events it raises, for whoever
//! listens through `tracing` (Cordon's OpenTelemetry export among them).
//! One room owns every name and attribute, so a trace reads the same from
//! every path a call takes: the loop's steps, a served request, a resumed run.
//!
//! Names and attributes follow OpenTelemetry's conventions for generative-AI
//! agents where one exists (`gen_ai.*`) and are Cordon's own (`cordon.*`)
//! where not. The values are those the step commit records, so a trace never
//! shows more than the store keeps: a call's arguments and result are
//! attached only when the runtime is told to keep them
//! ([`SpanContent::Kept`]), and then as committed (after the hooks that
//! rewrite arguments or redact results).
//!
//! With nobody listening, each span is a disabled handle and costs a check of
//! a cached interest.

use serde::Serialize;
use tracing::field::Empty;
use tracing::{Level, Span};

use crate::approval::Approval;
use crate::commit::Durability;
use crate::event::{Event, LimitKind};
use crate::hooks::HookPhase;
use crate::message::{CallResult, ToolCall};
use crate::policy::Decision;

/// The target of every span and span event the loop raises; a subscriber
/// filters on it.
pub const TARGET: &str = "cordon::trace";

/// The span names, which a subscriber deriving metrics from the spans keys on.
pub mod names {
    /// One drive of a run.
    pub const RUN: &str = "invoke_agent";
    /// A served MCP request.
    pub const SERVED_CALL: &str = "tools/call";
    /// A model step of a run.
    pub const STEP: &str = "step";
    /// A request to the model.
    pub const MODEL: &str = "chat";
    /// One tool call, from its verdict to what the model observes of it.
    pub const TOOL_CALL: &str = "execute_tool";
    /// One hook's run in one phase.
    pub const HOOK: &str = "hook";
    /// A wait for a person's decision on calls.
    pub const APPROVAL: &str = "approval";
    /// A step's commit to the store.
    pub const COMMIT: &str = "commit";
    /// The span event of an audit event.
    pub const AUDIT: &str = "audit";
    /// The span event of a skill's activation.
    pub const SKILL: &str = "skill-activated";
}

/// Whether spans carry a call's arguments and result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SpanContent {
    /// They do not: a trace says what was called and how it went, never
    /// with what (the default).
    #[default]
    Omitted,
    /// They do, as the step commit records them.
    Kept,
}

/// The span of one drive of a run, from its start or resumption until it
/// waits or ends; the embedder opens it around the loop and names the run
/// with [`run_named`] once it knows it. Everything the loop does nests
/// under it.
pub fn run() -> Span {
    tracing::info_span!(
        target: TARGET,
        "invoke_agent",
        otel.name = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = Empty,
        cordon.run.id = Empty,
    )
}

/// Name the run `span` drives: run `run_id` of `agent`.
pub fn run_named(span: &Span, agent: &str, run_id: &str) {
    span.record("otel.name", format!("invoke_agent {agent}"));
    span.record("gen_ai.agent.name", agent);
    span.record("cordon.run.id", run_id);
}

/// The span of a served MCP request calling `tool`, under the client's
/// trace when the request carries one.
pub fn served_call(tool: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "tools/call",
        otel.name = format!("tools/call {tool}"),
        otel.kind = "server",
        rpc.system = "jsonrpc",
        rpc.method = "tools/call",
        gen_ai.tool.name = tool,
    )
}

/// The span of model step `number` of run `run_id`.
pub(crate) fn step(run_id: &str, number: u32) -> Span {
    tracing::info_span!(
        target: TARGET,
        "step",
        otel.name = format!("step {number}"),
        cordon.run.id = run_id,
        cordon.step = number,
    )
}

/// The span of a request to the model; [`model_answered`] completes it.
pub(crate) fn model(name: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "chat",
        otel.name = format!("chat {name}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.request.model = name,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.response.tool_calls = Empty,
        otel.status_code = Empty,
        error.type = Empty,
    )
}

/// What the model answered: its tokens and how many calls it asked for.
pub(crate) fn model_answered(span: &Span, input_tokens: u64, output_tokens: u64, calls: usize) {
    span.record("gen_ai.usage.input_tokens", input_tokens);
    span.record("gen_ai.usage.output_tokens", output_tokens);
    span.record("gen_ai.response.tool_calls", calls);
}

/// The model request failed with `error`.
pub(crate) fn model_failed(span: &Span, error: &dyn std::fmt::Display) {
    span.record("otel.status_code", "error");
    span.record("error.type", error.to_string());
}

/// The span of `call`, judged by `decision`; [`call_ended`] completes it,
/// and the tool set that runs it names its component with [`component`].
pub(crate) fn tool_call(call: &ToolCall, decision: &Decision) -> Span {
    tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = format!("execute_tool {}", call.name),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = call.name.as_str(),
        gen_ai.tool.call.id = call.id.as_str(),
        cordon.verdict = %decision.verdict,
        cordon.rule = decision.rule.as_deref(),
        cordon.bundle = Empty,
        cordon.component.digest = Empty,
        cordon.outcome = Empty,
        cordon.limit = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        otel.status_code = Empty,
    )
}

/// Name the component serving the current call: its bundle (asked only
/// when a span listens) and the SHA-256 of its component. A tool set calls
/// this as it starts a call; outside a call's span it records nothing.
pub fn component(bundle: impl FnOnce() -> String, digest: &str) {
    let span = Span::current();
    if !span.is_disabled() {
        span.record("cordon.bundle", bundle());
        span.record("cordon.component.digest", digest);
    }
}

/// What `call` came to, as the model observes it: `ok`, or its error's kind;
/// with its arguments and result when `content` keeps them.
pub(crate) fn call_ended(span: &Span, call: &ToolCall, result: &CallResult, content: SpanContent) {
    if span.is_disabled() {
        return;
    }
    match result {
        CallResult::Output(_) => span.record("cordon.outcome", "ok"),
        CallResult::Error(error) => {
            span.record("otel.status_code", "error");
            span.record("cordon.outcome", error.kind.as_str())
        }
    };
    if content == SpanContent::Kept {
        span.record(
            "gen_ai.tool.call.arguments",
            serde_json::to_string(&call.args).unwrap_or_default(),
        );
        let result = match result {
            CallResult::Output(value) => serde_json::to_string(value),
            CallResult::Error(error) => serde_json::to_string(error),
        };
        span.record("gen_ai.tool.call.result", result.unwrap_or_default());
    }
}

/// The span of `call`, which the gate denied and which never ran, with a
/// `denied` event saying what decided.
pub(crate) fn call_denied(
    call: &ToolCall,
    decision: &Decision,
    result: &CallResult,
    content: SpanContent,
) {
    let span = tool_call(call, decision);
    if span.is_disabled() {
        return;
    }
    span.in_scope(|| {
        tracing::event!(
            name: "audit",
            target: TARGET,
            Level::INFO,
            cordon.event = "denied",
            cordon.capability = "tool-call",
            gen_ai.tool.name = call.name.as_str(),
            cordon.decider = kebab(&decision.by),
            cordon.rule = decision.rule.as_deref(),
            "denied",
        );
    });
    call_ended(&span, call, result, content);
}

/// The span of hook `bundle` in `phase`, for the call `call_id` in the
/// tool-call phases.
pub(crate) fn hook(bundle: &str, phase: HookPhase, call_id: Option<&str>) -> Span {
    let phase = kebab(&phase);
    tracing::info_span!(
        target: TARGET,
        "hook",
        otel.name = format!("hook {phase} {bundle}"),
        cordon.hook.bundle = bundle,
        cordon.hook.phase = phase,
        gen_ai.tool.call.id = call_id,
    )
}

/// The span of a wait for a person's decision on `calls` calls.
pub(crate) fn approval(calls: usize) -> Span {
    tracing::info_span!(
        target: TARGET,
        "approval",
        cordon.approval.calls = calls,
        cordon.approval.approved = Empty,
        cordon.approval.denied = Empty,
        cordon.approval.answered = Empty,
    )
}

/// What the person answered: `None` when nobody answered now.
pub(crate) fn approval_answered(span: &Span, answers: Option<&[Approval]>) {
    let Some(answers) = answers else {
        span.record("cordon.approval.answered", false);
        return;
    };
    let approved = answers
        .iter()
        .filter(|answer| matches!(answer, Approval::Approve))
        .count();
    span.record("cordon.approval.answered", true);
    span.record("cordon.approval.approved", approved);
    span.record("cordon.approval.denied", answers.len() - approved);
}

/// The span of commit `seq` of run `run_id`, kept as far as `durability` says.
pub(crate) fn commit(run_id: &str, seq: u64, durability: Durability) -> Span {
    tracing::info_span!(
        target: TARGET,
        "commit",
        cordon.run.id = run_id,
        cordon.commit.seq = seq,
        cordon.durability = match durability {
            Durability::Disk => "disk",
            Durability::Process => "process",
        },
        otel.status_code = Empty,
    )
}

/// The commit failed.
pub(crate) fn commit_failed(span: &Span) {
    span.record("otel.status_code", "error");
}

/// Raise `event` on the current span when a trace shows it: a denial, a
/// limit, a skill denied or dropped, a failed hook. Logs and progress stay
/// out of traces.
pub(crate) fn audit(event: &Event) {
    match event {
        Event::Denied(denial) => tracing::event!(
            name: "audit",
            target: TARGET,
            Level::INFO,
            cordon.event = "denied",
            cordon.bundle = denial.bundle.as_str(),
            cordon.capability = kebab(&denial.capability),
            cordon.target = denial.target.as_str(),
            cordon.reason = denial.reason.as_str(),
            "denied",
        ),
        Event::LimitExceeded {
            bundle,
            tool,
            limit,
            detail,
        } => {
            // The call's span, when this is its limit, names it too.
            Span::current().record("cordon.limit", kebab(limit));
            limit_exceeded(bundle, tool, *limit, detail);
        }
        Event::SkillDenied {
            skill,
            call_id,
            tool,
            reason,
        } => tracing::event!(
            name: "audit",
            target: TARGET,
            Level::INFO,
            cordon.event = "skill-denied",
            cordon.skill = skill.as_str(),
            gen_ai.tool.call.id = call_id.as_str(),
            gen_ai.tool.name = tool.as_str(),
            cordon.reason = reason.as_str(),
            "skill-denied",
        ),
        Event::SkillDropped { skill, reason } => tracing::event!(
            name: "audit",
            target: TARGET,
            Level::INFO,
            cordon.event = "skill-dropped",
            cordon.skill = skill.as_str(),
            cordon.reason = reason.as_str(),
            "skill-dropped",
        ),
        Event::HookFailed {
            bundle,
            phase,
            error,
            ..
        } => tracing::event!(
            name: "audit",
            target: TARGET,
            Level::INFO,
            cordon.event = "hook-failed",
            cordon.hook.bundle = bundle.as_str(),
            cordon.hook.phase = kebab(phase),
            cordon.reason = %error,
            "hook-failed",
        ),
        Event::Log { .. }
        | Event::Progress { .. }
        | Event::ArgumentsRewritten { .. }
        | Event::ObservationReplaced { .. }
        | Event::ContextAdded { .. } => {}
    }
}

/// The `limit-exceeded` span event.
fn limit_exceeded(bundle: &str, tool: &str, limit: LimitKind, detail: &str) {
    tracing::event!(
        name: "audit",
        target: TARGET,
        Level::INFO,
        cordon.event = "limit-exceeded",
        cordon.bundle = bundle,
        cordon.limit = kebab(&limit),
        gen_ai.tool.name = tool,
        cordon.reason = detail,
        "limit-exceeded",
    );
}

/// Raise the activation of `skill` on the current span.
pub(crate) fn skill_activated(skill: &str) {
    tracing::event!(
        name: "skill-activated",
        target: TARGET,
        Level::INFO,
        cordon.event = "skill-activated",
        cordon.skill = skill,
        "skill-activated",
    );
}

/// A closed enum's name as the store writes it (`before-tool-call`).
fn kebab(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}
