//! The loop proper: one model step after another until the run waits or
//! ends. Each step asks the model ([`Runtime::turn`]), then passes the calls
//! it asked for through the judge-and-ask routine every step shares; the
//! allowed calls run and the step commits, or the step commits as waiting
//! when a person must decide.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tracing::Instrument;

use super::step::judge::{Deny, Judge, Offer, Wait, Waiting, judge_and_ask};
use super::{Cursor, RunError, RunOutcome, Runtime};
use crate::agent::AgentDef;
use crate::commit::{Disposition, EndCause};
use crate::delegation::budget::TreeBudget;
use crate::event::{Event, LimitKind};
use crate::hooks::{HookPhase, InferenceRequest, StepSummary};
use crate::merge::{StepEffects, StepState};
use crate::message::{Message, ToolCall};
use crate::model::{ModelDelta, ModelRequest};
use crate::phases::{self, Inference};
use crate::progress::{Progress, Trail};
use crate::requester::Requester;
use crate::spans;
use crate::tool::ToolSpec;

/// Why a sub-agent of a served call denies what it would ask about.
const SERVED_CANNOT_WAIT: &str =
    "needs a person's approval, and a sub-agent of a served call cannot wait for one";

/// What one model step came to.
enum Turn {
    /// The run ended: cancelled, out of steps, refused by a hook, failed by
    /// the model, or answered.
    Over(RunOutcome),
    /// The model asked for calls.
    Calls(Box<Calls>),
}

/// The calls a model step asked for, and the step they belong to.
struct Calls {
    /// The model's turn, as the step commits it.
    assistant: Message,
    calls: Vec<ToolCall>,
    /// The tools the step offered.
    offered: Vec<ToolSpec>,
    step: StepState,
}

impl Runtime {
    /// The loop, from `cursor` until the run waits or ends, with the tools
    /// and hooks in force when it starts.
    pub(super) async fn drive(
        &self,
        agent: &Arc<AgentDef>,
        cursor: Cursor,
    ) -> Result<RunOutcome, RunError> {
        self.pinned().steps(agent, cursor).await
    }

    async fn steps(
        &self,
        agent: &Arc<AgentDef>,
        mut cursor: Cursor,
    ) -> Result<RunOutcome, RunError> {
        loop {
            let span = spans::step(&cursor.run_id, cursor.model_steps() + 1);
            if let Some(outcome) = self.step(agent, &mut cursor).instrument(span).await? {
                return Ok(outcome);
            }
        }
    }

    /// One model step of the run at `cursor`: the model's turn, its calls
    /// judged, asked about, run and committed. Returns where the run stands
    /// when it waits or ends with the step, `None` when it goes on.
    async fn step(
        &self,
        agent: &Arc<AgentDef>,
        cursor: &mut Cursor,
    ) -> Result<Option<RunOutcome>, RunError> {
        let Calls {
            assistant,
            calls,
            offered,
            mut step,
        } = match self.turn(agent, cursor).await? {
            Turn::Over(outcome) => return Ok(Some(outcome)),
            Turn::Calls(calls) => *calls,
        };
        let judge = Judge {
            agent,
            skills: &cursor.skills,
            hooks: self.hooks.as_ref(),
            events: self.events.as_ref(),
            observer: self.observer.as_ref(),
        };
        // A tool the step did not offer is judged all the same: the
        // agent's list and policy answer for it.
        let offer = |name: &str| {
            Offer::Judged(
                offered
                    .iter()
                    .find(|spec| spec.name == name)
                    .map(|spec| spec.annotations)
                    .unwrap_or_default(),
            )
        };
        let judged = if self.waits() {
            judge_and_ask(
                &judge,
                &mut step,
                calls,
                offer,
                self.approver.as_ref(),
                Wait,
            )
            .await?
        } else {
            let judged = judge_and_ask(
                &judge,
                &mut step,
                calls,
                offer,
                self.approver.as_ref(),
                Deny(SERVED_CANNOT_WAIT),
            );
            let Ok(records) = judged.await?;
            Ok(records)
        };
        match judged {
            Ok(records) => {
                self.execute(
                    cursor,
                    Some(assistant),
                    records,
                    step,
                    &Requester::default(),
                )
                .await
            }
            Err(waiting) => Ok(Some(self.wait(cursor, assistant, waiting, step).await?)),
        }
    }

