//! The agent loop. One run is a sequence of steps: call the model with the
//! conversation and the committed state, pass each requested tool call through
//! the permission gate, run the allowed calls concurrently, and commit the
//! step's messages, tool records, state writes and audit events in one atomic
//! commit. Nothing a step did is visible before its receipt.
//!
//! A run pauses with a committed [`RunOutcome::Waiting`] when a call needs a
//! person's approval (or when a crash left a call whose effect is unknown) and
//! resumes later on the same path. A resumed run starts from the last commit;
//! calls recorded as started but never committed run again only when they
//! could have changed nothing outside their step: their tool set reports them
//! confined to their outcome, or their tool is read-only or idempotent.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::agent::AgentDef;
use crate::approval::{Approval, Approver, DeferApprovals};
use crate::commit::{
    CommitError, CommitStore, Continued, DEFAULT_THREAD, Disposition, Durability, EndCause, Intent,
    PendingCall, PendingReason, RunHeader, RunRecord, StepCommit, ToolRecord,
};
use crate::event::{Event, EventSink, LimitKind};
use crate::files::{FileChange, FileConflict, FileLedger, FileWrites, NoFiles, PublishError};
use crate::gate;
use crate::hooks::{CallStatus, HookPhase, HookSet, InferenceRequest, NoHooks, StepSummary};
use crate::merge::{Refusal, StateConflict, StepEffects, StepState, Writer};
use crate::message::{CallResult, Message, ToolCall};
use crate::model::{ModelDelta, ModelProvider, ModelRequest};
use crate::nested::{CallGate, StepCalls, StepPorts};
use crate::phases::{self, Inference};
use crate::policy::{Decider, Decision, Verdict};
use crate::progress::{Observer, Progress, StepEvents, Trail, Unobserved};
use crate::reload::Reloadable;
use crate::requester::Requester;
use crate::skills::{ActiveSkills, SkillActivation, SkillCatalog, SkillChange};
use crate::state::StateWrite;
use crate::tool::{Reach, ToolError, ToolErrorKind, ToolSet, ToolSpec};

/// Where a run stands when the loop returns.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// Paused until each pending call is approved or denied.
    Waiting {
        /// The run.
        run_id: String,
        /// The calls waiting for a decision.
        pending: Vec<PendingCall>,
    },
    /// Over.
    Ended {
        /// The run.
        run_id: String,
        /// Why it ended.
        cause: EndCause,
        /// The model's last reply, when the run ended on one.
        answer: Option<String>,
    },
}

