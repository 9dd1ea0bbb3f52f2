//! Tools calling tools inside a run. A call that a tool makes passes the same
//! gate as a call the model makes: the agent's tool list and policy, then the
//! before-tool-call hooks (so the budget counts it); a call the policy asks
//! about goes to the approver, and is denied when no one can answer at once
//! (a tool's own call cannot wait for a later `runs resume`). The result
//! passes the after-tool-call hooks before the calling tool sees it, and the
//! call is recorded as a child of the calling call.
//!
//! The hooks of nested calls admit their writes into one state per step
//! ([`StepCalls`]), so a budget sees every nested call of the step however the
//! calls interleave. The hooks of one step's nested calls take turns: a hook
//! reads the state and has its writes admitted before the next hook reads,
//! so two concurrent calls cannot both pass a budget on the same count. When the step's calls are done, the loop admits those
//! batches into the step itself, each with its top-level call, in the model's
//! call order, where a conflict with any other write fails the step as
//! always. A nested tool's own state writes and file changes travel back to
//! its caller with its result and join the caller's; the audit events of a
//! call's nested calls stay with the call's gate, which the loop admits
//! after the call, in the model's call order.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use serde_json::Value;

use crate::agent::AgentDef;
use crate::approval::Approver;
use crate::commit::ToolRecord;
use crate::event::{Event, EventSink};
use crate::file_rules::FileRules;
use crate::files::FileWrites;
use crate::gate;
use crate::hooks::HookSet;
use crate::merge::{Admit, Refusal, StateConflict, StepState, Writer};
use crate::message::{CallResult, ToolCall};
use crate::phases;
use crate::policy::{Decider, Decision, Verdict};
use crate::progress::{Observer, Progress, Trail};
use crate::requester::Requester;
use crate::run::step::judge::{Deny, ask, judged};
use crate::skills::{ActiveSkills, SKILL_TOOL};
use crate::state::{StateReader, StateWrite};
use crate::tool::{
    CallContext, NestedCalls, ToolAnnotations, ToolCallOutcome, ToolError, ToolErrorKind,
    ToolFuture, ToolOutput, ToolSet,
};

/// Why a tool's own call the gate asks about is denied when no one can
/// answer at once: it cannot wait for a later `runs resume`.
const CANNOT_WAIT: &str =
    "needs a person's approval, and a tool's own call cannot wait for approval";

/// The ports a step's nested calls run on.
pub(crate) struct StepPorts {
    pub(crate) agent: Arc<AgentDef>,
    /// The skills active as the step began.
    pub(crate) skills: Arc<ActiveSkills>,
    pub(crate) tools: Arc<dyn ToolSet>,
    pub(crate) hooks: Arc<dyn HookSet>,
    /// Where the kernel's own events are shown as they happen.
    pub(crate) live: Arc<dyn EventSink>,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) observer: Arc<dyn Observer>,
    /// Whoever asked for the step's calls: their cancellation, and whom
    /// their questions reach.
    pub(crate) requester: Requester,
    /// The file rules of a sub-agent's step, beside the run's own.
    pub(crate) rules: Option<Arc<FileRules>>,
}

/// What every nested call of one step shares.
pub(crate) struct StepCalls {
    ports: StepPorts,
    /// Each tool's effect annotations as the tool set reports them, looked up
    /// at the first nested call.
    annotations: OnceLock<BTreeMap<String, ToolAnnotations>>,
    admitted: Mutex<Admitted>,
    /// Held while one nested call's hooks run, from their first read of the
    /// state to their last admitted write.
    hooks_turn: futures_util::lock::Mutex<()>,
}

/// The nested hooks' writes of a step so far.
struct Admitted {
    /// The step's state as its calls began, with these writes on top.
    state: StepState,
    /// Every batch, with the top-level call it belongs to, in the order made.
    batches: Vec<Batch>,
}

/// One hook's writes for one nested call.
pub(crate) struct Batch {
    /// The top-level call the nested call descends from.
    pub(crate) root: String,
    pub(crate) writer: Writer,
    pub(crate) writes: Vec<StateWrite>,
}

