//! Running a step's allowed calls: recorded first as an intent (when a crash
//! could otherwise hide that they started), then run concurrently, each with
//! a gate for the calls its tool makes; then, in the model's call order, each
//! one's state writes, file changes and activations are admitted into the
//! step and its result passes the after-tool-call hooks.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use serde_json::Value;
use tracing::{Instrument, Span};

use crate::agent::AgentDef;
use crate::commit::{CallTiming, Intent, PendingCall, PendingReason, ToolRecord};
use crate::delegation::{
    self,
    child::{Delegated, Delegation},
};
use crate::event::{Event, LimitKind};
use crate::files::FileWrites;
use crate::hooks::HookPhase;
use crate::merge::{Refusal, StepState, Writer};
use crate::message::{CallResult, Message, ToolCall};
use crate::nested::{CallGate, StepCalls, StepPorts};
use crate::phases;
use crate::policy::Verdict;
use crate::progress::Trail;
use crate::requester::Requester;
use crate::run::{Cursor, Intents, RunError, Runtime};
use crate::skills::SkillActivation;
use crate::spans;
use crate::state::StateWrite;
use crate::tool::{Reach, ToolCallOutcome, ToolError, ToolErrorKind};

/// What one of a step's calls came to.
enum Ran {
    /// It ran, or was refused before it could.
    Tool(ToolCallOutcome),
    /// It delegated to a sub-agent whose run waits on calls of its own.
    Waiting {
        run_id: String,
        pending: Vec<PendingCall>,
    },
}

/// One of a step's calls, running.
type RunningCall<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Ran, RunError>> + Send + 'a>>;

impl Runtime {
    /// Whether a call of `name` lost to a crash left nothing an intent would
    /// have to own up to, because the host grants it nothing that acts past
    /// the step ([`Reach::Outcome`]) or its tool is vouched read-only or
    /// idempotent: a served call of it needs no intent, and one an
    /// interrupted step recorded runs again on resume. Its spec is read only
    /// when the grants do not decide.
    /// A delegation to one of `agent`'s sub-agents leaves none either: its
    /// run's calls record their own intents, and running it again goes on
    /// with that run from its last commit.
    pub(crate) fn leaves_no_trace(&self, agent: &AgentDef, name: &str) -> bool {
        delegation::spec::sub_agent(agent, name).is_some()
            || self.tools.reach(name) == Reach::Outcome
            || self
                .tools
                .spec(name)
                .is_some_and(|spec| spec.annotations.repeatable())
    }

