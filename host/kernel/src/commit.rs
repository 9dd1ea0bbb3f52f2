//! The commit port: the only place a run's facts become durable.
//!
//! A run is a sequence of step commits. Each carries the messages, tool
//! records, state writes and audit events of one step, plus the run's
//! disposition afterwards, and is applied all or nothing. Sequence numbers
//! start at 1 and must grow by exactly one: a store refuses a commit whose
//! number is taken, so two writers can never both commit step N.
//!
//! Before tools with effects run, the loop records an [`Intent`] naming them. If
//! the process dies before the step commits, the intent tells a resumed run
//! which calls may have happened, so a call that is neither idempotent nor
//! read-only is never silently run twice.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::ContentBlock;
use crate::event::Event;
use crate::files::{FileChange, StepFiles};
use crate::message::{CallResult, Message, ToolCall};
use crate::model::Usage;
use crate::policy::{Decider, Decision};
use crate::skills::{ActiveSkills, SkillChange};
use crate::state::{StateWrite, apply_writes};

/// A tool call, how the gate judged it, and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRecord {
    /// The call.
    pub call: ToolCall,
    /// The permission decision.
    pub decision: Decision,
    /// Its result; `None` while it waits for approval.
    pub result: Option<CallResult>,
    /// The calls this call's tool made of other tools, each judged by the
    /// same gate, in the order they were made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ToolRecord>,
    /// The content blocks its result carries beside its JSON, for clients
    /// that show them. They are committed once, with the call's tool
    /// message ([`Message::Tool`]), never in the record.
    #[serde(skip)]
    pub blocks: Vec<ContentBlock>,
    /// When it ran and for how long; `None` for a call that never ran
    /// (denied, waiting) and for a tool's own calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<CallTiming>,
}

/// When a call ran: what a timeline of a step's calls needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallTiming {
    /// Its start, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// How long it took, from its start to its outcome, in microseconds.
    pub took_us: u64,
}

impl CallTiming {
    /// A call that started at `wall` (read when `clock` was) and ended now.
    pub fn since(wall: std::time::SystemTime, clock: std::time::Instant) -> Self {
        let started_ms = wall
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            });
        let took_us = u64::try_from(clock.elapsed().as_micros()).unwrap_or(u64::MAX);
        Self {
            started_ms,
            took_us,
        }
    }
}

impl ToolRecord {
    /// This record as a commit keeps it: its blocks travel in the call's
    /// tool message instead, and are not copied.
    pub(crate) fn committed(&self) -> Self {
        Self {
            call: self.call.clone(),
            decision: self.decision.clone(),
            result: self.result.clone(),
            children: self.children.clone(),
            blocks: Vec::new(),
            timing: self.timing,
        }
    }
}

/// Why a call waits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum PendingReason {
    /// The policy asks a person first.
    Approval {
        /// The rule that asked, as written, or `None` when the policy's default did;
        /// for a hook that asked, which one and why.
        rule: Option<String>,
        /// Who asked: the policy unless said otherwise.
        #[serde(default, skip_serializing_if = "Decider::is_policy")]
        by: Decider,
    },
    /// The call may or may not have run before a crash, and running it again
    /// is not known to be safe.
    Indeterminate,
    /// The call delegated its task to a sub-agent, whose run `run_id` waits
    /// on calls of its own; each is decided by its path from this call
    /// (`call-2-1/call-1-3`), and the sub-agent goes on where it stopped.
    Delegated {
        /// The sub-agent's run.
        run_id: String,
        /// The calls it waits on.
        pending: Vec<PendingCall>,
    },
}

impl PendingReason {
    /// Why the call is put to a person, when a rule or a hook asked: the
    /// permission rule quoted, or the hook named with its reason.
    pub fn asked(&self) -> Option<String> {
        match self {
            Self::Approval {
                rule: Some(rule),
                by: Decider::Policy,
            } => Some(format!("permission rule `{rule}` asks")),
            Self::Approval { rule: None, .. } => Some("the default permission asks".to_owned()),
            Self::Approval {
                rule: Some(why), ..
            } => Some(why.clone()),
            Self::Indeterminate | Self::Delegated { .. } => None,
        }
    }

