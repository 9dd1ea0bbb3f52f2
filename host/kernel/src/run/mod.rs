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
//!
//! The loop lives in rooms with one job each: this module holds the
//! [`Runtime`] and its ports; [`start`] opens a run, [`steps`] drives it one
//! model step after another, [`resume`] goes on from the last commit, and
//! [`cursor`] is where a run stands between commits. What every step does
//! with its calls, whoever asked for them (the model, a served request, a
//! tool), is in [`step`]: judge and ask, run, commit.

mod cursor;
mod resume;
mod start;
pub(crate) mod step;
mod steps;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::agent::AgentDef;
use crate::approval::{Approver, DeferApprovals};
use crate::commit::{CommitError, CommitStore, Durability, EndCause, ParentLink, PendingCall};
use crate::delegation::budget::TreeBudget;
use crate::delegation::shown::Shown;
use crate::event::EventSink;
use crate::files::{FileConflict, FileLedger, NoFiles, PublishError};
use crate::hooks::{HookSet, NoHooks};
use crate::merge::StateConflict;
use crate::model::{ModelProvider, ModelResolver};
use crate::progress::{Observer, StepEvents, Unobserved};
use crate::reload::Reloadable;
use crate::skills::{ActiveSkills, SkillCatalog, SkillChange};
use crate::spans::SpanContent;
use crate::state::StateWrite;
use crate::tool::{ToolSet, ToolSpec};

pub(crate) use cursor::{Cursor, Transcript};

