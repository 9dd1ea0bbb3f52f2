//! Going on with a run from its last commit: the committed file changes are
//! restored (and published when a crash left them unpublished), activations
//! whose skill changed are dropped, a step a crash interrupted is settled,
//! and the decisions a person gave are applied to the calls the run waits on.

use std::collections::BTreeMap;
use std::sync::Arc;

use tracing::Instrument;

use super::step::judge::apply_decisions;
use super::{Cursor, RunError, RunOutcome, Runtime};
use crate::agent::AgentDef;
use crate::approval::Approval;
use crate::commit::{Disposition, Intent, PendingCall, PendingReason, RunRecord, ToolRecord};
use crate::event::Event;
use crate::merge::StepEffects;
use crate::policy::Verdict;
use crate::progress::Trail;
use crate::requester::Requester;
use crate::skills::SkillChange;
use crate::spans;

impl Runtime {
    /// Continue run `run_id` from its last commit, applying `decisions` (by call
    /// id) to the calls it waits on.
    pub async fn resume(
        &self,
        agent: &AgentDef,
        run_id: &str,
        decisions: &BTreeMap<String, Approval>,
    ) -> Result<RunOutcome, RunError> {
        let outcome = async {
            let spent = match agent.delegation.max_tokens {
                Some(_) => self.tree_tokens(run_id).await?,
                None => 0,
            };
            self.pinned()
                .budgeted(agent, spent)
                .resume_inner(&Arc::new(agent.clone()), run_id, decisions)
                .await
        }
        .await;
        self.forget_on_error(outcome)
    }

    /// The model tokens run `run_id` and the runs of sub-agents beneath it
    /// (`RUN/...`) have spent.
    pub(crate) async fn tree_tokens(&self, run_id: &str) -> Result<u64, RunError> {
        let beneath = format!("{run_id}/");
        let mut spent = 0;
        for run in self.store.runs().await? {
            let id = &run.header.run_id;
            if id == run_id || id.starts_with(&beneath) {
                spent += self.store.load(id).await?.tokens();
            }
        }
        Ok(spent)
    }

    pub(crate) async fn resume_inner(
        &self,
        agent: &Arc<AgentDef>,
        run_id: &str,
        decisions: &BTreeMap<String, Approval>,
    ) -> Result<RunOutcome, RunError> {
        let mut record = self.store.load(run_id).await?;
        if let (None, Some(parent)) = (self.link(), &record.header.parent) {
            return Err(RunError::SubAgentRun {
                run_id: run_id.to_owned(),
                root: parent.root.clone(),
            });
        }
        let unpublished = self.restore_files(&record).await?;
        if let Some(intent) = record.intent.take()
            && intent.seq == record.last_seq() + 1
        {
            let mut cursor = Cursor::from_record(self.store.as_ref(), &record).await?;
            cursor.unpublished = unpublished;
            self.check_skills(&mut cursor);
            if let Some(waiting) = self
                .settle_interrupted(agent, &mut cursor, intent, decisions)
                .await?
            {
                return Ok(waiting);
            }
            record = self.store.load(run_id).await?;
        }
        let mut cursor = Cursor::from_record(self.store.as_ref(), &record).await?;
        cursor.unpublished = unpublished;
        self.check_skills(&mut cursor);
        match record.disposition() {
            Disposition::Ended { .. } => Err(RunError::Ended(run_id.to_owned())),
            Disposition::Running if decisions.is_empty() => self.drive(agent, cursor).await,
            Disposition::Running => Err(RunError::NotWaiting(run_id.to_owned())),
            Disposition::Waiting { pending } => {
                let records = record
                    .commits
                    .last()
                    .map(|commit| commit.tools.clone())
                    .unwrap_or_default();
                let (records, handed_down) = apply_decisions(run_id, records, &pending, decisions)?;
                cursor.handed_down = handed_down;
                cursor.again = unanswered(&records);
                let step = cursor.step(agent);
                // The step the run waited in goes on, under its own number.
                let span = spans::step(&cursor.run_id, cursor.model_steps());
                let waiting = self
                    .execute(&mut cursor, None, records, step, &Requester::default())
                    .instrument(span)
                    .await?;
                match waiting {
                    Some(waiting) => Ok(waiting),
                    None => self.drive(agent, cursor).await,
                }
            }
        }
    }