    /// The reason a call waits that `decision`, an ask, gives.
    pub fn asked_by(decision: &Decision) -> Self {
        Self::Approval {
            rule: decision.rule.clone(),
            by: decision.by,
        }
    }
}

/// A call waiting for a person's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call.
    pub call: ToolCall,
    /// Why it waits.
    #[serde(flatten)]
    pub reason: PendingReason,
}

impl PendingCall {
    /// The decisions this pending call needs: itself, or for a delegated
    /// call, every call its sub-agent's run waits on, each with its path as
    /// its id: the ids of the delegating calls above it and its own, joined
    /// by `/` (`call-2-1/call-1-3`). The run a path's call belongs to is
    /// the run waiting followed by the path's delegating calls
    /// (`RUN/call-2-1`).
    pub fn leaves(&self) -> Vec<PendingCall> {
        match &self.reason {
            PendingReason::Delegated { pending, .. } => pending
                .iter()
                .flat_map(PendingCall::leaves)
                .map(|mut inner| {
                    inner.call.id = format!("{}/{}", self.call.id, inner.call.id);
                    inner
                })
                .collect(),
            _ => vec![self.clone()],
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", content = "detail", rename_all = "kebab-case")]
pub enum EndCause {
    /// The model gave its final answer.
    FinalAnswer,
    /// The step limit was reached.
    MaxSteps,
    /// Someone cancelled the run.
    Cancelled,
    /// The server of a served run (`cordon mcp`) stopped serving, because
    /// its clients went away or it was stopped; a served run has no final
    /// answer of its own.
    ServerStopped,
    /// A failure the run cannot continue past.
    Error(String),
    /// A bound on the whole tree of runs was reached (`[delegation]
    /// max-tokens` or `max-seconds`); says which, and by how much.
    Limit(String),
    /// A before-inference hook refused the next model request, or failed.
    Refused {
        /// The bundle of the hook that refused or failed.
        hook: String,
        /// Why it refused, or how it failed.
        reason: String,
    },
}

/// Where a run stands after a commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "disposition", rename_all = "kebab-case")]
pub enum Disposition {
    /// More steps follow.
    Running,
    /// Paused until each pending call is approved or denied.
    Waiting {
        /// The calls waiting for a decision.
        pending: Vec<PendingCall>,
    },
    /// Over.
    Ended {
        /// Why it ended.
        #[serde(flatten)]
        cause: EndCause,
        /// The model's last reply, when the run ended on one.
        answer: Option<String>,
    },
}

/// One step's facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCommit {
    /// The run.
    pub run_id: String,
    /// Position in the run, from 1.
    pub seq: u64,
    /// Messages added by this step.
    pub messages: Vec<Message>,
    /// Tool calls decided or finished in this step.
    pub tools: Vec<ToolRecord>,
    /// Changes to run-scoped state, applied with the commit.
    pub state: Vec<StateWrite>,
    /// Changes to the thread's state, applied with the commit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_state: Vec<StateWrite>,
    /// Audit events of the step.
    pub events: Vec<Event>,
    /// Skills the step activated or dropped, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<SkillChange>,
    /// Where the run stands afterwards.
    pub disposition: Disposition,
    /// On a run's first commit, the earlier run whose conversation it goes
    /// on with, carried at the start of this commit's messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continues: Option<Continued>,
    /// The tokens the step's model request used, for a step that asked the
    /// model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// File changes the step staged in a transactional workspace. Stores keep
    /// them apart from the rest of the step (see [`CommitStore::files`]), so
    /// loading a run does not load every file it wrote.
    #[serde(skip)]
    pub files: Vec<FileChange>,
}

/// The conversation a run carries over from an earlier run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Continued {
    /// The earlier run.
    pub run_id: String,
    /// How many messages came from it.
    pub messages: usize,
}

/// Proof that a commit is as durable as it was asked to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Receipt {
    /// The committed step.
    pub seq: u64,
}