/// Why the loop could not go on. The store holds every step committed before.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The commit port failed.
    #[error(transparent)]
    Commit(#[from] CommitError),
    /// The run is over and cannot resume.
    #[error("run {0} has ended")]
    Ended(String),
    /// The run is not waiting, so decisions make no sense.
    #[error("run {0} is not waiting for decisions")]
    NotWaiting(String),
    /// A run cannot go on with the conversation of a run that waits on calls.
    #[error(
        "run {0} waits on calls, so its conversation is not whole: resume it (`cordon runs resume {0}`) before going on with it"
    )]
    EarlierWaiting(String),
    /// Two writes in one step could not merge under their key's policy; the
    /// step committed nothing.
    #[error("the step failed and committed nothing: {0}")]
    StateConflict(#[from] StateConflict),
    /// Two calls of one step changed one path; the step committed nothing.
    #[error("the step failed and committed nothing: {0}")]
    FileConflict(#[from] FileConflict),
    /// The step committed, but its file changes could not be written to the
    /// real folder; resuming the run writes them again.
    #[error("the step committed, but {0}; `runs resume` writes the changes again")]
    Publish(#[from] PublishError),
    /// A pending call has no decision.
    #[error("run {run_id} is waiting on call {call_id}: approve or deny it")]
    MissingDecision {
        /// The run.
        run_id: String,
        /// The pending call with no decision.
        call_id: String,
    },
    /// A decision names a call that is not pending.
    #[error("run {run_id} has no pending call {call_id}")]
    UnknownCall {
        /// The run.
        run_id: String,
        /// The call the decision names.
        call_id: String,
    },
}

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

/// The loop and the ports it runs on.
#[derive(Clone)]
pub struct Runtime {
    model: Arc<dyn ModelProvider>,
    tools: Arc<dyn ToolSet>,
    hooks: Arc<dyn HookSet>,
    /// Where the tools and hooks in force are read, when a host replaces
    /// them while runs go on.
    reloads: Option<Arc<dyn Reloadable>>,
    files: Arc<dyn FileLedger>,
    store: Arc<dyn CommitStore>,
    approver: Arc<dyn Approver>,
    observer: Arc<dyn Observer>,
    events: Arc<StepEvents>,
    cancelled: Arc<AtomicBool>,
    metadata: Arc<BTreeMap<String, String>>,
    catalog: Option<Arc<dyn SkillCatalog>>,
    intents: Intents,
    commits: Durability,
}

/// When a step records its calls as an intent before running them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intents {
    /// Always: a resume finds the model's turn and re-runs or holds its calls.
    Always,
    /// Only when a call may have effects: a served request lost to a crash is
    /// never resumed, so an intent only records that an effect may have
    /// happened; read-only and idempotent calls need none, nor do calls whose
    /// every effect travels with their outcome ([`Reach::Outcome`]).
    ForEffects,
}

impl Intents {
    /// How far each intent must reach: on disk for a run that resumes from
    /// it, out of the process for one that only records it.
    fn durability(self) -> Durability {
        match self {
            Self::Always => Durability::Disk,
            Self::ForEffects => Durability::Process,
        }
    }
}

/// The state of a run the loop carries between commits.
pub(crate) struct Cursor {
    pub(crate) run_id: String,
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
        }
    }

    async fn from_record(store: &dyn CommitStore, record: &RunRecord) -> Result<Self, CommitError> {
        let mut state = store.thread_state(&record.header.thread).await?;
        state.extend(record.state()?);
        let mut cursor = Self::new(&record.header.run_id, state, Transcript::Kept);
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
    fn take_in(&mut self, messages: Vec<Message>) {
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

    fn model_steps(&self) -> u32 {
        self.steps
    }
}

impl Runtime {
    /// A runtime on these ports. The audit events of each step commit with
    /// it: those every call and hook brings back in its outcome, and the
    /// kernel's own, which it also shows on `live` as they happen.
    pub fn new(
        model: Arc<dyn ModelProvider>,
        tools: Arc<dyn ToolSet>,
        store: Arc<dyn CommitStore>,
        live: Arc<dyn EventSink>,
    ) -> Self {
        Self {
            model,
            tools,
            hooks: Arc::new(NoHooks),
            reloads: None,
            files: Arc::new(NoFiles),
            store,
            approver: Arc::new(DeferApprovals),
            observer: Arc::new(Unobserved),
            events: Arc::new(StepEvents::new(live)),
            cancelled: Arc::new(AtomicBool::new(false)),
            metadata: Arc::default(),
            catalog: None,
            intents: Intents::Always,
            commits: Durability::Disk,
        }
    }

    /// Take the tools and hooks from `reloads` when each served request
    /// and each drive of the loop starts, instead of those given to
    /// [`Runtime::new`] and [`Runtime::with_hooks`], and keep them to its
    /// end (see [`crate::reload`]).
    pub fn with_reloads(mut self, reloads: Arc<dyn Reloadable>) -> Self {
        self.reloads = Some(reloads);
        self
    }

    /// This runtime with the tools and hooks in force now fixed, for one
    /// request or one drive of the loop: itself when nothing replaces them.
    pub(crate) fn pinned(&self) -> Cow<'_, Self> {
        match &self.reloads {
            None => Cow::Borrowed(self),
            Some(reloads) => {
                let (tools, hooks) = reloads.in_force();
                Cow::Owned(Self {
                    tools,
                    hooks,
                    reloads: None,
                    ..self.clone()
                })
            }
        }
    }

    /// Record intents only for steps with a call that may have effects.
    pub(crate) fn with_intents(mut self, intents: Intents) -> Self {
        self.intents = intents;
        self
    }

    /// Commit each step as far as `durability` says before the step ends
    /// (on disk unless told otherwise). [`Durability::Process`] suits a
    /// server answering requests whose operator would rather answer sooner
    /// than keep the last moment's records through a power loss. A step
    /// that changes files commits on disk all the same.
    pub fn with_commits(mut self, durability: Durability) -> Self {
        self.commits = durability;
        self
    }

    /// Check a resumed run's active skills against `catalog`: an activation
    /// whose skill changed or is gone is dropped with a warning.
    pub fn with_skills(mut self, catalog: Arc<dyn SkillCatalog>) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Run `hooks` at each phase of every step.
    pub fn with_hooks(mut self, hooks: Arc<dyn HookSet>) -> Self {
        self.hooks = hooks;
        self
    }

    /// Commit the file changes `files` stages with each step, and publish them
    /// after the commit.
    pub fn with_files(mut self, files: Arc<dyn FileLedger>) -> Self {
        self.files = files;
        self
    }

    /// Ask `approver` about calls the policy sends to a person.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Report progress to `observer`.
    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = observer;
        self
    }

    /// Record `metadata` in the header of every run this runtime starts.
    pub fn with_run_metadata(mut self, metadata: BTreeMap<String, String>) -> Self {
        self.metadata = Arc::new(metadata);
        self
    }

    /// The tools a step of `agent` at `cursor` may call: those the agent
    /// uses and its active skills offer.
    pub(crate) fn offered(&self, agent: &AgentDef, cursor: &Cursor) -> Vec<ToolSpec> {
        self.offered_under(agent, &cursor.skills)
    }

    /// The tools a step of `agent` may call while `skills` are active.
    pub(crate) fn offered_under(&self, agent: &AgentDef, skills: &ActiveSkills) -> Vec<ToolSpec> {
        self.tools
            .specs()
            .into_iter()
            .filter(|spec| agent.uses_tool(&spec.name) && skills.offers(&spec.name))
            .collect()
    }

    /// The spec of `name` when a step of `agent` may call it while `skills`
    /// are active.
    pub(crate) fn offered_spec(
        &self,
        agent: &AgentDef,
        skills: &ActiveSkills,
        name: &str,
    ) -> Option<ToolSpec> {
        if agent.uses_tool(name) && skills.offers(name) {
            self.tools.spec(name)
        } else {
            None
        }
    }

    pub(crate) fn store(&self) -> &dyn CommitStore {
        self.store.as_ref()
    }

    pub(crate) fn metadata(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    pub(crate) fn hooks(&self) -> &dyn HookSet {
        self.hooks.as_ref()
    }

    pub(crate) fn events(&self) -> &StepEvents {
        self.events.as_ref()
    }

    pub(crate) fn observer(&self) -> &dyn Observer {
        self.observer.as_ref()
    }

    /// A flag that, once set, ends the run at the next step boundary.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancelled)
    }

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
        let outcome = async {
            let cursor = self
                .open_run(agent, thread, run_id, created, input, carrying)
                .await?;
            self.drive(&Arc::new(agent.clone()), cursor).await
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
            })
            .await?;
        let state = self.store.thread_state(thread).await?;
        let mut cursor = Cursor::new(run_id, state, Transcript::Kept);
        cursor.carried = carried;
        cursor.continues = continues;
        self.commit(
            &mut cursor,
            messages,
            Vec::new(),
            StepEffects::default(),
            Disposition::Running,
        )
        .await?;
        Ok(cursor)
    }

    /// Continue run `run_id` from its last commit, applying `decisions` (by call
    /// id) to the calls it waits on.
    pub async fn resume(
        &self,
        agent: &AgentDef,
        run_id: &str,
        decisions: &BTreeMap<String, Approval>,
    ) -> Result<RunOutcome, RunError> {
        let outcome = self
            .pinned()
            .resume_inner(&Arc::new(agent.clone()), run_id, decisions)
            .await;
        self.forget_on_error(outcome)
    }

    /// The events a failed step gathered will never commit.
    fn forget_on_error<T>(&self, outcome: Result<T, RunError>) -> Result<T, RunError> {
        if outcome.is_err() {
            self.events.drain();
        }
        outcome
    }

    async fn resume_inner(
        &self,
        agent: &Arc<AgentDef>,
        run_id: &str,
        decisions: &BTreeMap<String, Approval>,
    ) -> Result<RunOutcome, RunError> {
        let mut record = self.store.load(run_id).await?;
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
                let records = apply_decisions(run_id, records, &pending, decisions)?;
                let step = cursor.step(agent);
                self.execute(&mut cursor, None, records, step, &Requester::default())
                    .await?;
                self.drive(agent, cursor).await
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

    /// The loop, from `cursor` until the run waits or ends, with the tools
    /// and hooks in force when it starts.
    async fn drive(&self, agent: &Arc<AgentDef>, cursor: Cursor) -> Result<RunOutcome, RunError> {
        self.pinned().steps(agent, cursor).await
    }

    /// The loop proper.
    async fn steps(
        &self,
        agent: &Arc<AgentDef>,
        mut cursor: Cursor,
    ) -> Result<RunOutcome, RunError> {
        loop {
            if self.cancelled.load(Ordering::SeqCst) {
                return self
                    .end(
                        &mut cursor,
                        Vec::new(),
                        StepEffects::default(),
                        EndCause::Cancelled,
                        None,
                    )
                    .await;
            }
            let taken = cursor.model_steps();
            if taken >= agent.max_steps {
                return self
                    .end(
                        &mut cursor,
                        Vec::new(),
                        StepEffects::default(),
                        EndCause::MaxSteps,
                        None,
                    )
                    .await;
            }
            let last_step = taken + 1 == agent.max_steps;
            let tools: Vec<ToolSpec> = if last_step {
                Vec::new()
            } else {
                self.offered(agent, &cursor)
            };
            let mut step = cursor.step(agent);
            let context = match self.before_inference(&cursor, taken + 1, &mut step).await? {
                Inference::Proceed { context } => context,
                Inference::Refused { hook, reason } => {
                    let cause = EndCause::Refused { hook, reason };
                    return self
                        .end(&mut cursor, Vec::new(), StepEffects::default(), cause, None)
                        .await;
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
                tools: &tools,
                state: visible.as_ref(),
            };
            let response = match self.model.complete(request, &deltas).await {
                Ok(response) => response,
                Err(error) => {
                    return self
                        .end(
                            &mut cursor,
                            Vec::new(),
                            StepEffects::default(),
                            EndCause::Error(error.to_string()),
                            None,
                        )
                        .await;
                }
            };
            let calls = if last_step {
                Vec::new()
            } else {
                response.tool_calls
            };
            let assistant = Message::Assistant {
                text: response.text.clone(),
                tool_calls: calls.clone(),
            };
            if calls.is_empty() {
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
                return self
                    .end(
                        &mut cursor,
                        vec![assistant],
                        effects,
                        cause,
                        Some(response.text),
                    )
                    .await;
            }
            let mut records = Vec::with_capacity(calls.len());
            for call in calls {
                if let Some(record) = malformed(&call) {
                    self.observer.observe(Progress::ToolCall {
                        call: record.call.clone(),
                        decision: record.decision.clone(),
                    });
                    records.push(record);
                    continue;
                }
                let annotations = tools
                    .iter()
                    .find(|spec| spec.name == call.name)
                    .map(|spec| spec.annotations)
                    .unwrap_or_default();
                let (call, decision) = gate::judge(
                    agent,
                    &cursor.skills,
                    self.hooks.as_ref(),
                    self.events.as_ref(),
                    &mut step,
                    annotations,
                    call,
                )
                .await?;
                self.observer.observe(Progress::ToolCall {
                    call: call.clone(),
                    decision: decision.clone(),
                });
                records.push(ToolRecord {
                    call,
                    decision,
                    result: None,
                    children: Vec::new(),
                    blocks: Vec::new(),
                });
            }
            let pending: Vec<PendingCall> = records
                .iter()
                .filter(|record| record.decision.verdict == Verdict::Ask)
                .map(|record| PendingCall {
                    call: record.call.clone(),
                    reason: PendingReason::asked_by(&record.decision),
                })
                .collect();
            if !pending.is_empty() {
                match self.approver.decide(&pending).await {
                    Some(answers) if answers.len() == pending.len() => {
                        let decided: BTreeMap<String, Approval> = pending
                            .iter()
                            .map(|pending| pending.call.id.clone())
                            .zip(answers)
                            .collect();
                        records = apply_decisions(&cursor.run_id, records, &pending, &decided)?;
                    }
                    _ => {
                        self.run_calls(
                            &mut cursor,
                            Some(&assistant),
                            &mut records,
                            &mut step,
                            &Requester::default(),
                        )
                        .await?;
                        self.commit(
                            &mut cursor,
                            vec![assistant],
                            records,
                            step.into_effects(),
                            Disposition::Waiting {
                                pending: pending.clone(),
                            },
                        )
                        .await?;
                        return Ok(RunOutcome::Waiting {
                            run_id: cursor.run_id.clone(),
                            pending,
                        });
                    }
                }
            }
            self.execute(
                &mut cursor,
                Some(assistant),
                records,
                step,
                &Requester::default(),
            )
            .await?;
        }
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

    /// Whether a call of `name` lost to a crash left nothing an intent would
    /// have to own up to, because the host grants it nothing that acts past
    /// the step ([`Reach::Outcome`]) or its tool is vouched read-only or
    /// idempotent: a served call of it needs no intent, and one an
    /// interrupted step recorded runs again on resume. Its spec is read only
    /// when the grants do not decide.
    fn leaves_no_trace(&self, name: &str) -> bool {
        self.tools.reach(name) == Reach::Outcome
            || self
                .tools
                .spec(name)
                .is_some_and(|spec| spec.annotations.repeatable())
    }

    /// Run the allowed calls of `records` that have no result yet, answer the
    /// denied ones, run the step-end hooks, and commit the step. Returns the
    /// records as committed.
    pub(crate) async fn execute(
        &self,
        cursor: &mut Cursor,
        assistant: Option<Message>,
        mut records: Vec<ToolRecord>,
        mut step: StepState,
        requester: &Requester,
    ) -> Result<Vec<ToolRecord>, RunError> {
        self.run_calls(
            cursor,
            assistant.as_ref(),
            &mut records,
            &mut step,
            requester,
        )
        .await?;
        self.settle(cursor, assistant, records, step).await
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

    /// Run the allowed calls of `records` that have no result yet
    /// concurrently, each with a gate for the calls its tool makes; then, in
    /// the model's call order, admit the writes of each one's nested hooks and
    /// its own, pass its result through the after-tool-call hooks, and record
    /// its nested calls as its children. The calls are recorded as an intent
    /// first, so a crash cannot hide that they started.
    pub(crate) async fn run_calls(
        &self,
        cursor: &mut Cursor,
        assistant: Option<&Message>,
        records: &mut [ToolRecord],
        step: &mut StepState,
        requester: &Requester,
    ) -> Result<(), RunError> {
        let runnable: Vec<usize> = records
            .iter()
            .enumerate()
            .filter(|(_, record)| {
                record.result.is_none() && record.decision.verdict == Verdict::Allow
            })
            .map(|(index, _)| index)
            .collect();
        if runnable.is_empty() {
            return Ok(());
        }
        let effects = || {
            runnable
                .iter()
                .any(|&index| !self.leaves_no_trace(&records[index].call.name))
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
            },
            step,
        );
        let gates: Vec<Arc<CallGate>> = runnable
            .iter()
            .map(|&index| CallGate::top(&nested, &records[index].call.id))
            .collect();
        let calls = runnable.iter().zip(&gates).map(|(&index, gate)| {
            let call = &records[index].call;
            self.tools.call(
                &call.name,
                call.args.clone(),
                gate.context(Arc::clone(&view), Arc::default()),
            )
        });
        let outcomes = futures_util::future::join_all(calls).await;
        for ((index, outcome), gate) in runnable.iter().zip(outcomes).zip(&gates) {
            let call = &records[*index].call;
            self.events.record(outcome.events);
            self.events.record(gate.take_events());
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
                    match self.admit_call(step, call, writes, files, skills)? {
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
            .await?;
            records[*index].children = gate.take_children();
            // A hook that judged the result saw its JSON alone, so it cannot
            // vouch for blocks it never saw: they reach no one.
            let judged = !self.hooks.handlers(HookPhase::AfterToolCall).is_empty();
            if matches!(observed, CallResult::Output(_)) && !judged {
                records[*index].blocks = blocks;
            }
            records[*index].result = Some(observed);
        }
        Ok(())
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
        let again = step.admit_skills(&call.id, skills);
        Ok(Ok((!again.is_empty()).then(|| {
            serde_json::json!({
                "skills": again,
                "status": "already active: its instructions are in the conversation above",
            })
        })))
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
                    Verdict::Allow if !self.leaves_no_trace(&record.call.name) => {
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
        if pending.is_empty() {
            let step = cursor.step(agent);
            self.execute(
                cursor,
                intent.assistant,
                intent.calls,
                step,
                &Requester::default(),
            )
            .await?;
            return Ok(None);
        }
        let settled = pending
            .iter()
            .all(|pending| decisions.contains_key(&pending.call.id));
        if settled {
            let records = apply_decisions(&cursor.run_id, intent.calls, &pending, decisions)?;
            let step = cursor.step(agent);
            self.execute(
                cursor,
                intent.assistant,
                records,
                step,
                &Requester::default(),
            )
            .await?;
            return Ok(None);
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

    async fn commit(
        &self,
        cursor: &mut Cursor,
        messages: Vec<Message>,
        tools: Vec<ToolRecord>,
        effects: StepEffects,
        disposition: Disposition,
    ) -> Result<(), RunError> {
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
            files: self.files.changes(&effects.files),
        };
        let receipt = self
            .store
            .commit(&commit, reach(self.commits, &commit.files))
            .await?;
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

/// A call whose arguments are not a JSON object (a model that streamed broken
/// JSON) is answered with an `invalid-input` error the model sees, and never
/// reaches the gate or a tool.
pub(crate) fn malformed(call: &ToolCall) -> Option<ToolRecord> {
    if call.args.is_object() {
        return None;
    }
    let raw = match &call.args {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    let shown: String = raw.chars().take(200).collect();
    Some(ToolRecord {
        call: call.clone(),
        decision: Decision::by(
            Decider::Host,
            Verdict::Allow,
            "not run: the arguments are not a JSON object".into(),
        ),
        result: Some(CallResult::Error(ToolError::new(
            ToolErrorKind::InvalidInput,
            format!(
                "the arguments for `{}` are not a JSON object: {shown}; call the tool again with a JSON object",
                call.name
            ),
        ))),
        children: Vec::new(),
        blocks: Vec::new(),
    })
}

/// What the model sees of the state: the declared keys, or everything when
/// none is declared.
fn visible_state<'a>(
    agent: &AgentDef,
    state: &'a BTreeMap<String, Value>,
) -> std::borrow::Cow<'a, BTreeMap<String, Value>> {
    if agent.state.is_empty() {
        return std::borrow::Cow::Borrowed(state);
    }
    std::borrow::Cow::Owned(
        state
            .iter()
            .filter(|(key, _)| agent.state.contains_key(*key))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
    )
}

/// Turn each pending call's decision into an allow or deny verdict.
pub(crate) fn apply_decisions(
    run_id: &str,
    mut records: Vec<ToolRecord>,
    pending: &[PendingCall],
    decisions: &BTreeMap<String, Approval>,
) -> Result<Vec<ToolRecord>, RunError> {
    if let Some(unknown) = decisions
        .keys()
        .find(|id| !pending.iter().any(|pending| &pending.call.id == *id))
    {
        return Err(RunError::UnknownCall {
            run_id: run_id.to_owned(),
            call_id: unknown.clone(),
        });
    }
    for waiting in pending {
        let approval =
            decisions
                .get(&waiting.call.id)
                .ok_or_else(|| RunError::MissingDecision {
                    run_id: run_id.to_owned(),
                    call_id: waiting.call.id.clone(),
                })?;
        if let Some(record) = records
            .iter_mut()
            .find(|record| record.call.id == waiting.call.id)
        {
            let asked = record.decision.rule.take();
            record.decision = Decision::answered(approval.clone(), asked);
        }
    }
    Ok(records)
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
