//! Running a delegation: the sub-agent's run is opened the first time its
//! call runs and gone on with every time after, so running the call again
//! (after a crash, or once a person decided what its run waits on) is
//! resuming the run from its last commit, re-running nothing that may have
//! acted. The run's id is its parent's followed by the call's
//! (`RUN/call-2-1`), which is also how its waiting calls are named.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use super::budget::TreeBudget;
use super::ledger::ChildFiles;
use super::spec::Task;
use crate::agent::AgentDef;
use crate::approval::Approval;
use crate::commit::{CommitError, Disposition, EndCause, ParentLink, PendingCall, RunRecord};
use crate::event::{Event, LimitKind};
use crate::files::FileLedger;
use crate::message::ToolCall;
use crate::model::ModelProvider;
use crate::run::{RunError, RunOutcome, Runtime, Seed};
use crate::skills::{ActiveSkills, SkillChange};
use crate::state::{StateOp, StateReader, StateWrite};
use crate::tool::{ToolCallOutcome, ToolError, ToolErrorKind};

/// What a delegation came to.
pub(crate) enum Delegated {
    /// The call's outcome: the sub-agent's answer with the file changes of
    /// its run, or why there is none.
    Done(ToolCallOutcome),
    /// The sub-agent's run waits on calls of its own.
    Waiting {
        /// The run.
        run_id: String,
        /// What it waits on.
        pending: Vec<PendingCall>,
    },
}

/// A delegation, running.
pub(crate) type Delegating<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Delegated, RunError>> + Send + 'a>>;

/// The call a delegation runs for.
pub(crate) struct Delegation<'a> {
    /// The agent delegating, as narrowed above it.
    pub(crate) parent: &'a AgentDef,
    /// The sub-agent's name.
    pub(crate) name: &'a str,
    /// The delegating run.
    pub(crate) run_id: &'a str,
    /// The step of that run the call belongs to.
    pub(crate) seq: u64,
    /// The call.
    pub(crate) call: &'a ToolCall,
    /// Decisions on the calls the sub-agent's run waits on, by their path
    /// below this call.
    pub(crate) decisions: BTreeMap<String, Approval>,
    /// The state the call reads: where its sub-agent's counters start.
    pub(crate) state: Arc<dyn StateReader>,
    /// Whether the call runs again (its step waited, or a crash interrupted
    /// it), so its sub-agent's run exists and goes on; a call the model
    /// just made opens a new one.
    pub(crate) again: bool,
    /// The skills active in the delegating run: they narrow its sub-agent.
    pub(crate) skills: Arc<ActiveSkills>,
    /// The delegating run's thread, which its sub-agent's run joins.
    pub(crate) thread: &'a str,
}

/// A call refused for passing the delegation bound `setting`.
pub(crate) fn over_limit(call: &ToolCall, setting: &str, detail: String) -> ToolCallOutcome {
    let detail = format!("{detail} (`[delegation] {setting}`)");
    ToolCallOutcome::error(ToolError::new(ToolErrorKind::Limit, detail.clone())).with_events(vec![
        Event::LimitExceeded {
            bundle: "agent".into(),
            tool: call.name.clone(),
            limit: LimitKind::Delegation,
            detail,
        },
    ])
}

fn failed(message: String) -> Delegated {
    Delegated::Done(ToolCallOutcome::error(ToolError::new(
        ToolErrorKind::Failed,
        message,
    )))
}

impl Runtime {
    /// Delegate `delegation`'s task to its sub-agent: open its run, or go on
    /// with the one an earlier run of the call opened. Fails only when the
    /// store does; whatever else stops the sub-agent is the call's error.
    /// The future is boxed: a sub-agent's run delegates in turn.
    pub(crate) fn delegate<'a>(&'a self, delegation: Delegation<'a>) -> Delegating<'a> {
        Box::pin(self.delegate_now(delegation))
    }