/// How far a write (a step's commit, or an intent) must reach before the
/// store answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// On disk: a resume after any crash, a power loss included, finds it.
    /// A run the loop resumes needs this for its intents, so that it never
    /// re-runs a call that may have had its effect, and every step's commit
    /// has it unless its runtime was built to commit less far.
    Disk,
    /// Out of the process: every reader sees it at once and the store holds
    /// it when Cordon dies; the store takes it to disk soon after (a SQLite
    /// store within a few milliseconds, Postgres through its WAL writer), and
    /// any later write that reaches the disk takes it along. A power loss in
    /// between loses it, never a part of it. An intent that only records that
    /// an effect may have happened (a served request, which is never
    /// resumed) needs no more, nor does the commit of a server whose operator
    /// chose answers over the last moment's records.
    Process,
}

/// Calls about to run in step `seq`, recorded before they start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intent {
    /// The run.
    pub run_id: String,
    /// The step the calls belong to.
    pub seq: u64,
    /// The model turn that requested them, when it is not committed yet.
    pub assistant: Option<Message>,
    /// The calls, with their decisions.
    pub calls: Vec<ToolRecord>,
}

/// Identity of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunHeader {
    /// Unique id.
    pub run_id: String,
    /// The agent it runs.
    pub agent: String,
    /// Seconds since the Unix epoch at creation.
    pub created: u64,
    /// The thread the run belongs to: runs of one thread share its
    /// thread-scoped state.
    #[serde(default = "default_thread")]
    pub thread: String,
    /// What the embedder needs to resume the run later, such as the files it
    /// was started with; the runtime records it and never interprets it.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// For a sub-agent's run, the call that delegated to it; `None` for a
    /// run of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentLink>,
}

/// Where a sub-agent's run hangs in its tree: the call that delegated to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ParentLink {
    /// The run whose call it is.
    pub run_id: String,
    /// The step of that run the call belongs to.
    pub seq: u64,
    /// The call.
    pub call_id: String,
    /// The run at the top of the tree, which no call delegated to.
    pub root: String,
    /// How many delegations lie between it and the root: 1 for a child of
    /// the root.
    pub depth: u32,
}

/// The thread of runs started without naming one.
pub const DEFAULT_THREAD: &str = "default";

fn default_thread() -> String {
    DEFAULT_THREAD.to_owned()
}

/// Everything committed for a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// Its identity.
    pub header: RunHeader,
    /// Its commits, in order.
    pub commits: Vec<StepCommit>,
    /// Calls recorded as starting after the last commit, if any.
    pub intent: Option<Intent>,
}

impl RunRecord {
    /// The number of the last commit, 0 before the first.
    pub fn last_seq(&self) -> u64 {
        self.commits.last().map_or(0, |commit| commit.seq)
    }

    /// The model step each commit belongs to, in commit order: how many of
    /// the model's own turns the run had committed up to and including it,
    /// so 0 for the prompt alone, and a waiting step and the commit that
    /// decides its calls share a number. Turns carried from an earlier run do
    /// not count. This is the step `max-steps` counts, progress and
    /// `runs show` print, and call ids of scripted models carry.
    pub fn steps(&self) -> Vec<u32> {
        let mut seen = 0_usize;
        let mut turns = 0_u32;
        let carried = self.carried();
        self.commits
            .iter()
            .map(|commit| {
                for message in &commit.messages {
                    if seen >= carried && matches!(message, Message::Assistant { .. }) {
                        turns = turns.saturating_add(1);
                    }
                    seen += 1;
                }
                turns
            })
            .collect()
    }

    /// The conversation so far.
    pub fn messages(&self) -> Vec<Message> {
        self.commits
            .iter()
            .flat_map(|commit| commit.messages.iter().cloned())
            .collect()
    }