    /// Ask the model for the next step of the run at `cursor`, unless the
    /// run is cancelled, out of steps, or refused by a before-inference hook.
    /// A reply with no calls ends the run with its answer.
    async fn turn(&self, agent: &Arc<AgentDef>, cursor: &mut Cursor) -> Result<Turn, RunError> {
        if self.cancelled.load(Ordering::SeqCst) {
            return self.over(cursor, EndCause::Cancelled).await;
        }
        let taken = cursor.model_steps();
        if taken >= agent.max_steps {
            return self.over(cursor, EndCause::MaxSteps).await;
        }
        if let Some(spent) = self.budget().and_then(TreeBudget::reached) {
            self.events.emit(Event::LimitExceeded {
                bundle: "agent".into(),
                tool: agent.name.clone(),
                limit: LimitKind::Delegation,
                detail: spent.described(),
            });
            return self.over(cursor, EndCause::Limit(spent.described())).await;
        }
        let last_step = taken + 1 == agent.max_steps;
        let offered: Vec<ToolSpec> = if last_step {
            Vec::new()
        } else {
            self.offered(agent, cursor)
        };
        let mut step = cursor.step(agent);
        let context = match self.before_inference(cursor, taken + 1, &mut step).await? {
            Inference::Proceed { context } => context,
            Inference::Refused { hook, reason } => {
                return self.over(cursor, EndCause::Refused { hook, reason }).await;
            }
        };
        let instructions = if context.is_empty() {
            agent.instructions.clone()
        } else {
            format!("{}\n\n{}", agent.instructions, context.join("\n\n"))
        };
        let observer = Arc::clone(&self.observer);
        let deltas = move |delta: ModelDelta| match delta {
            ModelDelta::Text(text) => observer.observe(Progress::Text(text)),
            ModelDelta::Restart => observer.observe(Progress::Restarted),
            ModelDelta::Retrying(retry) => observer.observe(Progress::Retrying(retry)),
        };
        let visible = visible_state(agent, &cursor.state);
        let request = ModelRequest {
            instructions: &instructions,
            messages: &cursor.messages,
            tools: &offered,
            state: visible.as_ref(),
        };
        let span = spans::model(self.model.name());
        let response = match self
            .model
            .complete(request, &deltas)
            .instrument(span.clone())
            .await
        {
            Ok(response) => response,
            Err(error) => {
                spans::model_failed(&span, &error);
                return self.over(cursor, EndCause::Error(error.to_string())).await;
            }
        };
        let usage = response.usage;
        spans::model_answered(
            &span,
            usage.input_tokens,
            usage.output_tokens,
            response.tool_calls.len(),
        );
        drop(span);
        if let Some(budget) = self.budget() {
            budget.spend(usage.input_tokens + usage.output_tokens);
        }
        cursor.usage = Some(usage);
        let calls = if last_step {
            Vec::new()
        } else {
            response.tool_calls
        };
        let assistant = Message::Assistant {
            text: response.text.clone(),
            tool_calls: calls.clone(),
        };
        if !calls.is_empty() {
            return Ok(Turn::Calls(Box::new(Calls {
                assistant,
                calls,
                offered,
                step,
            })));
        }
        let cause = if last_step {
            EndCause::MaxSteps
        } else {
            EndCause::FinalAnswer
        };
        let summary = StepSummary {
            step: taken + 1,
            calls: Vec::new(),
            answer: Some(response.text.clone()),
        };
        phases::step_end(
            self.hooks.as_ref(),
            self.events.as_ref(),
            &mut step,
            &summary,
        )
        .await?;
        let effects = step.into_effects();
        let outcome = self
            .end(cursor, vec![assistant], effects, cause, Some(response.text))
            .await?;
        Ok(Turn::Over(outcome))
    }

    /// End the run at `cursor` for `cause` with a step of its own.
    async fn over(&self, cursor: &mut Cursor, cause: EndCause) -> Result<Turn, RunError> {
        let outcome = self
            .end(cursor, Vec::new(), StepEffects::default(), cause, None)
            .await?;
        Ok(Turn::Over(outcome))
    }

    /// Run the allowed calls of a step whose other calls wait for a person,
    /// and commit the step as waiting.
    async fn wait(
        &self,
        cursor: &mut Cursor,
        assistant: Message,
        waiting: Waiting,
        mut step: StepState,
    ) -> Result<RunOutcome, RunError> {
        let Waiting {
            mut records,
            mut pending,
        } = waiting;
        let delegated = self
            .run_calls(
                cursor,
                Some(&assistant),
                &mut records,
                &mut step,
                &Requester::default(),
            )
            .await?;
        pending.extend(delegated);
        self.commit(
            cursor,
            vec![assistant],
            records,
            step.into_effects(),
            Disposition::Waiting {
                pending: pending.clone(),
            },
        )
        .await?;
        Ok(RunOutcome::Waiting {
            run_id: cursor.run_id.clone(),
            pending,
        })
    }

    /// Run the before-inference hooks for model step `number`.
    async fn before_inference(
        &self,
        cursor: &Cursor,
        number: u32,
        step: &mut StepState,
    ) -> Result<Inference, RunError> {
        if self.hooks.handlers(HookPhase::BeforeInference).is_empty() {
            return Ok(Inference::Proceed {
                context: Vec::new(),
            });
        }
        let request = InferenceRequest {
            step: number,
            messages: serde_json::to_value(&cursor.messages).unwrap_or(Value::Null),
        };
        Ok(
            phases::before_inference(self.hooks.as_ref(), self.events.as_ref(), step, &request)
                .await?,
        )
    }
}

/// What the model sees of the state: the declared keys, or everything when
/// none is declared.
fn visible_state<'a>(
    agent: &AgentDef,
    state: &'a BTreeMap<String, Value>,
) -> Cow<'a, BTreeMap<String, Value>> {
    if agent.state.is_empty() {
        return Cow::Borrowed(state);
    }
    Cow::Owned(
        state
            .iter()
            .filter(|(key, _)| agent.state.contains_key(*key))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
    )
}