    /// Run the allowed calls of `records` that have no result yet
    /// concurrently, each with a gate for the calls its tool makes; then, in
    /// the model's call order, admit the writes of each one's nested hooks and
    /// its own, pass its result through the after-tool-call hooks, and record
    /// its nested calls as its children. The calls are recorded as an intent
    /// first, so a crash cannot hide that they started. A call delegating
    /// to a sub-agent whose run waits on calls of its own is left without a
    /// result and returned, waiting.
    pub(crate) async fn run_calls(
        &self,
        cursor: &mut Cursor,
        assistant: Option<&Message>,
        records: &mut [ToolRecord],
        step: &mut StepState,
        requester: &Requester,
    ) -> Result<Vec<PendingCall>, RunError> {
        let runnable: Vec<usize> = records
            .iter()
            .enumerate()
            .filter(|(_, record)| {
                record.result.is_none() && record.decision.verdict == Verdict::Allow
            })
            .map(|(index, _)| index)
            .collect();
        if runnable.is_empty() {
            return Ok(Vec::new());
        }
        let agent = Arc::clone(step.agent());
        let effects = || {
            runnable
                .iter()
                .any(|&index| !self.leaves_no_trace(&agent, &records[index].call.name))
        };
        if self.intents == Intents::Always || effects() {
            self.store
                .record_intent(
                    &Intent {
                        run_id: cursor.run_id.clone(),
                        seq: cursor.seq + 1,
                        assistant: assistant.cloned(),
                        calls: records.to_vec(),
                    },
                    self.intents.durability(),
                )
                .await?;
        }
        let view = step.view();
        let nested = StepCalls::new(
            StepPorts {
                agent: Arc::clone(step.agent()),
                skills: Arc::clone(step.skills()),
                tools: Arc::clone(&self.tools),
                hooks: Arc::clone(&self.hooks),
                live: Arc::clone(self.events.live()),
                approver: Arc::clone(&self.approver),
                observer: Arc::clone(&self.observer),
                requester: requester.clone(),
                // A sub-agent's file rules, with its ancestors', hold for its
                // calls beside those the host holds for every call.
                rules: self
                    .link()
                    .map(|_| Arc::new(agent.permissions.files().clone())),
            },
            step,
        );
        let gates: Vec<Arc<CallGate>> = runnable
            .iter()
            .map(|&index| CallGate::top(&nested, &records[index].call.id))
            .collect();
        let spans: Vec<Span> = runnable
            .iter()
            .map(|&index| spans::tool_call(&records[index].call, &records[index].decision))
            .collect();
        let underlay = self.files.underlay();
        let mut handed_down = std::mem::take(&mut cursor.handed_down);
        let rerun = std::mem::take(&mut cursor.again);
        let skills = Arc::clone(step.skills());
        let (run_id, seq) = (cursor.run_id.clone(), cursor.seq + 1);
        let thread = cursor.thread.clone();
        let mut children = 0;
        let calls: Vec<RunningCall<'_>> = runnable
            .iter()
            .zip(&gates)
            .zip(&spans)
            .map(|((&index, gate), span)| {
                let call = &records[index].call;
                let Some(name) = delegation::spec::sub_agent(&agent, &call.name) else {
                    // The tool set names its component while the call's span
                    // is current.
                    let outcome = span.in_scope(|| {
                        self.tools.call(
                            &call.name,
                            call.args.clone(),
                            gate.context(Arc::clone(&view), Arc::clone(&underlay)),
                        )
                    });
                    return Box::pin(
                        async move { Ok(Ran::Tool(outcome.await)) }.instrument(span.clone()),
                    ) as RunningCall;
                };
                children += 1;
                let limit = agent.delegation.max_children_per_step;
                if children > limit {
                    let refused = delegation::child::over_limit(
                        call,
                        "max-children-per-step",
                        format!("the step calls more than {limit} sub-agents at once"),
                    );
                    return Box::pin(async move { Ok(Ran::Tool(refused)) });
                }
                let delegated = self.delegate(Delegation {
                    parent: &agent,
                    name,
                    run_id: &run_id,
                    seq,
                    call,
                    decisions: handed_down.remove(&call.id).unwrap_or_default(),
                    state: Arc::clone(&view),
                    again: rerun.contains(&call.id),
                    skills: Arc::clone(&skills),
                    thread: &thread,
                });
                Box::pin(
                    async move {
                        Ok(match delegated.await? {
                            Delegated::Done(outcome) => Ran::Tool(outcome),
                            Delegated::Waiting { run_id, pending } => {
                                Ran::Waiting { run_id, pending }
                            }
                        })
                    }
                    .instrument(span.clone()),
                )
            })
            .collect();
        // Each call's clock starts when it is first polled, so calls run at
        // once show as overlapping.
        let timed = calls.into_iter().map(|call| async move {
            let (wall, clock) = (SystemTime::now(), Instant::now());
            let ran = call.await;
            (ran, CallTiming::since(wall, clock))
        });
        let outcomes = futures_util::future::join_all(timed).await;
        let mut waiting = Vec::new();
        // Each call's span ends with what the model observes of it.
        for (((index, (ran, timing)), gate), span) in
            runnable.iter().zip(outcomes).zip(&gates).zip(spans)
        {
            records[*index].timing = Some(timing);
            let call = &records[*index].call;
            let outcome = match ran? {
                Ran::Tool(outcome) => outcome,
                Ran::Waiting { run_id, pending } => {
                    waiting.push(PendingCall {
                        call: call.clone(),
                        reason: PendingReason::Delegated { run_id, pending },
                    });
                    continue;
                }
            };
            span.in_scope(|| {
                self.events.record(outcome.events);
                self.events.record(gate.take_events());
            });
            let mut blocks = Vec::new();
            let mut result = match outcome.result {
                Ok(output) => {
                    blocks = output.blocks;
                    Ok((
                        output.content,
                        outcome.writes,
                        outcome.files,
                        outcome.skills,
                    ))
                }
                Err(error) => Err(error),
            };
            for batch in nested.take_batches(&call.id) {
                match step.admit(batch.writer, batch.writes) {
                    Ok(()) => {}
                    Err(Refusal::Conflict(conflict)) => return Err(conflict.into()),
                    Err(Refusal::Rejected(reason)) => {
                        result = Err(ToolError::new(ToolErrorKind::Failed, reason));
                    }
                }
            }
            let result = match result {
                Ok((content, writes, files, skills)) => {
                    match span.in_scope(|| self.admit_call(step, call, writes, files, skills))? {
                        Ok(None) => CallResult::Output(content),
                        Ok(Some(again)) => CallResult::Output(again),
                        Err(error) => CallResult::Error(error),
                    }
                }
                Err(error) => CallResult::Error(error),
            };
            let observed = phases::observe(
                self.hooks.as_ref(),
                self.events.as_ref(),
                step,
                call,
                result,
            )
            .instrument(span.clone())
            .await?;
            spans::call_ended(&span, call, &observed, self.span_content);
            records[*index].children = gate.take_children();
            // A hook that judged the result saw its JSON alone, so it cannot
            // vouch for blocks it never saw: they reach no one.
            let judged = !self.hooks.handlers(HookPhase::AfterToolCall).is_empty();
            if matches!(observed, CallResult::Output(_)) && !judged {
                records[*index].blocks = blocks;
            }
            records[*index].result = Some(observed);
        }
        Ok(waiting)
    }

