//! Ending a step: the denied calls are answered, the step-end hooks run, and
//! the step's messages, tool records, state writes, activations, audit events
//! and file changes commit in one atomic commit; the file changes are
//! published to the folder only after it. The cursor moves with the receipt.

use std::sync::Arc;

use tracing::Instrument;

use crate::commit::CommitError;
use crate::commit::{Disposition, Durability, EndCause, StepCommit, ToolRecord};
use crate::files::FileChange;
use crate::hooks::{CallStatus, StepSummary};
use crate::merge::{StepEffects, StepState};
use crate::message::{CallResult, Message};
use crate::phases;
use crate::policy::Verdict;
use crate::progress::Progress;
use crate::requester::Requester;
use crate::run::{Cursor, RunError, RunOutcome, Runtime};
use crate::spans;
use crate::tool::{ToolError, ToolErrorKind};

impl Runtime {
    /// Run the allowed calls of `records` that have no result yet, answer the
    /// denied ones, run the step-end hooks, and commit the step. When a
    /// call's sub-agent waits on calls of its own, the step commits as
    /// waiting instead, and that is returned.
    pub(crate) async fn execute(
        &self,
        cursor: &mut Cursor,
        assistant: Option<Message>,
        mut records: Vec<ToolRecord>,
        mut step: StepState,
        requester: &Requester,
    ) -> Result<Option<RunOutcome>, RunError> {
        let waiting = self
            .run_calls(
                cursor,
                assistant.as_ref(),
                &mut records,
                &mut step,
                requester,
            )
            .await?;
        if waiting.is_empty() {
            self.settle(cursor, assistant, records, step).await?;
            return Ok(None);
        }
        self.commit(
            cursor,
            assistant.into_iter().collect(),
            records.iter().map(ToolRecord::committed).collect(),
            step.into_effects(),
            Disposition::Waiting {
                pending: waiting.clone(),
            },
        )
        .await?;
        Ok(Some(RunOutcome::Waiting {
            run_id: cursor.run_id.clone(),
            pending: waiting,
        }))
    }

    /// Answer the denied calls of `records`, whose allowed ones have run,
    /// run the step-end hooks, and commit the step. Returns the records as
    /// committed.
    pub(crate) async fn settle(
        &self,
        cursor: &mut Cursor,
        assistant: Option<Message>,
        mut records: Vec<ToolRecord>,
        mut step: StepState,
    ) -> Result<Vec<ToolRecord>, RunError> {
        let number = cursor.model_steps() + u32::from(assistant.is_some());
        let mut messages: Vec<Message> = assistant.into_iter().collect();
        let mut calls = Vec::with_capacity(records.len());
        for record in &mut records {
            let result = record.result.get_or_insert_with(|| {
                CallResult::Error(ToolError::new(
                    ToolErrorKind::Denied,
                    record.decision.denial(),
                ))
            });
            if record.decision.verdict == Verdict::Deny {
                spans::call_denied(&record.call, &record.decision, result, self.span_content);
            }
            let status = match result {
                CallResult::Output(_) => CallStatus::Succeeded,
                CallResult::Error(_) if record.decision.verdict == Verdict::Deny => {
                    CallStatus::Denied
                }
                CallResult::Error(_) => CallStatus::Failed,
            };
            calls.push((record.call.clone(), status));
            self.observer.observe(Progress::ToolResult {
                call_id: record.call.id.clone(),
                result: result.clone(),
            });
            messages.push(Message::Tool {
                call_id: record.call.id.clone(),
                result: result.clone(),
                blocks: record.blocks.clone(),
            });
        }
        let summary = StepSummary {
            step: number,
            calls,
            answer: None,
        };
        phases::step_end(
            self.hooks.as_ref(),
            self.events.as_ref(),
            &mut step,
            &summary,
        )
        .await?;
        self.commit(
            cursor,
            messages,
            records.iter().map(ToolRecord::committed).collect(),
            step.into_effects(),
            Disposition::Running,
        )
        .await?;
        Ok(records)
    }