    async fn delegate_now(&self, delegation: Delegation<'_>) -> Result<Delegated, RunError> {
        let Delegation {
            parent,
            name,
            run_id,
            seq,
            call,
            decisions,
            state,
            again,
            skills,
            thread,
        } = delegation;
        let Some(sub) = parent.agents.get(name) else {
            return Ok(failed(format!("no sub-agent `{name}`")));
        };
        // The sub-agent's run is named by the call's id, and its waiting
        // calls by paths of ids joined by `/`.
        if call.id.is_empty() || call.id.contains('/') {
            return Ok(Delegated::Done(ToolCallOutcome::error(ToolError::new(
                ToolErrorKind::InvalidInput,
                format!(
                    "a call delegating to a sub-agent needs an id without `/`; this one is {:?}",
                    call.id
                ),
            ))));
        }
        let task = match Task::read(&call.args) {
            Ok(task) => task,
            Err(problem) => {
                return Ok(Delegated::Done(ToolCallOutcome::error(ToolError::new(
                    ToolErrorKind::InvalidInput,
                    problem,
                ))));
            }
        };
        let (root, depth) = self.tree_of(run_id);
        let limits = parent.delegation;
        if depth + 1 > limits.max_depth {
            return Ok(Delegated::Done(over_limit(
                call,
                "max-depth",
                format!(
                    "sub-agent `{name}` would run {} delegations below the root run {root}, past its limit of {}",
                    depth + 1,
                    limits.max_depth
                ),
            )));
        }
        let model: Arc<dyn ModelProvider> = match (&sub.agent.model, self.models()) {
            (None, _) => Arc::clone(self.model()),
            (Some(spec), Some(models)) => {
                match models.resolve(spec, &sub.agent.model_settings, &sub.dir) {
                    Ok(model) => model,
                    Err(error) => {
                        return Ok(failed(format!(
                            "sub-agent `{name}`: model {spec:?}: {error}"
                        )));
                    }
                }
            }
            (Some(spec), None) => {
                return Ok(failed(format!(
                    "sub-agent `{name}` names model {spec:?}, and this host resolves no models for sub-agents"
                )));
            }
        };
        if let Some(spent) = self.budget().and_then(TreeBudget::reached) {
            return Ok(Delegated::Done(over_limit(
                call,
                spent.setting,
                spent.detail,
            )));
        }
        let child_id = format!("{run_id}/{}", call.id);
        let link = ParentLink {
            run_id: run_id.to_owned(),
            seq,
            call_id: call.id.clone(),
            root: root.to_owned(),
            depth: depth + 1,
        };
        let files = Arc::new(ChildFiles::new(Arc::clone(self.files())));
        let seed = Seed {
            state: counted(parent, state.as_ref()),
            skills: skills
                .activations()
                .map(|activation| SkillChange::Activated {
                    call_id: call.id.clone(),
                    activation: activation.clone(),
                })
                .collect(),
        };
        let agent = Arc::new(sub.agent.within(parent));
        // Bounds of the sub-agent's own, or a served call's sub-agent's (no
        // driven root keeps a budget), hold for its runs.
        let own = &sub.agent.delegation;
        let budget =
            if own.max_tokens.is_some() || own.max_seconds.is_some() || self.budget().is_none() {
                let spent = match agent.delegation.max_tokens {
                    Some(_) => self.tree_tokens(&child_id).await?,
                    None => 0,
                };
                let outer = self.shared_budget();
                TreeBudget::within(&agent.delegation, spent, outer.clone())
                    .map(Arc::new)
                    .or(outer)
            } else {
                self.shared_budget()
            };
        let child = self
            .for_child(
                (model, sub.agent.hooks.as_deref()),
                files.clone(),
                link.clone(),
                seed,
            )
            .with_budget(budget);
        let link = child.link();
        let outcome = match self.store().load(&child_id).await {
            Err(CommitError::UnknownRun(_)) => {
                if let Err(started) = self.open_child_run(root, limits.max_child_runs).await? {
                    return Ok(Delegated::Done(over_limit(
                        call,
                        "max-child-runs",
                        format!("root run {root} has started {started} sub-agent runs, its limit"),
                    )));
                }
                child
                    .start_in(&agent, thread, &child_id, now(), &task.prompt())
                    .await
            }
            Err(error) => return Err(error.into()),
            Ok(_) if !again => {
                return Ok(failed(format!(
                    "call id `{}` delegated to run {child_id} earlier in this run; a sub-agent's run is named by its call's id, so each delegating call needs an id of its own",
                    call.id
                )));
            }
            Ok(record) => {
                // The step that runs the call again is a later one: the
                // link names the step that first ran it.
                let ours = record.header.agent == agent.name
                    && record.header.parent.as_ref().is_some_and(|up| {
                        link.is_some_and(|link| {
                            (&up.run_id, &up.call_id, &up.root)
                                == (&link.run_id, &link.call_id, &link.root)
                        })
                    });
                if !ours {
                    return Ok(failed(format!(
                        "run {child_id} exists and is not this call's sub-agent run"
                    )));
                }
                match record.disposition() {
                    Disposition::Ended { cause, answer } => {
                        let steps = self.store().files(&child_id).await?;
                        files.restore(&steps, 0);
                        Ok(RunOutcome::Ended {
                            run_id: child_id.clone(),
                            cause,
                            answer,
                        })
                    }
                    // Nothing decided and nothing under way: it waits as it
                    // did. A crash during calls it went on with is settled
                    // by its resume, which holds what may have acted.
                    Disposition::Waiting { pending }
                        if decisions.is_empty() && record.intent.is_none() =>
                    {
                        Ok(RunOutcome::Waiting {
                            run_id: child_id.clone(),
                            pending,
                        })
                    }
                    _ => {
                        let outcome = child.resume_inner(&agent, &child_id, &decisions).await;
                        child.forget_on_error(outcome)
                    }
                }
            }
        };
        Ok(match outcome {
            Ok(RunOutcome::Ended {
                cause: EndCause::FinalAnswer,
                answer,
                ..
            }) => {
                let added = added(parent, &self.store().load(&child_id).await?)?;
                let mut done =
                    ToolCallOutcome::output(serde_json::Value::String(answer.unwrap_or_default()))
                        .with_writes(added);
                done.files = files.committed();
                Delegated::Done(done)
            }
            Ok(RunOutcome::Ended {
                cause: EndCause::Limit(detail),
                ..
            }) => Delegated::Done(ToolCallOutcome::error(ToolError::new(
                ToolErrorKind::Limit,
                format!("sub-agent `{name}` (run {child_id}) stopped: {detail}"),
            ))),
            Ok(RunOutcome::Ended { cause, .. }) => failed(format!(
                "sub-agent `{name}` (run {child_id}) ended without an answer: {}",
                ended(&cause)
            )),
            Ok(RunOutcome::Waiting { run_id, pending }) => Delegated::Waiting { run_id, pending },
            Err(RunError::Commit(error)) => return Err(RunError::Commit(error)),
            Err(error) => failed(format!(
                "sub-agent `{name}` (run {child_id}) stopped: {error}"
            )),
        })
    }
}