    /// Admit the state writes, file changes and activations of `call`, which
    /// succeeded, into the step. Writes the agent's declarations refuse, or
    /// changes past the workspace's staging quota, fail the call alone and
    /// leave nothing of it; two calls changing one key or path fail the
    /// step. A call that activated a skill an earlier call of the step
    /// activated already is answered with what the model sees instead, so
    /// a skill's instructions are injected once.
    fn admit_call(
        &self,
        step: &mut StepState,
        call: &ToolCall,
        writes: Vec<StateWrite>,
        files: FileWrites,
        skills: Vec<SkillActivation>,
    ) -> Result<Result<Option<Value>, ToolError>, RunError> {
        if !files.is_empty()
            && let Err(quota) = self.files.fits(step.files(), &files)
        {
            self.events.emit(Event::LimitExceeded {
                bundle: quota.bundle,
                tool: call.name.clone(),
                limit: LimitKind::Staging,
                detail: quota.detail.clone(),
            });
            return Ok(Err(ToolError::new(ToolErrorKind::Limit, quota.detail)));
        }
        let writer = Writer::Tool {
            call_id: call.id.clone(),
            tool: call.name.clone(),
        };
        match step.admit(writer.clone(), writes) {
            Ok(()) => {}
            Err(Refusal::Rejected(reason)) => {
                return Ok(Err(ToolError::new(ToolErrorKind::Failed, reason)));
            }
            Err(Refusal::Conflict(conflict)) => return Err(conflict.into()),
        }
        step.admit_files(writer, files)?;
        let activated: Vec<String> = skills
            .iter()
            .map(|activation| activation.skill.clone())
            .collect();
        let again = step.admit_skills(&call.id, skills);
        for skill in activated.iter().filter(|skill| !again.contains(skill)) {
            spans::skill_activated(skill);
        }
        Ok(Ok((!again.is_empty()).then(|| {
            serde_json::json!({
                "skills": again,
                "status": "already active: its instructions are in the conversation above",
            })
        })))
    }
}