    /// How many messages at the start of the conversation were carried over
    /// from an earlier run.
    pub fn carried(&self) -> usize {
        self.commits
            .first()
            .and_then(|commit| commit.continues.as_ref())
            .map_or(0, |continued| continued.messages)
    }

    /// The conversation, ready to be carried into a run that goes on with
    /// it: every call id renamed `earlier-N`, in order, so that none can
    /// collide with the new run's own. `None` while the run waits on calls,
    /// whose results are not yet part of it.
    pub fn conversation(&self) -> Option<Vec<Message>> {
        if matches!(self.disposition(), Disposition::Waiting { .. }) {
            return None;
        }
        let mut renamed = BTreeMap::new();
        let mut rename = |id: &str| -> String {
            let next = renamed.len() + 1;
            renamed
                .entry(id.to_owned())
                .or_insert_with(|| format!("earlier-{next}"))
                .clone()
        };
        let mut messages = self.messages();
        for message in &mut messages {
            match message {
                Message::Assistant { tool_calls, .. } => {
                    for call in tool_calls {
                        call.id = rename(&call.id);
                    }
                }
                Message::Tool { call_id, .. } => *call_id = rename(call_id),
                Message::User { .. } => {}
            }
        }
        Some(messages)
    }

    /// Where the run stands; `Running` before the first commit.
    pub fn disposition(&self) -> Disposition {
        self.commits
            .last()
            .map_or(Disposition::Running, |commit| commit.disposition.clone())
    }

    /// The skills active after the last commit: every commit's skill
    /// changes applied in order.
    pub fn skills(&self) -> ActiveSkills {
        let mut active = ActiveSkills::default();
        for commit in &self.commits {
            active.apply(&commit.skills);
        }
        active
    }

    /// The model tokens (read and written) the run's steps used.
    pub fn tokens(&self) -> u64 {
        self.commits
            .iter()
            .filter_map(|commit| commit.usage)
            .map(|usage| usage.input_tokens + usage.output_tokens)
            .sum()
    }

    /// The committed state: every commit's writes applied in order.
    pub fn state(&self) -> Result<BTreeMap<String, Value>, CommitError> {
        let mut state = BTreeMap::new();
        for commit in &self.commits {
            apply_writes(&mut state, &commit.state).map_err(|error| CommitError::Corrupt {
                location: format!("run {} step {}", self.header.run_id, commit.seq),
                message: error.to_string(),
            })?;
        }
        Ok(state)
    }
}

/// A run as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Its identity.
    pub header: RunHeader,
    /// Its last commit number.
    pub last_seq: u64,
    /// Where it stands.
    pub disposition: Disposition,
}

/// Why a commit port operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommitError {
    /// Another writer committed this step first.
    #[error("run {run_id}: step {seq} is already committed")]
    Conflict {
        /// The run.
        run_id: String,
        /// The step number already taken.
        seq: u64,
    },
    /// A commit skipped a step number.
    #[error("run {run_id}: expected step {expected}, got {seq}")]
    OutOfOrder {
        /// The run.
        run_id: String,
        /// The next step number: the last committed plus one.
        expected: u64,
        /// The step number the commit carried.
        seq: u64,
    },
    /// No run has this id.
    #[error("no run with id {0}")]
    UnknownRun(String),
    /// A run with this id exists already.
    #[error("a run with id {0} exists already")]
    DuplicateRun(String),
    /// Stored data cannot be read back.
    #[error("{location} is unreadable: {message}")]
    Corrupt {
        /// Where the bad data lies, such as a run and step.
        location: String,
        /// What is wrong with it.
        message: String,
    },
    /// The writer's claim on the run lapsed or passed to another worker, so
    /// it may write nothing more of the run.
    #[error(
        "run {run_id}: the lease with fencing token {token} is no longer held (it lapsed, \
         or the run was claimed again or deleted), so this worker may not write it"
    )]
    Fenced {
        /// The run.
        run_id: String,
        /// The fencing token of the lease the writer held.
        token: u64,
    },
    /// The storage itself failed.
    #[error("commit store failure: {0}")]
    Storage(String),
}