    pub(crate) async fn end(
        &self,
        cursor: &mut Cursor,
        messages: Vec<Message>,
        effects: StepEffects,
        cause: EndCause,
        answer: Option<String>,
    ) -> Result<RunOutcome, RunError> {
        self.commit(
            cursor,
            messages,
            Vec::new(),
            effects,
            Disposition::Ended {
                cause: cause.clone(),
                answer: answer.clone(),
            },
        )
        .await?;
        Ok(RunOutcome::Ended {
            run_id: cursor.run_id.clone(),
            cause,
            answer,
        })
    }

    pub(crate) async fn commit(
        &self,
        cursor: &mut Cursor,
        messages: Vec<Message>,
        tools: Vec<ToolRecord>,
        effects: StepEffects,
        disposition: Disposition,
    ) -> Result<(), RunError> {
        let turn = if effects.files.is_empty() {
            None
        } else {
            self.files.commit_turn()
        };
        let _turn = match &turn {
            Some(turn) => Some(turn.take().await),
            None => None,
        };
        let mut skills = std::mem::take(&mut cursor.dropped);
        skills.extend(effects.skills);
        let commit = StepCommit {
            run_id: cursor.run_id.clone(),
            seq: cursor.seq + 1,
            messages,
            tools,
            state: effects.state,
            thread_state: effects.thread_state,
            events: self.events.drain(),
            skills,
            disposition,
            continues: cursor.continues.take(),
            usage: cursor.usage.take(),
            files: self.files.changes(&effects.files),
        };
        let durability = reach(self.commits, &commit.files);
        let span = spans::commit(&commit.run_id, commit.seq, durability);
        let receipt = match self
            .store
            .commit(&commit, durability)
            .instrument(span.clone())
            .await
        {
            Ok(receipt) => receipt,
            Err(error) => {
                spans::commit_failed(&span);
                return Err(error.into());
            }
        };
        drop(span);
        self.files.confirm(&commit.files);
        cursor.unpublished |= !commit.files.is_empty();
        if cursor.unpublished && !matches!(commit.disposition, Disposition::Waiting { .. }) {
            self.files.publish()?;
            self.store
                .mark_published(&commit.run_id, receipt.seq)
                .await?;
            cursor.unpublished = false;
        }
        for writes in [&commit.state, &commit.thread_state]
            .into_iter()
            .filter(|writes| !writes.is_empty())
        {
            let state = Arc::make_mut(&mut cursor.state);
            crate::state::apply_writes(state, writes).map_err(|error| CommitError::Corrupt {
                location: format!("run {} step {}", commit.run_id, commit.seq),
                message: error.to_string(),
            })?;
        }
        if !commit.skills.is_empty() {
            Arc::make_mut(&mut cursor.skills).apply(&commit.skills);
        }
        cursor.seq = receipt.seq;
        cursor.take_in(commit.messages);
        self.observer.observe(Progress::Committed {
            seq: receipt.seq,
            step: cursor.model_steps(),
            disposition: commit.disposition,
        });
        Ok(())
    }
}

/// How far a step's commit must reach when its runtime commits as far as
/// `commits`: a step that changes files is on disk before they reach the
/// folder, so the folder never holds a change the store could still lose.
fn reach(commits: Durability, files: &[FileChange]) -> Durability {
    if files.is_empty() {
        commits
    } else {
        Durability::Disk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_that_changes_files_commits_on_disk_whatever_the_runtime_asks() {
        let change = FileChange {
            path: "notes.md".into(),
            before: crate::files::FileState::Absent,
            after: crate::files::FileState::Directory,
        };
        assert_eq!(reach(Durability::Process, &[]), Durability::Process);
        assert_eq!(reach(Durability::Disk, &[]), Durability::Disk);
        assert_eq!(
            reach(Durability::Process, std::slice::from_ref(&change)),
            Durability::Disk
        );
        assert_eq!(reach(Durability::Disk, &[change]), Durability::Disk);
    }
}
