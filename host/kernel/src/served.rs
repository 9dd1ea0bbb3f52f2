//! Tool calls requested from outside the loop: an MCP client, an embedder's
//! own code. No model decides them, yet each request is one step of a run,
//! judged by the same gate (the agent's tools and permission policy, the
//! before-tool-call hooks), run by the same sandboxed calls, passed through
//! the same after-tool-call and step-end hooks, and committed by the same
//! atomic step commit as a model's calls. The request is recorded as the
//! assistant turn that asked for the calls, so the run reads as any other.
//!
//! A served run owns its [`Runtime`]: the events a step gathers belong to that
//! run alone. Requests arriving together take their turn; one step commits
//! before the next is judged. A host serving calls at once runs several
//! served runs of one thread, so each step reads the thread's state as
//! committed when it starts. The tools' questions go to the requester
//! ([`crate::ask`]); a question it defers withdraws the step, which commits
//! nothing and runs again from the start when the request comes back with
//! the answer.

use std::sync::Arc;

use futures_util::lock::Mutex;

use crate::agent::AgentDef;
use crate::approval::Approver;
use crate::ask::{Asker, Deferred, Recording};
use crate::commit::{CommitStore, EndCause, PendingCall, RunHeader, ToolRecord};
use crate::event::EventSink;
use crate::merge::StepEffects;
use crate::message::{CallResult, Message, ToolCall};
use crate::model::{ModelDelta, ModelError, ModelFuture, ModelProvider, ModelRequest};
use crate::requester::Requester;
use crate::run::step::judge::{Deny, Judge, Offer, Withdraw, judge_and_ask};
use crate::run::{Cursor, Intents, RunError, Runtime, Transcript};
use crate::skills::ActiveSkills;
use crate::tool::{ToolError, ToolErrorKind};
use crate::tool::{ToolSet, ToolSpec};
use crate::typed_state::Scope;

/// The rule a call needing approval is denied under when the requester could
/// not be asked.
pub const NO_APPROVER: &str = "needs a person's approval, and the requester could not ask for it";

impl Runtime {
    /// A runtime with no model, for a [`ServedRun`]: the requester decides
    /// which tools to call. Driving a model run on it ends that run with an
    /// error saying so.
    pub fn for_requests(
        tools: Arc<dyn ToolSet>,
        store: Arc<dyn CommitStore>,
        live: Arc<dyn EventSink>,
    ) -> Self {
        Self::new(Arc::new(NoModel), tools, store, live)
            .with_intents(Intents::ForEffects)
            .never_waiting()
    }
}

/// The model of a runtime that only serves requested calls.
struct NoModel;

impl ModelProvider for NoModel {
    fn complete<'a>(
        &'a self,
        _request: ModelRequest<'a>,
        _deltas: &'a (dyn Fn(ModelDelta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async {
            Err(ModelError::Request(
                "this runtime serves tool calls requested from outside and has no model".into(),
            ))
        })
    }
}

/// What to do with calls needing approval that the requester's approver
/// could not answer now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unanswered {
    /// Deny them, saying why ([`NO_APPROVER`]), and commit the step.
    Deny,
    /// Commit nothing: the requester asks a person and sends the request
    /// again with the answer.
    Withdraw,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Served {
    /// The step committed.
    Committed {
        /// Each call's record, in request order.
        records: Vec<ToolRecord>,
        /// Whether the step changed the tools the run offers (it activated
        /// a skill whose own tools are now offered), so that requesters who
        /// listen are told.
        offers_changed: bool,
    },
    /// Nothing ran and nothing committed: these calls wait for an answer
    /// the requester will bring with the same request.
    Withdrawn(Vec<PendingCall>),
    /// The calls ran until a tool asked what the requester deferred;
    /// nothing committed. The requester asks the person and sends the same
    /// request again with the answers, and the calls run again from the
    /// start.
    Asking(Vec<Deferred>),
}

/// A run whose steps are tool calls requested from outside.
pub struct ServedRun {
    runtime: Runtime,
    agent: Arc<AgentDef>,
    run_id: String,
    cursor: Mutex<Cursor>,
    /// The skills active as of the last commit, beside the cursor so that
    /// what the run offers is known while a step holds the cursor.
    skills: std::sync::Mutex<Arc<ActiveSkills>>,
}

impl ServedRun {
    /// Start run `run_id` of `agent` in `thread` on `runtime`, created at
    /// `created` (seconds since the Unix epoch). Nothing commits until the
    /// first request.
    pub async fn open(
        runtime: Runtime,
        agent: &AgentDef,
        thread: &str,
        run_id: &str,
        created: u64,
    ) -> Result<Self, RunError> {
        runtime
            .store()
            .create_run(&RunHeader {
                run_id: run_id.to_owned(),
                agent: agent.name.clone(),
                created,
                thread: thread.to_owned(),
                metadata: runtime.metadata().clone(),
                parent: None,
            })
            .await?;
        let state = runtime.store().thread_state(thread).await?;
        let mut cursor = Cursor::new(run_id, state, Transcript::Stored);
        thread.clone_into(&mut cursor.thread);
        Ok(Self {
            runtime,
            agent: Arc::new(agent.clone()),
            run_id: run_id.to_owned(),
            skills: std::sync::Mutex::new(Arc::clone(&cursor.skills)),
            cursor: Mutex::new(cursor),
        })
    }

    /// The tools a request may call now: those the agent uses and the
    /// skills active as of the last commit offer.
    pub fn offered(&self) -> Vec<ToolSpec> {
        self.runtime
            .pinned()
            .offered_under(&self.agent, &self.active_skills())
    }

    /// Whether a request may call `name` now.
    pub fn offers(&self, name: &str) -> bool {
        self.runtime
            .offers_now(&self.agent, &self.active_skills(), name)
    }

