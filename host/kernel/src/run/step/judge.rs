//! Judging a step's calls and asking about those the gate sends to a person.
//! The loop's calls, a served request's calls and a tool's own calls are all
//! judged by the gate and put to the approver the same way; they differ only
//! in what happens when nobody can answer now ([`NoAnswer`]): the run waits
//! ([`Wait`]), the request is withdrawn ([`Withdraw`]), or the calls are
//! denied, saying why ([`Deny`]).

use std::collections::BTreeMap;
use std::convert::Infallible;

use serde_json::Value;
use tracing::Instrument;

use crate::agent::AgentDef;
use crate::approval::{Approval, Approver};
use crate::commit::{PendingCall, PendingReason, ToolRecord};
use crate::gate;
use crate::hooks::HookSet;
use crate::merge::StepState;
use crate::message::{CallResult, ToolCall};
use crate::policy::{Decider, Decision, Verdict};
use crate::progress::{Observer, Progress, Trail};
use crate::run::RunError;
use crate::skills::ActiveSkills;
use crate::spans;
use crate::tool::{ToolAnnotations, ToolError, ToolErrorKind};

/// Who judges a step's calls, and where each decision shows.
pub(crate) struct Judge<'a> {
    pub(crate) agent: &'a AgentDef,
    /// The skills active as the step began.
    pub(crate) skills: &'a ActiveSkills,
    pub(crate) hooks: &'a dyn HookSet,
    /// Where the gate's audit events go.
    pub(crate) events: &'a dyn Trail,
    pub(crate) observer: &'a dyn Observer,
}

/// What a step knows of the tool a call names before judging it.
pub(crate) enum Offer {
    /// The gate judges the call, knowing the effects the tool declares.
    Judged(ToolAnnotations),
    /// The run does not offer the tool: the call is answered `not-found`
    /// and never reaches the gate.
    NotOffered,
}

/// What a step does with calls needing approval that nobody can answer now.
pub(crate) trait NoAnswer {
    /// What the step gets back instead of decided calls.
    type Held;

    /// The step's calls, `pending` among them with no answer.
    fn hold(
        self,
        records: Vec<ToolRecord>,
        pending: Vec<PendingCall>,
    ) -> Result<Vec<ToolRecord>, Self::Held>;
}

/// The run waits: the step runs the allowed calls and commits the rest as
/// waiting until a person decides (the loop).
pub(crate) struct Wait;

/// The calls of a step that waits, and those among them a person decides.
pub(crate) struct Waiting {
    pub(crate) records: Vec<ToolRecord>,
    pub(crate) pending: Vec<PendingCall>,
}

impl NoAnswer for Wait {
    type Held = Waiting;

    fn hold(
        self,
        records: Vec<ToolRecord>,
        pending: Vec<PendingCall>,
    ) -> Result<Vec<ToolRecord>, Waiting> {
        Err(Waiting { records, pending })
    }
}

/// Nothing runs and nothing commits: the requester asks a person and sends
/// the request again with the answers.
pub(crate) struct Withdraw;

impl NoAnswer for Withdraw {
    type Held = Vec<PendingCall>;

    fn hold(
        self,
        _records: Vec<ToolRecord>,
        pending: Vec<PendingCall>,
    ) -> Result<Vec<ToolRecord>, Vec<PendingCall>> {
        Err(pending)
    }
}