/// The port that makes a run's facts durable.
#[async_trait::async_trait]
pub trait CommitStore: Send + Sync {
    /// Register a new run.
    async fn create_run(&self, header: &RunHeader) -> Result<(), CommitError>;

    /// Record `commit`, all or nothing, as far as `durability` says,
    /// clearing the run's intent. Refuses a step number that is not the last
    /// plus one.
    async fn commit(
        &self,
        commit: &StepCommit,
        durability: Durability,
    ) -> Result<Receipt, CommitError>;

    /// Record calls about to start, as far as `durability` says.
    async fn record_intent(
        &self,
        intent: &Intent,
        durability: Durability,
    ) -> Result<(), CommitError>;

    /// Everything committed for `run_id`.
    async fn load(&self, run_id: &str) -> Result<RunRecord, CommitError>;

    /// The committed thread-scoped state of `thread`; empty for a thread no
    /// run has written.
    async fn thread_state(&self, thread: &str) -> Result<BTreeMap<String, Value>, CommitError>;

    /// Every run, oldest first.
    async fn runs(&self) -> Result<Vec<RunSummary>, CommitError>;

    /// Forget run `run_id` whole: its header, commits, intent, state and
    /// file changes, in one transaction. Its thread's state stays: it
    /// belongs to the thread's other runs too.
    async fn delete_run(&self, run_id: &str) -> Result<(), CommitError>;

    /// The file changes of each step of `run_id` that made any, in step order.
    async fn files(&self, run_id: &str) -> Result<Vec<StepFiles>, CommitError>;

    /// The last step of `run_id` whose file changes are in the real folder; 0
    /// when none are.
    async fn published(&self, run_id: &str) -> Result<u64, CommitError>;

    /// Record that the file changes of `run_id` up to step `seq` are in the
    /// real folder.
    async fn mark_published(&self, run_id: &str, seq: u64) -> Result<(), CommitError>;
}

/// Checks a store applies before accepting `commit` after `last_seq`.
pub fn check_sequence(commit: &StepCommit, last_seq: u64) -> Result<(), CommitError> {
    if commit.seq <= last_seq {
        Err(CommitError::Conflict {
            run_id: commit.run_id.clone(),
            seq: commit.seq,
        })
    } else if commit.seq != last_seq + 1 {
        Err(CommitError::OutOfOrder {
            run_id: commit.run_id.clone(),
            expected: last_seq + 1,
            seq: commit.seq,
        })
    } else {
        Ok(())
    }
}

/// A [`CommitStore`] in memory, for tests and embedders that persist elsewhere.
#[derive(Debug, Default)]
pub struct MemoryCommitStore {
    runs: Mutex<Runs>,
}

/// Every run, and each run's committed state kept current so that a commit
/// need not replay the whole run.
#[derive(Debug, Default)]
struct Runs {
    records: BTreeMap<String, RunRecord>,
    states: BTreeMap<String, BTreeMap<String, Value>>,
    threads: BTreeMap<String, BTreeMap<String, Value>>,
    files: BTreeMap<String, Vec<StepFiles>>,
    published: BTreeMap<String, u64>,
}

impl MemoryCommitStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Runs> {
        self.runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait::async_trait]
impl CommitStore for MemoryCommitStore {
    async fn create_run(&self, header: &RunHeader) -> Result<(), CommitError> {
        let mut runs = self.lock();
        if runs.records.contains_key(&header.run_id) {
            return Err(CommitError::DuplicateRun(header.run_id.clone()));
        }
        runs.records.insert(
            header.run_id.clone(),
            RunRecord {
                header: header.clone(),
                commits: Vec::new(),
                intent: None,
            },
        );
        Ok(())
    }

