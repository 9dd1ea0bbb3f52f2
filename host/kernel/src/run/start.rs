//! Opening a run: a new one in a thread, one going on with an earlier run's
//! conversation, or one submitted for a worker to drive. The prompt commits as
//! the run's first step before any model is asked.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Cursor, RunError, RunOutcome, Runtime, Transcript};
use crate::agent::AgentDef;
use crate::commit::{Continued, DEFAULT_THREAD, Disposition, RunHeader, RunRecord};
use crate::merge::StepEffects;
use crate::message::Message;

/// The conversation a run going on with `earlier` carries, renamed; refused
/// while `earlier` waits on calls, since its conversation is not whole.
fn carried(earlier: &RunRecord) -> Result<(Continued, Vec<Message>), RunError> {
    let messages = earlier
        .conversation()
        .ok_or_else(|| RunError::EarlierWaiting(earlier.header.run_id.clone()))?;
    let carried = Continued {
        run_id: earlier.header.run_id.clone(),
        messages: messages.len(),
    };
    Ok((carried, messages))
}

impl Runtime {
    /// Start run `run_id` of `agent` with `input` in the default thread,
    /// created at `created` (seconds since the Unix epoch).
    pub async fn start(
        &self,
        agent: &AgentDef,
        run_id: &str,
        created: u64,
        input: &str,
    ) -> Result<RunOutcome, RunError> {
        self.start_in(agent, DEFAULT_THREAD, run_id, created, input)
            .await
    }

    /// Start run `run_id` of `agent` with `input` in `thread`, whose
    /// thread-scoped state it reads and writes.
    pub async fn start_in(
        &self,
        agent: &AgentDef,
        thread: &str,
        run_id: &str,
        created: u64,
        input: &str,
    ) -> Result<RunOutcome, RunError> {
        self.start_carrying(agent, thread, run_id, created, input, None)
            .await
    }

    /// Start run `run_id` in the thread of `earlier`, going on with its
    /// conversation: the model sees what was said and done there, then
    /// `input`. The earlier run is left as it is; one that waits on calls
    /// is refused, since its conversation is not whole.
    pub async fn start_after(
        &self,
        agent: &AgentDef,
        earlier: &RunRecord,
        run_id: &str,
        created: u64,
        input: &str,
    ) -> Result<RunOutcome, RunError> {
        self.start_carrying(
            agent,
            &earlier.header.thread,
            run_id,
            created,
            input,
            Some(carried(earlier)?),
        )
        .await
    }

    /// Create run `run_id` of `agent` in `thread` and commit `input` as its
    /// first step, without driving it: the run is `Running` with no model
    /// turn yet, for a worker that claims it (see [`Runtime::resume`]) to
    /// drive. `earlier`, when given, is the run whose conversation it goes
    /// on with, as for [`Runtime::start_after`], and chooses the thread.
    pub async fn submit(
        &self,
        agent: &AgentDef,
        thread: &str,
        run_id: &str,
        created: u64,
        input: &str,
        earlier: Option<&RunRecord>,
    ) -> Result<(), RunError> {
        let (thread, carrying) = match earlier {
            Some(earlier) => (earlier.header.thread.as_str(), Some(carried(earlier)?)),
            None => (thread, None),
        };
        let opened = self
            .open_run(agent, thread, run_id, created, input, carrying)
            .await;
        self.forget_on_error(opened).map(drop)
    }

    async fn start_carrying(
        &self,
        agent: &AgentDef,
        thread: &str,
        run_id: &str,
        created: u64,
        input: &str,
        carrying: Option<(Continued, Vec<Message>)>,
    ) -> Result<RunOutcome, RunError> {
        // A root run's tree is driven within its budget; a sub-agent's
        // runtime carries its root's.
        let budgeted;
        let runtime = if self.link().is_none() {
            budgeted = self.budgeted(agent, 0);
            &budgeted
        } else {
            self
        };
        let outcome = async {
            let cursor = runtime
                .open_run(agent, thread, run_id, created, input, carrying)
                .await?;
            runtime.drive(&Arc::new(agent.clone()), cursor).await
        }
        .await;
        self.forget_on_error(outcome)
    }

    /// Create the run and commit its prompt (after any carried messages) as
    /// step 1, returning the cursor after it.
    async fn open_run(
        &self,
        agent: &AgentDef,
        thread: &str,
        run_id: &str,
        created: u64,
        input: &str,
        carrying: Option<(Continued, Vec<Message>)>,
    ) -> Result<Cursor, RunError> {
        if self.link().is_none() && run_id.contains('/') {
            return Err(RunError::InvalidRunId(run_id.to_owned()));
        }
        let (continues, messages) = carrying.unzip();
        let mut messages = messages.unwrap_or_default();
        let carried = messages.len();
        messages.push(Message::User {
            text: input.to_owned(),
        });
        self.store
            .create_run(&RunHeader {
                run_id: run_id.to_owned(),
                agent: agent.name.clone(),
                created,
                thread: thread.to_owned(),
                metadata: BTreeMap::clone(&self.metadata),
                parent: self.link().cloned(),
            })
            .await?;
        let state = self.store.thread_state(thread).await?;
        let mut cursor = Cursor::new(run_id, state, Transcript::Kept);
        thread.clone_into(&mut cursor.thread);
        cursor.carried = carried;
        cursor.continues = continues;
        let effects = StepEffects {
            state: self.seed().state.clone(),
            skills: self.seed().skills.clone(),
            ..StepEffects::default()
        };
        self.commit(
            &mut cursor,
            messages,
            Vec::new(),
            effects,
            Disposition::Running,
        )
        .await?;
        Ok(cursor)
    }

    /// The events a failed step gathered will never commit.
    pub(crate) fn forget_on_error<T>(&self, outcome: Result<T, RunError>) -> Result<T, RunError> {
        if outcome.is_err() {
            self.events.drain();
        }
        outcome
    }
}
