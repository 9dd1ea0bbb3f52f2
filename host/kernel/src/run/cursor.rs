//! Where a run stands between commits: its last sequence number, the state
//! and skills as of that commit, and, for a run a model drives, the
//! conversation the model reads. Each commit moves the cursor; nothing a step
//! has not committed is in it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use crate::agent::AgentDef;
use crate::approval::Approval;
use crate::commit::{CommitError, CommitStore, Continued, Disposition, RunRecord};
use crate::merge::StepState;
use crate::message::Message;
use crate::model::Usage;
use crate::skills::{ActiveSkills, SkillChange};

/// The state of a run the loop carries between commits.
pub(crate) struct Cursor {
    pub(crate) run_id: String,
    /// The thread the run belongs to.
    pub(crate) thread: String,
    pub(crate) seq: u64,
    /// The conversation so far, when the transcript is [`Transcript::Kept`].
    pub(crate) messages: Vec<Message>,
    transcript: Transcript,
    /// How many model steps the run's committed messages hold.
    steps: u32,
    /// Run-scoped and thread-scoped state together, as of the last commit.
    /// Shared with the step being built, and copied only when a commit
    /// changes it while a step still holds it.
    pub(crate) state: Arc<BTreeMap<String, Value>>,
    /// Whether committed file changes wait to be published.
    pub(crate) unpublished: bool,
    /// The skills active as of the last commit.
    pub(crate) skills: Arc<ActiveSkills>,
    /// Activations a resume dropped, which commit with the next step.
    pub(crate) dropped: Vec<SkillChange>,
    /// Whether the run's last commit ended it.
    pub(crate) ended: bool,
    /// How many of the messages still to be taken in were carried over from
    /// an earlier run: they come first and are no step of this one.
    pub(crate) carried: usize,
    /// The earlier run to record with the first commit, until it is made.
    pub(crate) continues: Option<Continued>,
    /// Decisions a person gave on calls the runs of sub-agents wait on, by
    /// the id of the call that delegated to each, and the path below it; the
    /// step that runs those calls again hands them down.
    pub(crate) handed_down: BTreeMap<String, BTreeMap<String, Approval>>,
    /// The calls the step being built runs again, after a wait or a crash,
    /// rather than for the first time.
    pub(crate) again: BTreeSet<String>,
    /// The tokens the model request of the step being built used, which
    /// its commit records.
    pub(crate) usage: Option<Usage>,
}

/// What a cursor keeps of the messages its run commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transcript {
    /// Every one: the model reads the whole conversation each step.
    Kept,
    /// None: requests from outside never read the conversation, which stays
    /// in the store, so a run serving calls for days does not grow in memory
    /// with each one.
    Stored,
}

impl Cursor {
    /// The cursor of run `run_id` before its first commit, over `state`.
    pub(crate) fn new(
        run_id: &str,
        state: BTreeMap<String, Value>,
        transcript: Transcript,
    ) -> Self {
        Self {
            run_id: run_id.to_owned(),
            thread: crate::commit::DEFAULT_THREAD.to_owned(),
            seq: 0,
            messages: Vec::new(),
            transcript,
            steps: 0,
            state: Arc::new(state),
            unpublished: false,
            skills: ActiveSkills::none(),
            dropped: Vec::new(),
            ended: false,
            carried: 0,
            continues: None,
            handed_down: BTreeMap::new(),
            again: BTreeSet::new(),
            usage: None,
        }
    }

    /// The cursor of the run `record` holds, as of its last commit.
    pub(crate) async fn from_record(
        store: &dyn CommitStore,
        record: &RunRecord,
    ) -> Result<Self, CommitError> {
        let mut state = store.thread_state(&record.header.thread).await?;
        state.extend(record.state()?);
        let mut cursor = Self::new(&record.header.run_id, state, Transcript::Kept);
        cursor.thread.clone_from(&record.header.thread);
        cursor.seq = record.last_seq();
        cursor.skills = Arc::new(record.skills());
        cursor.ended = matches!(record.disposition(), Disposition::Ended { .. });
        cursor.carried = record.carried();
        cursor.take_in(record.messages());
        Ok(cursor)
    }

    /// Take in the messages a commit made: count the model steps among them
    /// (a carried message is none of this run's) and keep them when the
    /// transcript is kept.
    pub(crate) fn take_in(&mut self, messages: Vec<Message>) {
        let carried = self.carried.min(messages.len());
        self.carried -= carried;
        let own = messages[carried..]
            .iter()
            .filter(|message| matches!(message, Message::Assistant { .. }))
            .count();
        self.steps = self
            .steps
            .saturating_add(u32::try_from(own).unwrap_or(u32::MAX));
        if self.transcript == Transcript::Kept {
            self.messages.extend(messages);
        }
    }

    /// A step starting from the last commit.
    pub(crate) fn step(&self, agent: &Arc<AgentDef>) -> StepState {
        StepState::new(agent, Arc::clone(&self.state)).with_skills(Arc::clone(&self.skills))
    }

    /// How many model steps the run has committed.
    pub(crate) fn model_steps(&self) -> u32 {
        self.steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message {
        Message::User { text: text.into() }
    }

    fn assistant(text: &str) -> Message {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }

    #[test]
    fn a_stored_transcript_keeps_no_message_and_counts_every_model_step() {
        let mut cursor = Cursor::new("served", BTreeMap::new(), Transcript::Stored);
        for turn in 0..3 {
            cursor.take_in(vec![assistant(&format!("turn {turn}")), user("next")]);
        }
        assert!(cursor.messages.is_empty());
        assert_eq!(cursor.model_steps(), 3);
    }

    #[test]
    fn a_kept_transcript_keeps_every_message_and_a_carried_turn_is_no_step() {
        let mut cursor = Cursor::new("goes-on", BTreeMap::new(), Transcript::Kept);
        cursor.carried = 2;
        cursor.take_in(vec![
            user("earlier"),
            assistant("earlier answer"),
            user("now"),
        ]);
        assert_eq!(cursor.model_steps(), 0);
        cursor.take_in(vec![assistant("this run's answer")]);
        assert_eq!(cursor.model_steps(), 1);
        assert_eq!(cursor.messages.len(), 4);
    }
}