/// The parent's counters as `state` holds them, to open its sub-agent's
/// run with.
fn counted(parent: &AgentDef, state: &dyn StateReader) -> Vec<StateWrite> {
    parent
        .counters()
        .into_iter()
        .filter_map(|key| {
            let value = state.get(key).ok().flatten()?;
            value.is_i64().then(|| StateWrite {
                key: key.to_owned(),
                op: StateOp::Set { value },
            })
        })
        .collect()
}

/// What the sub-agent's run `record` added to its parent's counters, from
/// the count it opened with to the one it ended with.
fn added(parent: &AgentDef, record: &RunRecord) -> Result<Vec<StateWrite>, RunError> {
    let opened: BTreeMap<&str, i64> = record
        .commits
        .first()
        .into_iter()
        .flat_map(|commit| &commit.state)
        .filter_map(|write| match &write.op {
            StateOp::Set { value } => Some((write.key.as_str(), value.as_i64()?)),
            _ => None,
        })
        .collect();
    let ended = record.state()?;
    Ok(parent
        .counters()
        .into_iter()
        .filter_map(|key| {
            let end = ended.get(key).and_then(serde_json::Value::as_i64)?;
            let delta = end - opened.get(key).copied().unwrap_or(0);
            (delta != 0).then(|| StateWrite {
                key: key.to_owned(),
                op: StateOp::Increment { delta },
            })
        })
        .collect())
}

/// Why a run ended, in words.
fn ended(cause: &EndCause) -> String {
    match cause {
        EndCause::FinalAnswer => "it answered".into(),
        EndCause::MaxSteps => "it used all its steps (`max-steps`)".into(),
        EndCause::Cancelled => "it was cancelled".into(),
        EndCause::ServerStopped => "its server stopped".into(),
        EndCause::Error(error) => format!("it failed: {error}"),
        EndCause::Refused { hook, reason } => format!("hook `{hook}` refused it: {reason}"),
        EndCause::Limit(detail) => detail.clone(),
    }
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}