/// Each call nobody could answer is denied, and this says why (it follows
/// what asked: "permission rule `x` needs a person's approval, and ...").
pub(crate) struct Deny(pub(crate) &'static str);

impl NoAnswer for Deny {
    type Held = Infallible;

    fn hold(
        self,
        records: Vec<ToolRecord>,
        _pending: Vec<PendingCall>,
    ) -> Result<Vec<ToolRecord>, Infallible> {
        Ok(records
            .into_iter()
            .map(|record| denied_unanswered(record, self.0))
            .collect())
    }
}

/// Judge `calls` in order and ask `approver` about those the gate sends to
/// a person; `unanswered` says what happens when it cannot answer now. A call
/// whose arguments are not a JSON object, or that names a tool `offer` says
/// the run does not offer, is answered at once and never reaches the gate.
/// Fails only when a hook's writes cannot merge with the step's.
pub(crate) async fn judge_and_ask<N: NoAnswer>(
    judge: &Judge<'_>,
    step: &mut StepState,
    calls: Vec<ToolCall>,
    offer: impl Fn(&str) -> Offer,
    approver: &dyn Approver,
    unanswered: N,
) -> Result<Result<Vec<ToolRecord>, N::Held>, RunError> {
    let mut records = Vec::with_capacity(calls.len());
    for call in calls {
        let record = if let Some(record) = malformed(&call) {
            record
        } else {
            match offer(&call.name) {
                Offer::NotOffered => unoffered(call),
                Offer::Judged(annotations) => {
                    let (call, decision) = gate::judge(
                        judge.agent,
                        judge.skills,
                        judge.hooks,
                        judge.events,
                        step,
                        annotations,
                        call,
                    )
                    .await?;
                    judged(call, decision)
                }
            }
        };
        judge.observer.observe(Progress::ToolCall {
            call: record.call.clone(),
            decision: record.decision.clone(),
        });
        records.push(record);
    }
    Ok(ask(records, approver, unanswered).await)
}

/// Ask `approver` about the calls of `records` the gate sends to a person;
/// when it cannot answer them all now, `unanswered` says what happens.
pub(crate) async fn ask<N: NoAnswer>(
    mut records: Vec<ToolRecord>,
    approver: &dyn Approver,
    unanswered: N,
) -> Result<Vec<ToolRecord>, N::Held> {
    let pending: Vec<PendingCall> = records
        .iter()
        .filter(|record| record.decision.verdict == Verdict::Ask)
        .map(|record| PendingCall {
            call: record.call.clone(),
            reason: PendingReason::asked_by(&record.decision),
        })
        .collect();
    if pending.is_empty() {
        return Ok(records);
    }
    let span = spans::approval(pending.len());
    let answers = approver.decide(&pending).instrument(span.clone()).await;
    spans::approval_answered(&span, answers.as_deref());
    match answers {
        Some(answers) if answers.len() == pending.len() => {
            for (waiting, approval) in pending.iter().zip(answers) {
                answer(&mut records, &waiting.call.id, approval);
            }
            Ok(records)
        }
        _ => unanswered.hold(records, pending),
    }
}

/// Decisions on the calls sub-agents' runs wait on, by the id of the call
/// that delegated to each and the path below it.
pub(crate) type HandedDown = BTreeMap<String, BTreeMap<String, Approval>>;

/// Turn each pending call's decision, given by call id when a run resumes,
/// into an allow or deny verdict; a call whose sub-agent's run waits takes
/// the decisions under its path (`call-2-1/...`), to hand them down when it
/// runs again. A decision for a call that is not pending, or a pending call
/// with none, is refused and changes nothing.
pub(crate) fn apply_decisions(
    run_id: &str,
    mut records: Vec<ToolRecord>,
    pending: &[PendingCall],
    decisions: &BTreeMap<String, Approval>,
) -> Result<(Vec<ToolRecord>, HandedDown), RunError> {
    let wanted: Vec<String> = pending
        .iter()
        .flat_map(PendingCall::leaves)
        .map(|leaf| leaf.call.id)
        .collect();
    if let Some(unknown) = decisions.keys().find(|path| !wanted.contains(path)) {
        return Err(RunError::UnknownCall {
            run_id: run_id.to_owned(),
            call_id: unknown.clone(),
        });
    }
    if let Some(missing) = wanted.iter().find(|path| !decisions.contains_key(*path)) {
        return Err(RunError::MissingDecision {
            run_id: run_id.to_owned(),
            call_id: missing.clone(),
        });
    }
    let mut handed_down = HandedDown::new();
    for waiting in pending {
        let id = &waiting.call.id;
        if let PendingReason::Delegated { .. } = waiting.reason {
            let below = decisions
                .iter()
                .filter_map(|(path, approval)| {
                    let rest = path.strip_prefix(id.as_str())?.strip_prefix('/')?;
                    Some((rest.to_owned(), approval.clone()))
                })
                .collect();
            handed_down.insert(id.clone(), below);
        } else {
            answer(&mut records, id, decisions[id].clone());
        }
    }
    Ok((records, handed_down))
}

/// Record a person's `approval` of call `call_id` as its decision.
fn answer(records: &mut [ToolRecord], call_id: &str, approval: Approval) {
    if let Some(record) = records.iter_mut().find(|record| record.call.id == call_id) {
        let asked = record.decision.rule.take();
        record.decision = Decision::answered(approval, asked);
    }
}

/// A call that waited for approval nobody could give: denied, saying `why`
/// after what asked.
fn denied_unanswered(mut record: ToolRecord, why: &str) -> ToolRecord {
    if record.decision.verdict == Verdict::Ask {
        let asked = match (record.decision.by, &record.decision.rule) {
            (Decider::Policy, Some(rule)) => format!("permission rule `{rule}`"),
            (Decider::Policy, None) => "the default permission".to_owned(),
            (_, Some(reason)) => format!("the call ({reason})"),
            (_, None) => "the call".to_owned(),
        };
        record.result = Some(CallResult::Error(ToolError::new(
            ToolErrorKind::Denied,
            format!("{asked} {why}"),
        )));
        record.decision = Decision::by(Decider::Host, Verdict::Deny, format!("the call {why}"));
    }
    record
}

/// The record of `call`, judged `decision`, before it runs.
pub(crate) fn judged(call: ToolCall, decision: Decision) -> ToolRecord {
    ToolRecord {
        call,
        decision,
        result: None,
        children: Vec::new(),
        blocks: Vec::new(),
        timing: None,
    }
}

/// The record of `call`, not run for `why` and answered `invalid-input`
/// with `message`.
fn not_run(call: &ToolCall, why: &str, message: String) -> ToolRecord {
    ToolRecord {
        call: call.clone(),
        decision: Decision::by(Decider::Host, Verdict::Allow, format!("not run: {why}")),
        result: Some(CallResult::Error(ToolError::new(
            ToolErrorKind::InvalidInput,
            message,
        ))),
        children: Vec::new(),
        blocks: Vec::new(),
        timing: None,
    }
}

/// A call whose arguments are not a JSON object (a model that streamed broken
/// JSON), or whose id is empty or holds `/` (which joins the ids of a
/// sub-agent's waiting call's path), is answered with an `invalid-input`
/// error the model sees, and never reaches the gate or a tool.
pub(crate) fn malformed(call: &ToolCall) -> Option<ToolRecord> {
    if call.id.is_empty() || call.id.contains('/') {
        return Some(not_run(
            call,
            "the call's id is empty or holds `/`",
            format!(
                "the call's id {:?} is empty or holds `/`, which joins the ids of a sub-agent's calls; the call did not run",
                call.id
            ),
        ));
    }
    if call.args.is_object() {
        return None;
    }
    let raw = match &call.args {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    let shown: String = raw.chars().take(200).collect();
    Some(not_run(
        call,
        "the arguments are not a JSON object",
        format!(
            "the arguments for `{}` are not a JSON object: {shown}; call the tool again with a JSON object",
            call.name
        ),
    ))
}

/// A call naming a tool the run does not offer: answered at once.
fn unoffered(call: ToolCall) -> ToolRecord {
    let message = format!("no tool `{}` is offered to this run", call.name);
    ToolRecord {
        call,
        decision: Decision::by(
            Decider::Host,
            Verdict::Deny,
            "it is not offered to the run".into(),
        ),
        result: Some(CallResult::Error(ToolError::new(
            ToolErrorKind::NotFound,
            message,
        ))),
        children: Vec::new(),
        blocks: Vec::new(),
        timing: None,
    }
}