/// What a sub-agent's run commits with its prompt: its parent's counts
/// and active skills, so that its counters count on from its parent's and
/// its parent's skills narrow its calls too.
#[derive(Debug, Clone, Default)]
pub(crate) struct Seed {
    pub(crate) state: Vec<StateWrite>,
    pub(crate) skills: Vec<SkillChange>,
}

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
    /// The run is a sub-agent's, which goes on only with the run above it.
    #[error(
        "run {run_id} is a sub-agent's run in the tree of run {root}: resume that run (`cordon runs resume {root}`), which goes on with it"
    )]
    SubAgentRun {
        /// The sub-agent's run.
        run_id: String,
        /// The run at the top of its tree.
        root: String,
    },
    /// A run id holds `/`, which names sub-agents' runs.
    #[error(
        "run id {0:?} holds `/`, which names sub-agents' runs (`RUN/CALL`); choose an id without it"
    )]
    InvalidRunId(String),
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
    pub(crate) fn durability(self) -> Durability {
        match self {
            Self::Always => Durability::Disk,
            Self::ForEffects => Durability::Process,
        }
    }
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
    /// Where sub-agents naming their own model find it.
    models: Option<Arc<dyn ModelResolver>>,
    /// For the runtime of a sub-agent's run, the call that delegated it.
    link: Option<ParentLink>,
    /// What a sub-agent's run opens with: its parent's counters and active
    /// skills.
    seed: Seed,
    /// What the tree of runs being driven may still spend, when bounded.
    budget: Option<Arc<TreeBudget>>,
    /// How many sub-agents' runs the tree of each root has opened, counted
    /// from the store once and then as they open.
    opened: Arc<std::sync::Mutex<BTreeMap<String, u32>>>,
    /// Whether a call nobody can answer now makes the run wait, or is
    /// denied: the sub-agents of a served call, which nobody resumes, deny.
    waits: bool,
    /// Whether the spans of calls carry their arguments and results.
    pub(crate) span_content: SpanContent,
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
            models: None,
            link: None,
            seed: Seed::default(),
            budget: None,
            opened: Arc::default(),
            waits: true,
            span_content: SpanContent::Omitted,
        }
    }

    /// Deny the calls nobody can answer now instead of waiting for them.
    pub(crate) fn never_waiting(mut self) -> Self {
        self.waits = false;
        self
    }

    /// Whether a call nobody can answer now makes a run of this runtime wait.
    pub(crate) fn waits(&self) -> bool {
        self.waits
    }

    /// Find the models sub-agents name through `models`.
    pub fn with_models(mut self, models: Arc<dyn ModelResolver>) -> Self {
        self.models = Some(models);
        self
    }

    /// The runtime of the sub-agent's run `link` opens or goes on with: this
    /// one's ports, with `model`, the file ledger `files` and audit events of
    /// its own. Its calls and their results are shown through this
    /// runtime's observer, named by their path. A run it opens
    /// starts with `seed`. Its calls pass this runtime's hooks and those the
    /// sub-agent chooses (`hooks`).
    pub(crate) fn for_child(
        &self,
        (model, hooks): (Arc<dyn ModelProvider>, Option<&[String]>),
        files: Arc<dyn FileLedger>,
        link: ParentLink,
        seed: Seed,
    ) -> Self {
        let hooks = hooks
            .and_then(|more| self.hooks.widened(more))
            .unwrap_or_else(|| Arc::clone(&self.hooks));
        Self {
            model,
            hooks,
            files,
            events: Arc::new(StepEvents::new(Arc::clone(self.events.live()))),
            observer: Arc::new(Shown::new(Arc::clone(&self.observer), &link.call_id)),
            reloads: None,
            link: Some(link),
            seed,
            ..self.clone()
        }
    }

    /// This runtime driving the tree of a root run of `agent` whose runs
    /// have spent `spent` tokens before, within its budget, when it sets one.
    pub(crate) fn budgeted(&self, agent: &AgentDef, spent: u64) -> Self {
        Self {
            budget: TreeBudget::new(&agent.delegation, spent).map(Arc::new),
            ..self.clone()
        }
    }

    /// The budget of the tree of runs being driven, when bounded.
    pub(crate) fn budget(&self) -> Option<&TreeBudget> {
        self.budget.as_deref()
    }

    /// Count a sub-agent's run about to open in the tree of `root`: `Err`
    /// with how many it has opened when that is `max` already.
    pub(crate) async fn open_child_run(
        &self,
        root: &str,
        max: u32,
    ) -> Result<Result<(), u32>, RunError> {
        let known = self.lock_opened().get(root).copied();
        let opened = match known {
            Some(opened) => opened,
            None => {
                let beneath = format!("{root}/");
                let counted = self
                    .store
                    .runs()
                    .await?
                    .iter()
                    .filter(|run| run.header.run_id.starts_with(&beneath))
                    .count();
                u32::try_from(counted).unwrap_or(u32::MAX)
            }
        };
        let mut all = self.lock_opened();
        let count = all.entry(root.to_owned()).or_insert(opened);
        if *count >= max {
            return Ok(Err(*count));
        }
        *count += 1;
        Ok(Ok(()))
    }

    fn lock_opened(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u32>> {
        self.opened
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// This runtime with `budget` for the runs it drives.
    pub(crate) fn with_budget(mut self, budget: Option<Arc<TreeBudget>>) -> Self {
        self.budget = budget;
        self
    }

    /// The budget of the tree, shared.
    pub(crate) fn shared_budget(&self) -> Option<Arc<TreeBudget>> {
        self.budget.clone()
    }

    /// What a run this runtime opens commits with its prompt.
    pub(crate) fn seed(&self) -> &Seed {
        &self.seed
    }

    /// The run at the top of the tree the run `run_id` of this runtime
    /// belongs to, and how many delegations lie below it.
    pub(crate) fn tree_of<'a>(&'a self, run_id: &'a str) -> (&'a str, u32) {
        match &self.link {
            Some(link) => (&link.root, link.depth),
            None => (run_id, 0),
        }
    }

    /// The link of the sub-agent's run this runtime opens.
    pub(crate) fn link(&self) -> Option<&ParentLink> {
        self.link.as_ref()
    }

    /// The model of this runtime's runs.
    pub(crate) fn model(&self) -> &Arc<dyn ModelProvider> {
        &self.model
    }

    /// The resolver of sub-agents' models, when the host gave one.
    pub(crate) fn models(&self) -> Option<&dyn ModelResolver> {
        self.models.as_deref()
    }

    /// The file ledger of this runtime's runs.
    pub(crate) fn files(&self) -> &Arc<dyn FileLedger> {
        &self.files
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

    /// Whether the spans of calls carry their arguments and results, as the
    /// step commit records them ([`SpanContent::Omitted`] unless told).
    pub fn with_span_content(mut self, content: SpanContent) -> Self {
        self.span_content = content;
        self
    }

    /// Record `metadata` in the header of every run this runtime starts.
    pub fn with_run_metadata(mut self, metadata: BTreeMap<String, String>) -> Self {
        self.metadata = Arc::new(metadata);
        self
    }

    /// Record `key` = `value` too in the header of every run this runtime
    /// starts.
    pub fn with_run_metadata_entry(mut self, key: &str, value: String) -> Self {
        Arc::make_mut(&mut self.metadata).insert(key.to_owned(), value);
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
            .filter(|spec| crate::delegation::spec::sub_agent(agent, &spec.name).is_none())
            .chain(crate::delegation::spec::specs(agent))
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
        if !agent.uses_tool(name) || !skills.offers(name) {
            None
        } else if let Some(sub) = crate::delegation::spec::sub_agent(agent, name) {
            agent.agents.get(sub).map(|sub| sub.spec.clone())
        } else {
            self.tools.spec(name)
        }
    }

    /// Whether a step of `agent` may call `name` while `skills` are active,
    /// under the tools in force now, without pinning them.
    pub(crate) fn offers_now(&self, agent: &AgentDef, skills: &ActiveSkills, name: &str) -> bool {
        if !agent.uses_tool(name) || !skills.offers(name) {
            false
        } else if let Some(sub) = crate::delegation::spec::sub_agent(agent, name) {
            agent.agents.contains_key(sub)
        } else {
            match &self.reloads {
                Some(reloads) => reloads.in_force().0.spec(name).is_some(),
                None => self.tools.spec(name).is_some(),
            }
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
}