    async fn commit(
        &self,
        commit: &StepCommit,
        _durability: Durability,
    ) -> Result<Receipt, CommitError> {
        let mut runs = self.lock();
        let Runs {
            records,
            states,
            threads,
            files,
            ..
        } = &mut *runs;
        let record = records
            .get_mut(&commit.run_id)
            .ok_or_else(|| CommitError::UnknownRun(commit.run_id.clone()))?;
        check_sequence(commit, record.last_seq())?;
        let state = states.entry(commit.run_id.clone()).or_default();
        let mut next = state.clone();
        apply_writes(&mut next, &commit.state)
            .map_err(|error| CommitError::Storage(error.to_string()))?;
        let thread = threads.entry(record.header.thread.clone()).or_default();
        let mut next_thread = thread.clone();
        apply_writes(&mut next_thread, &commit.thread_state)
            .map_err(|error| CommitError::Storage(error.to_string()))?;
        *state = next;
        *thread = next_thread;
        // File changes are kept apart from their step, as a durable store
        // keeps them, in path order.
        let mut commit = commit.clone();
        if !commit.files.is_empty() {
            let mut changes = std::mem::take(&mut commit.files);
            changes.sort_by(|a, b| a.path.cmp(&b.path));
            files
                .entry(commit.run_id.clone())
                .or_default()
                .push(StepFiles {
                    seq: commit.seq,
                    changes,
                });
        }
        let seq = commit.seq;
        record.commits.push(commit);
        record.intent = None;
        Ok(Receipt { seq })
    }

    async fn record_intent(
        &self,
        intent: &Intent,
        _durability: Durability,
    ) -> Result<(), CommitError> {
        let mut runs = self.lock();
        let record = runs
            .records
            .get_mut(&intent.run_id)
            .ok_or_else(|| CommitError::UnknownRun(intent.run_id.clone()))?;
        record.intent = Some(intent.clone());
        Ok(())
    }

    async fn thread_state(&self, thread: &str) -> Result<BTreeMap<String, Value>, CommitError> {
        Ok(self.lock().threads.get(thread).cloned().unwrap_or_default())
    }

    async fn load(&self, run_id: &str) -> Result<RunRecord, CommitError> {
        self.lock()
            .records
            .get(run_id)
            .cloned()
            .ok_or_else(|| CommitError::UnknownRun(run_id.to_owned()))
    }

    async fn delete_run(&self, run_id: &str) -> Result<(), CommitError> {
        let mut runs = self.lock();
        if runs.records.remove(run_id).is_none() {
            return Err(CommitError::UnknownRun(run_id.to_owned()));
        }
        runs.states.remove(run_id);
        runs.files.remove(run_id);
        runs.published.remove(run_id);
        Ok(())
    }

    async fn runs(&self) -> Result<Vec<RunSummary>, CommitError> {
        let mut runs: Vec<RunSummary> = self
            .lock()
            .records
            .values()
            .map(|record| RunSummary {
                header: record.header.clone(),
                last_seq: record.last_seq(),
                disposition: record.disposition(),
            })
            .collect();
        runs.sort_by_key(|run| (run.header.created, run.header.run_id.clone()));
        Ok(runs)
    }

    async fn files(&self, run_id: &str) -> Result<Vec<StepFiles>, CommitError> {
        let runs = self.lock();
        if !runs.records.contains_key(run_id) {
            return Err(CommitError::UnknownRun(run_id.to_owned()));
        }
        Ok(runs.files.get(run_id).cloned().unwrap_or_default())
    }

    async fn published(&self, run_id: &str) -> Result<u64, CommitError> {
        let runs = self.lock();
        if !runs.records.contains_key(run_id) {
            return Err(CommitError::UnknownRun(run_id.to_owned()));
        }
        Ok(runs.published.get(run_id).copied().unwrap_or(0))
    }

    async fn mark_published(&self, run_id: &str, seq: u64) -> Result<(), CommitError> {
        let mut runs = self.lock();
        if !runs.records.contains_key(run_id) {
            return Err(CommitError::UnknownRun(run_id.to_owned()));
        }
        let published = runs.published.entry(run_id.to_owned()).or_default();
        *published = (*published).max(seq);
        Ok(())
    }
}