    /// Whether a request may call `name` in a run just opened, with no
    /// skill active.
    pub fn offers_at_open(&self, name: &str) -> bool {
        self.runtime
            .offers_now(&self.agent, &ActiveSkills::none(), name)
    }

    fn active_skills(&self) -> Arc<ActiveSkills> {
        Arc::clone(
            &self
                .skills
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Judge, run and commit `calls` as one step. A call the policy sends to
    /// a person is put to `approver`; when it cannot answer, `unanswered`
    /// says whether such calls are denied or the whole request withdrawn. A
    /// call naming a tool the run does not offer is answered `not-found` and
    /// never reaches the gate. The requester's cancellation stops the calls
    /// still running, which answer `cancelled`; the step commits all the
    /// same. Their tools' questions go to the requester's asker; one it
    /// defers withdraws the step.
    pub async fn call(
        &self,
        calls: Vec<ToolCall>,
        approver: &dyn Approver,
        unanswered: Unanswered,
        requester: &Requester,
    ) -> Result<Served, RunError> {
        let mut cursor = self.cursor.lock().await;
        if cursor.ended {
            return Err(RunError::Ended(cursor.run_id.clone()));
        }
        if self.agent.keeps_thread_state() {
            self.read_thread_state(&mut cursor).await?;
        }
        // One version of the tools and hooks serves the whole request.
        let runtime = self.runtime.pinned();
        let runtime = &*runtime;
        let mut step = cursor.step(&self.agent);
        let assistant = Message::Assistant {
            text: String::new(),
            tool_calls: calls.clone(),
        };
        let judge = Judge {
            agent: &self.agent,
            skills: &cursor.skills,
            hooks: runtime.hooks(),
            events: runtime.events(),
            observer: runtime.observer(),
        };
        let offer = |name: &str| {
            runtime
                .offered_spec(&self.agent, &cursor.skills, name)
                .map_or(Offer::NotOffered, |spec| Offer::Judged(spec.annotations))
        };
        let mut records = match unanswered {
            Unanswered::Deny => {
                let judged =
                    judge_and_ask(&judge, &mut step, calls, offer, approver, Deny(NO_APPROVER));
                let Ok(records) = judged.await?;
                records
            }
            Unanswered::Withdraw => {
                let judged = judge_and_ask(&judge, &mut step, calls, offer, approver, Withdraw);
                match judged.await? {
                    Ok(records) => records,
                    Err(pending) => {
                        runtime.events().drain();
                        return Ok(Served::Withdrawn(pending));
                    }
                }
            }
        };
        let recording = requester
            .asker
            .clone()
            .map(|asker| Arc::new(Recording::new(asker)));
        let requester = Requester {
            cancel: requester.cancel.clone(),
            asker: recording
                .clone()
                .map(|recording| recording as Arc<dyn Asker>),
        };
        let ran = runtime
            .run_calls(
                &mut cursor,
                Some(&assistant),
                &mut records,
                &mut step,
                &requester,
            )
            .await;
        let deferred = recording
            .map(|recording| recording.take_deferred())
            .unwrap_or_default();
        if !deferred.is_empty() {
            runtime.events().drain();
            return Ok(Served::Asking(deferred));
        }
        let skills = Arc::clone(&cursor.skills);
        let records = match ran {
            Ok(waiting) => {
                cannot_wait(&mut records, &waiting);
                runtime
                    .settle(&mut cursor, Some(assistant), records, step)
                    .await
            }
            Err(error) => Err(error),
        };
        if records.is_err() {
            runtime.events().drain();
        }
        let records = records?;
        // Only a change of the active skills changes what the run offers;
        // the tools are listed, under the skills before and after, only then.
        let offers_changed = !skills.activations().eq(cursor.skills.activations())
            && runtime.offered(&self.agent, &cursor) != runtime.offered_under(&self.agent, &skills);
        *self
            .skills
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::clone(&cursor.skills);
        Ok(Served::Committed {
            records,
            offers_changed,
        })
    }

    /// Take the thread's state as committed now into `cursor`: the
    /// thread's other runs (those a server opens beside this one for calls
    /// made together among them) change it between this run's steps.
    async fn read_thread_state(&self, cursor: &mut Cursor) -> Result<(), RunError> {
        let fresh = self.runtime.store().thread_state(&cursor.thread).await?;
        let state = Arc::make_mut(&mut cursor.state);
        state.retain(|key, _| self.agent.scope_of(key) != Scope::Thread);
        state.extend(fresh);
        Ok(())
    }

    /// End the run; a request after it is refused with [`RunError::Ended`].
    pub async fn close(&self) -> Result<(), RunError> {
        let mut cursor = self.cursor.lock().await;
        self.runtime
            .end(
                &mut cursor,
                Vec::new(),
                StepEffects::default(),
                EndCause::ServerStopped,
                None,
            )
            .await?;
        cursor.ended = true;
        Ok(())
    }
}

/// A served call cannot wait for a later `runs resume`: a call whose
/// sub-agent's run waits on calls of its own is answered so, naming them.
fn cannot_wait(records: &mut [ToolRecord], waiting: &[PendingCall]) {
    for pending in waiting {
        let paths: Vec<String> = pending
            .leaves()
            .into_iter()
            .map(|leaf| leaf.call.id)
            .collect();
        if let Some(record) = records
            .iter_mut()
            .find(|record| record.call.id == pending.call.id)
        {
            record.result = Some(CallResult::Error(ToolError::new(
                ToolErrorKind::Denied,
                format!(
                    "the sub-agent's run waits on {} for a person's approval, and a served call cannot wait",
                    paths.join(", ")
                ),
            )));
        }
    }
}