impl StepCalls {
    /// The nested calls of a step whose calls begin on `step`'s state.
    pub(crate) fn new(ports: StepPorts, step: &StepState) -> Arc<Self> {
        Arc::new(Self {
            admitted: Mutex::new(Admitted {
                state: step.fork(),
                batches: Vec::new(),
            }),
            ports,
            annotations: OnceLock::new(),
            hooks_turn: futures_util::lock::Mutex::new(()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Admitted> {
        self.admitted.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The batches of the nested calls under top-level call `root`, in the
    /// order their hooks made them.
    pub(crate) fn take_batches(&self, root: &str) -> Vec<Batch> {
        let mut admitted = self.lock();
        let (mine, others) = std::mem::take(&mut admitted.batches)
            .into_iter()
            .partition(|batch| batch.root == root);
        admitted.batches = others;
        mine
    }

    fn annotations(&self, tool: &str) -> ToolAnnotations {
        self.annotations
            .get_or_init(|| {
                self.ports
                    .tools
                    .specs()
                    .into_iter()
                    .map(|spec| (spec.name, spec.annotations))
                    .collect()
            })
            .get(tool)
            .copied()
            .unwrap_or(ToolAnnotations::UNTRUSTED)
    }
}

/// Admission into the step's nested state on behalf of one top-level call.
struct NestedAdmit<'a> {
    calls: &'a StepCalls,
    root: &'a str,
}

impl Admit for NestedAdmit<'_> {
    fn view(&self) -> Arc<dyn StateReader> {
        self.calls.lock().state.view()
    }

    fn admit(&mut self, writer: Writer, writes: Vec<StateWrite>) -> Result<(), Refusal> {
        let mut admitted = self.calls.lock();
        let result = admitted.state.admit(writer.clone(), writes.clone());
        // A conflicting batch is kept, so that admitting the batches into the
        // step meets the same conflict and fails the step.
        if !matches!(result, Err(Refusal::Rejected(_))) {
            admitted.batches.push(Batch {
                root: self.root.to_owned(),
                writer,
                writes,
            });
        }
        result
    }
}

/// The gate of the calls one call makes: the handle a tool set hands the
/// calling tool.
pub(crate) struct CallGate {
    calls: Arc<StepCalls>,
    /// The top-level call of the chain.
    root: Arc<str>,
    /// The call this gate belongs to.
    id: String,
    /// How many calls enclose that call.
    depth: u32,
    made: AtomicU32,
    children: Mutex<Vec<ToolRecord>>,
    /// The audit events of the calls made through this gate, in order.
    events: Mutex<Vec<Event>>,
}

impl CallGate {
    /// The gate of top-level call `id`.
    pub(crate) fn top(calls: &Arc<StepCalls>, id: &str) -> Arc<Self> {
        Self::new(calls, id.into(), id.to_owned(), 0)
    }

    fn new(calls: &Arc<StepCalls>, root: Arc<str>, id: String, depth: u32) -> Arc<Self> {
        Arc::new(Self {
            calls: Arc::clone(calls),
            root,
            id,
            depth,
            made: AtomicU32::new(0),
            children: Mutex::new(Vec::new()),
            events: Mutex::new(Vec::new()),
        })
    }

    /// The context the call runs in, reading `state` and seeing `files`
    /// over the committed files.
    pub(crate) fn context(
        self: &Arc<Self>,
        state: Arc<dyn StateReader>,
        files: Arc<FileWrites>,
    ) -> CallContext {
        CallContext {
            state,
            nested: Some(Arc::clone(self) as Arc<dyn NestedCalls>),
            depth: self.depth,
            files,
            skills: Arc::clone(&self.calls.ports.skills),
            cancel: self.calls.ports.requester.cancel.clone(),
            asker: self.calls.ports.requester.asker.clone(),
            rules: self.calls.ports.rules.clone(),
        }
    }

    /// The calls the call made, in order.
    pub(crate) fn take_children(&self) -> Vec<ToolRecord> {
        std::mem::take(&mut self.children.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The audit events of the calls made through this gate, in order.
    pub(crate) fn take_events(&self) -> Vec<Event> {
        std::mem::take(&mut self.events.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn record_call(&self, record: ToolRecord) {
        self.children
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(record);
    }

    /// Judge `call`: its record with the decision it runs under, after
    /// asking the approver when the gate asks; a call nobody can answer at
    /// once is denied, with its result saying why.
    async fn judge(&self, call: ToolCall) -> Result<ToolRecord, StateConflict> {
        let ports = &self.calls.ports;
        let annotations = self.calls.annotations(&call.name);
        let mut admit = NestedAdmit {
            calls: &self.calls,
            root: &self.root,
        };
        if call.name == SKILL_TOOL {
            let decision = Decision::by(
                Decider::Host,
                Verdict::Deny,
                "only the model activates a skill, never a tool's own call".into(),
            );
            return Ok(judged(call, decision));
        }
        let turn = self.calls.hooks_turn.lock().await;
        let (call, decision) = gate::judge(
            &ports.agent,
            &ports.skills,
            ports.hooks.as_ref(),
            self,
            &mut admit,
            annotations,
            call,
        )
        .await?;
        drop(turn);
        let asked = ask(
            vec![judged(call, decision)],
            ports.approver.as_ref(),
            Deny(CANNOT_WAIT),
        );
        let Ok(mut records) = asked.await;
        Ok(records.remove(0))
    }

    async fn run(
        &self,
        name: &str,
        args: Value,
        state: Arc<dyn StateReader>,
        files: Arc<FileWrites>,
    ) -> ToolCallOutcome {
        let ports = &self.calls.ports;
        let number = self.made.fetch_add(1, Ordering::Relaxed) + 1;
        let call = ToolCall {
            id: format!("{}.{number}", self.id),
            name: name.to_owned(),
            args,
        };
        let record = match self.judge(call.clone()).await {
            Ok(record) => record,
            Err(conflict) => {
                let decision = Decision::by(
                    Decider::Host,
                    Verdict::Deny,
                    format!("the step's state cannot take a hook's writes: {conflict}"),
                );
                judged(call, decision)
            }
        };
        let ToolRecord {
            call,
            decision,
            result,
            ..
        } = record;
        ports.observer.observe(Progress::ToolCall {
            call: call.clone(),
            decision: decision.clone(),
        });
        if decision.verdict != Verdict::Allow {
            let result = result.unwrap_or_else(|| {
                CallResult::Error(ToolError::new(ToolErrorKind::Denied, decision.denial()))
            });
            return self.finish(call, decision, Vec::new(), result, None);
        }
        let child = Self::new(
            &self.calls,
            Arc::clone(&self.root),
            call.id.clone(),
            self.depth + 1,
        );
        let outcome = ports
            .tools
            .call(&call.name, call.args.clone(), child.context(state, files))
            .await;
        self.record(outcome.events);
        self.record(child.take_events());
        let (result, effects) = match outcome.result {
            Ok(output) => (
                CallResult::Output(output.content),
                Some((outcome.writes, outcome.files)),
            ),
            Err(error) => (CallResult::Error(error), None),
        };
        let mut admit = NestedAdmit {
            calls: &self.calls,
            root: &self.root,
        };
        let turn = self.calls.hooks_turn.lock().await;
        let observed = phases::observe(ports.hooks.as_ref(), self, &mut admit, &call, result)
            .await
            .unwrap_or_else(|conflict| {
                CallResult::Error(ToolError::new(
                    ToolErrorKind::Failed,
                    format!("the result was withheld: {conflict}"),
                ))
            });
        drop(turn);
        self.finish(call, decision, child.take_children(), observed, effects)
    }

    /// Record the finished `call` and give the caller what it sees: the
    /// result as the hooks left it, and, when the tool succeeded and the
    /// caller sees a result, the state writes and file changes it staged,
    /// which join the caller's. Its events stay with this gate.
    fn finish(
        &self,
        call: ToolCall,
        decision: Decision,
        children: Vec<ToolRecord>,
        result: CallResult,
        effects: Option<(Vec<StateWrite>, FileWrites)>,
    ) -> ToolCallOutcome {
        self.calls.ports.observer.observe(Progress::ToolResult {
            call_id: call.id.clone(),
            result: result.clone(),
        });
        self.record_call(ToolRecord {
            call,
            decision,
            result: Some(result.clone()),
            children,
            blocks: Vec::new(),
            timing: None,
        });
        match (result, effects) {
            (CallResult::Output(content), Some((writes, files))) => ToolCallOutcome {
                result: Ok(ToolOutput::new(content)),
                writes,
                files,
                skills: Vec::new(),
                events: Vec::new(),
            },
            (CallResult::Output(content), None) => ToolCallOutcome::output(content),
            (CallResult::Error(error), _) => ToolCallOutcome::error(error),
        }
    }
}

impl Trail for CallGate {
    fn emit(&self, event: Event) {
        self.calls.ports.live.emit(event.clone());
        self.record(vec![event]);
    }

    fn record(&self, events: Vec<Event>) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(events);
    }
}

impl NestedCalls for CallGate {
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        state: Arc<dyn StateReader>,
        files: Arc<FileWrites>,
    ) -> ToolFuture<'a> {
        Box::pin(self.run(name, args, state, files))
    }
}