    /// Drop the activations of `cursor` whose skill is gone or whose SKILL.md
    /// changed since: each drop is a warning now and commits with the next
    /// step. Without a catalog, every activation is dropped.
    fn check_skills(&self, cursor: &mut Cursor) {
        let mut drops = Vec::new();
        for activation in cursor.skills.activations() {
            let now = self
                .catalog
                .as_ref()
                .and_then(|catalog| catalog.fingerprint(&activation.skill));
            let reason = match now {
                Some(fingerprint) if fingerprint == activation.fingerprint => continue,
                Some(_) => "its SKILL.md changed since it was activated".to_owned(),
                None => "the run no longer has this skill".to_owned(),
            };
            drops.push(SkillChange::Dropped {
                skill: activation.skill.clone(),
                reason,
            });
        }
        if drops.is_empty() {
            return;
        }
        for drop in &drops {
            if let SkillChange::Dropped { skill, reason } = drop {
                self.events.emit(Event::SkillDropped {
                    skill: skill.clone(),
                    reason: reason.clone(),
                });
            }
        }
        Arc::make_mut(&mut cursor.skills).apply(&drops);
        cursor.dropped.extend(drops);
    }

    /// Reload the run's committed file changes, and publish those a crash left
    /// unpublished unless the run waits. Returns whether some stay unpublished.
    async fn restore_files(&self, record: &RunRecord) -> Result<bool, RunError> {
        let run_id = &record.header.run_id;
        let steps = self.store.files(run_id).await?;
        let published = self.store.published(run_id).await?;
        self.files.restore(&steps, published);
        let Some(last) = steps
            .last()
            .map(|step| step.seq)
            .filter(|&seq| seq > published)
        else {
            return Ok(false);
        };
        if matches!(record.disposition(), Disposition::Waiting { .. }) {
            return Ok(true);
        }
        self.files.publish()?;
        self.store.mark_published(run_id, last).await?;
        Ok(false)
    }

    /// A crash left `intent` uncommitted. Calls that left no trace
    /// ([`Runtime::leaves_no_trace`]) run again; any other call waits for a
    /// person unless `decisions` already settle it. Returns the waiting
    /// outcome when the run must pause.
    async fn settle_interrupted(
        &self,
        agent: &Arc<AgentDef>,
        cursor: &mut Cursor,
        intent: Intent,
        decisions: &BTreeMap<String, Approval>,
    ) -> Result<Option<RunOutcome>, RunError> {
        // Calls the policy asked about may have been waiting while the
        // allowed ones of their step ran; they still wait.
        let pending: Vec<PendingCall> = intent
            .calls
            .iter()
            .filter(|record| record.result.is_none())
            .filter_map(|record| {
                match record.decision.verdict {
                    Verdict::Allow if !self.leaves_no_trace(agent, &record.call.name) => {
                        Some(PendingReason::Indeterminate)
                    }
                    Verdict::Ask => Some(PendingReason::asked_by(&record.decision)),
                    _ => None,
                }
                .map(|reason| PendingCall {
                    call: record.call.clone(),
                    reason,
                })
            })
            .collect();
        cursor.again = unanswered(&intent.calls);
        if pending.is_empty() {
            let step = cursor.step(agent);
            return self
                .execute(
                    cursor,
                    intent.assistant,
                    intent.calls,
                    step,
                    &Requester::default(),
                )
                .await;
        }
        let settled = pending
            .iter()
            .all(|pending| decisions.contains_key(&pending.call.id));
        if settled {
            let (records, handed_down) =
                apply_decisions(&cursor.run_id, intent.calls, &pending, decisions)?;
            cursor.handed_down = handed_down;
            let step = cursor.step(agent);
            return self
                .execute(
                    cursor,
                    intent.assistant,
                    records,
                    step,
                    &Requester::default(),
                )
                .await;
        }
        self.commit(
            cursor,
            intent.assistant.into_iter().collect(),
            intent.calls,
            StepEffects::default(),
            Disposition::Waiting {
                pending: pending.clone(),
            },
        )
        .await?;
        Ok(Some(RunOutcome::Waiting {
            run_id: cursor.run_id.clone(),
            pending,
        }))
    }
}

/// The ids of the calls of `records` with no result yet: those a resumed
/// step runs again.
fn unanswered(records: &[ToolRecord]) -> std::collections::BTreeSet<String> {
    records
        .iter()
        .filter(|record| record.result.is_none())
        .map(|record| record.call.id.clone())
        .collect()
}
