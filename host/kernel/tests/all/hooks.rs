//! Hooks and typed state in the loop: gate order and deny precedence, failing
//! closed, observation filters, inference guards, step-end writes, merge
//! policies across parallel calls, and thread-scoped state.

use futures_util::FutureExt;
use std::sync::{Arc, Mutex};

use crate::support::*;
use cordon_kernel::{
    AgentDef, CallResult, ChosenHooks, CommitStore, EndCause, Event, GateVerdict, HookFuture,
    HookOutcome, HookPhase, HookSet, InferenceRequest, InferenceVerdict, MergePolicy, Observation,
    RunError, RunOutcome, Scope, StateKey, StateOp, StateReader, StateSnapshot, StateWrite,
    StepSummary, ToolCall, ToolCallOutcome, ToolError, ToolErrorKind, ToolOutput, Verdict, Writer,
};
use serde_json::{Value, json};

type Gate = Box<dyn Fn(&ToolCall, &dyn StateReader) -> HookOutcome<GateVerdict> + Send + Sync>;
type After = Box<dyn Fn(&CallResult) -> HookOutcome<Observation> + Send + Sync>;
type Before = Box<dyn Fn(&InferenceRequest) -> HookOutcome<InferenceVerdict> + Send + Sync>;
type End = Box<dyn Fn(&StepSummary) -> HookOutcome<()> + Send + Sync>;

/// One hook: a name and the phases it handles.
#[derive(Default)]
struct Hook {
    name: &'static str,
    before_inference: Option<Before>,
    gate: Option<Gate>,
    /// Whether the gate yields to the other calls of the step after reading
    /// the state and before its verdict returns.
    yields: bool,
    after: Option<After>,
    end: Option<End>,
}

/// Hooks in order, recording every call as `name:phase`.
#[derive(Default)]
struct Hooks {
    hooks: Vec<Hook>,
    log: Mutex<Vec<String>>,
}

impl Hooks {
    fn new(hooks: Vec<Hook>) -> Arc<Self> {
        Arc::new(Self {
            hooks,
            log: Mutex::default(),
        })
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn find(&self, name: &str, phase: HookPhase) -> &Hook {
        self.log.lock().unwrap().push(format!("{name}:{phase}"));
        self.hooks.iter().find(|hook| hook.name == name).unwrap()
    }
}

fn ready<'a, T: Send + 'a>(outcome: HookOutcome<T>) -> HookFuture<'a, T> {
    Box::pin(async move { outcome })
}

fn ok<T>(value: T) -> HookOutcome<T> {
    HookOutcome {
        events: Vec::new(),
        result: Ok(value),
        writes: Vec::new(),
    }
}

fn writing<T>(value: T, key: &str, op: StateOp) -> HookOutcome<T> {
    HookOutcome {
        events: Vec::new(),
        result: Ok(value),
        writes: vec![StateWrite {
            key: key.into(),
            op,
        }],
    }
}

impl HookSet for Hooks {
    fn handlers(&self, phase: HookPhase) -> Vec<String> {
        self.hooks
            .iter()
            .filter(|hook| match phase {
                HookPhase::BeforeInference => hook.before_inference.is_some(),
                HookPhase::BeforeToolCall => hook.gate.is_some(),
                HookPhase::AfterToolCall => hook.after.is_some(),
                HookPhase::StepEnd => hook.end.is_some(),
            })
            .map(|hook| hook.name.to_owned())
            .collect()
    }

    fn before_inference<'a>(
        &'a self,
        hook: &'a str,
        request: &'a InferenceRequest,
        _state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, InferenceVerdict> {
        let hook = self.find(hook, HookPhase::BeforeInference);
        ready(hook.before_inference.as_ref().unwrap()(request))
    }

    fn before_tool_call<'a>(
        &'a self,
        hook: &'a str,
        call: &'a ToolCall,
        state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, GateVerdict> {
        let hook = self.find(hook, HookPhase::BeforeToolCall);
        let outcome = hook.gate.as_ref().unwrap()(call, state.as_ref());
        let yields = hook.yields;
        Box::pin(async move {
            if yields {
                tokio::task::yield_now().await;
            }
            outcome
        })
    }

    fn after_tool_call<'a>(
        &'a self,
        hook: &'a str,
        _call: &'a ToolCall,
        result: &'a CallResult,
        _state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, Observation> {
        let hook = self.find(hook, HookPhase::AfterToolCall);
        ready(hook.after.as_ref().unwrap()(result))
    }

    fn step_end<'a>(
        &'a self,
        hook: &'a str,
        summary: &'a StepSummary,
        _state: Arc<dyn StateReader>,
    ) -> HookFuture<'a, ()> {
        let hook = self.find(hook, HookPhase::StepEnd);
        ready(hook.end.as_ref().unwrap()(summary))
    }
}

fn gate(name: &'static str, verdict: GateVerdict) -> Hook {
    Hook {
        name,
        gate: Some(Box::new(move |_, _| ok(verdict.clone()))),
        ..Hook::default()
    }
}

fn with_hooks(rig: Rig, hooks: &Arc<Hooks>) -> Rig {
    Rig {
        runtime: rig.runtime.with_hooks(hooks.clone()),
        ..rig
    }
}

fn allow_all() -> AgentDef {
    agent(Verdict::Allow, &[], 4)
}

fn results(rig: &Rig, run: &str) -> Vec<CallResult> {
    rig.store
        .load(run)
        .now_or_never()
        .expect("the test store answers at once")
        .unwrap()
        .messages()
        .iter()
        .filter_map(|message| tool_result(message).cloned())
        .collect()
}

fn events(rig: &Rig, run: &str) -> Vec<Event> {
    rig.store
        .load(run)
        .now_or_never()
        .expect("the test store answers at once")
        .unwrap()
        .commits
        .iter()
        .flat_map(|commit| commit.events.clone())
        .collect()
}

fn denied_reason(result: &CallResult) -> String {
    match result {
        CallResult::Error(error) if error.kind == ToolErrorKind::Denied => error.message.clone(),
        other => panic!("expected a denial, got {other:?}"),
    }
}

#[tokio::test]
async fn a_deny_stops_the_chain_and_beats_an_earlier_ask() {
    let hooks = Hooks::new(vec![
        gate("a-asks", GateVerdict::Ask("a person should look".into())),
        gate("b-denies", GateVerdict::Deny("b says no".into())),
        gate("c-after", GateVerdict::Allow),
    ]);
    let rig = with_hooks(
        rig(
            vec![call(&[("c1", "echo", json!({}))]), say("ok")],
            Functions::new().with("echo", EFFECTFUL, echo()),
        ),
        &hooks,
    );
    rig.runtime.start(&allow_all(), "r", 1, "go").await.unwrap();
    assert_eq!(rig.tools.calls(), 0);
    assert_eq!(
        hooks.log(),
        vec!["a-asks:before-tool-call", "b-denies:before-tool-call"]
    );
    let reason = denied_reason(&results(&rig, "r")[0]);
    assert!(reason.contains("hook `b-denies`: b says no"), "{reason}");
}

#[tokio::test]
async fn only_the_hooks_an_agent_chose_run_and_any_other_is_refused_by_name() {
    let hooks = Hooks::new(vec![
        gate("chosen", GateVerdict::Allow),
        gate("left-out", GateVerdict::Deny("never consulted".into())),
    ]);
    let chosen = Arc::new(ChosenHooks::new(hooks.clone(), &["chosen".to_owned()]));
    assert_eq!(chosen.handlers(HookPhase::BeforeToolCall), ["chosen"]);
    let rig = rig(
        vec![call(&[("c1", "echo", json!({}))]), say("ok")],
        Functions::new().with("echo", EFFECTFUL, echo()),
    );
    let rig = Rig {
        runtime: rig.runtime.with_hooks(chosen.clone()),
        ..rig
    };
    rig.runtime.start(&allow_all(), "r", 1, "go").await.unwrap();
    assert_eq!(
        rig.tools.calls(),
        1,
        "the left-out hook's deny is not heard"
    );
    assert_eq!(hooks.log(), vec!["chosen:before-tool-call"]);
    let call = ToolCall {
        id: "c2".into(),
        name: "echo".into(),
        args: json!({}),
    };
    let state: Arc<dyn StateReader> = Arc::new(StateSnapshot::default());
    let refused = chosen.before_tool_call("left-out", &call, state).await;
    let error = refused.result.unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::NotFound);
    assert!(error.message.contains("`left-out`"), "{}", error.message);
}

#[tokio::test]
async fn hooks_are_never_asked_about_calls_the_policy_denies() {
    let hooks = Hooks::new(vec![gate("waves-through", GateVerdict::Allow)]);
    let rig = with_hooks(
        rig(
            vec![call(&[("c1", "echo", json!({}))]), say("ok")],
            Functions::new().with("echo", EFFECTFUL, echo()),
        ),
        &hooks,
    );
    let agent = agent(Verdict::Allow, &[(Verdict::Deny, "echo")], 4);
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    assert_eq!(rig.tools.calls(), 0);
    assert!(hooks.log().is_empty());
}

#[tokio::test]
async fn rewritten_arguments_are_judged_by_the_policy_again() {
    let hooks = Hooks::new(vec![gate(
        "rewriter",
        GateVerdict::Rewrite(json!({"path": "secrets/key"})),
    )]);
    let rig = with_hooks(
        rig(
            vec![
                call(&[("c1", "echo", json!({"path": "docs/a"}))]),
                say("ok"),
            ],
            Functions::new().with("echo", EFFECTFUL, echo()),
        ),
        &hooks,
    );
    let agent = agent(
        Verdict::Allow,
        &[(Verdict::Deny, "echo(path=secrets/**)")],
        4,
    );
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    assert_eq!(rig.tools.calls(), 0, "the rewritten call must not run");
    let reason = denied_reason(&results(&rig, "r")[0]);
    assert!(reason.contains("rewritten arguments"), "{reason}");
    assert!(events(&rig, "r").iter().any(|event| matches!(
        event,
        Event::ArgumentsRewritten { bundle, original, .. }
            if bundle == "rewriter" && original == &json!({"path": "docs/a"})
    )));
}

#[tokio::test]
async fn a_rewrite_the_policy_allows_runs_with_the_new_arguments() {
    let hooks = Hooks::new(vec![gate(
        "rewriter",
        GateVerdict::Rewrite(json!({"path": "docs/b"})),
    )]);
    let rig = with_hooks(
        rig(
            vec![
                call(&[("c1", "echo", json!({"path": "docs/a"}))]),
                say("ok"),
            ],
            Functions::new().with("echo", EFFECTFUL, echo()),
        ),
        &hooks,
    );
    rig.runtime.start(&allow_all(), "r", 1, "go").await.unwrap();
    assert_eq!(
        results(&rig, "r")[0],
        CallResult::Output(json!({"path": "docs/b"}))
    );
}

#[tokio::test]
async fn an_ask_from_a_hook_waits_for_a_person_and_names_the_hook() {
    let hooks = Hooks::new(vec![gate(
        "careful",
        GateVerdict::Ask("looks risky".into()),
    )]);
    let rig = with_hooks(
        rig(
            vec![call(&[("c1", "echo", json!({}))]), say("ok")],
            Functions::new().with("echo", EFFECTFUL, echo()),
        ),
        &hooks,
    );
    let outcome = rig.runtime.start(&allow_all(), "r", 1, "go").await.unwrap();
    let RunOutcome::Waiting { pending, .. } = outcome else {
        panic!("expected a wait, got {outcome:?}");
    };
    assert_eq!(
        pending[0].reason,
        cordon_kernel::PendingReason::Approval {
            rule: Some("hook `careful`: looks risky".into()),
            by: cordon_kernel::Decider::Hook,
        }
    );
    assert_eq!(rig.tools.calls(), 0);
}

#[tokio::test]
async fn a_failing_or_malformed_gate_denies_the_call_and_is_audited() {
    let crashed = Hook {
        name: "crashes",
        gate: Some(Box::new(|_, _| HookOutcome {
            events: Vec::new(),
            result: Err(ToolError::new(ToolErrorKind::Crashed, "wasm trap")),
            writes: Vec::new(),
        })),
        ..Hook::default()
    };
    for (hook, needle) in [
        (crashed, "wasm trap"),
        (
            gate("garbage", GateVerdict::Rewrite(json!("not an object"))),
            "not a JSON object",
        ),
    ] {
        let name = hook.name;
        let hooks = Hooks::new(vec![hook]);
        let rig = with_hooks(
            rig(
                vec![call(&[("c1", "echo", json!({}))]), say("ok")],
                Functions::new().with("echo", EFFECTFUL, echo()),
            ),
            &hooks,
        );
        rig.runtime.start(&allow_all(), "r", 1, "go").await.unwrap();
        assert_eq!(rig.tools.calls(), 0);
        let reason = denied_reason(&results(&rig, "r")[0]);
        assert!(reason.contains(needle), "{reason}");
        assert!(events(&rig, "r").iter().any(|event| matches!(
            event,
            Event::HookFailed { bundle, phase: HookPhase::BeforeToolCall, call_id: Some(id), .. }
                if bundle == name && id == "c1"
        )));
    }
}

#[tokio::test]
async fn a_replaced_observation_is_all_the_model_and_the_store_ever_see() {
    let hooks = Hooks::new(vec![Hook {
        name: "redactor",
        after: Some(Box::new(|_| {
            ok(Observation::Replace(CallResult::Output(
                json!({"text": "[REDACTED]"}),
            )))
        })),
        ..Hook::default()
    }]);
    let secret = json!({"text": "sk-live-0123456789"});
    let rig = with_hooks(
        rig(
            vec![call(&[("c1", "echo", secret)]), say("ok")],
            Functions::new().with("echo", READ_ONLY, echo()),
        ),
        &hooks,
    );
    rig.runtime.start(&allow_all(), "r", 1, "go").await.unwrap();
    let next_request = &rig.model.seen()[1];
    let observed: Vec<&CallResult> = next_request
        .messages
        .iter()
        .filter_map(tool_result)
        .collect();
    assert_eq!(
        observed,
        vec![&CallResult::Output(json!({"text": "[REDACTED]"}))]
    );
    let stored = format!("{:?}", rig.store.load("r").await.unwrap().commits);
    let tool_records: Vec<_> = rig
        .store
        .load("r")
        .await
        .unwrap()
        .commits
        .iter()
        .flat_map(|commit| commit.tools.clone())
        .collect();
    assert_eq!(
        tool_records[0].result,
        Some(CallResult::Output(json!({"text": "[REDACTED]"})))
    );
    // The model's own arguments stay in its message; the tool's output does not
    // reach the store anywhere else.
    assert_eq!(stored.matches("sk-live-0123456789").count(), 2, "{stored}");
}

#[tokio::test]
async fn a_failing_observation_filter_withholds_the_result() {
    let hooks = Hooks::new(vec![Hook {
        name: "filter",
        after: Some(Box::new(|_| HookOutcome {
            events: Vec::new(),
            result: Err(ToolError::new(ToolErrorKind::Timeout, "too slow")),
            writes: Vec::new(),
        })),
        ..Hook::default()
    }]);
    let rig = with_hooks(
        rig(
            vec![call(&[("c1", "echo", json!({"secret": 1}))]), say("ok")],
            Functions::new().with("echo", READ_ONLY, echo()),
        ),
        &hooks,
    );
    rig.runtime.start(&allow_all(), "r", 1, "go").await.unwrap();
    let CallResult::Error(error) = &results(&rig, "r")[0] else {
        panic!("the output must be withheld");
    };
    assert!(
        error
            .message
            .contains("withheld because hook `filter` failed")
    );
}

#[tokio::test]
async fn before_inference_adds_context_or_refuses_the_request() {
    let hooks = Hooks::new(vec![Hook {
        name: "context",
        before_inference: Some(Box::new(|request| {
            ok(InferenceVerdict::AddContext(format!(
                "step {}",
                request.step
            )))
        })),
        ..Hook::default()
    }]);
    let first = with_hooks(rig(vec![say("done")], Functions::new()), &hooks);
    first
        .runtime
        .start(&allow_all(), "r", 1, "go")
        .await
        .unwrap();
    assert_eq!(first.model.seen()[0].instructions, "be brief\n\nstep 1");

    let hooks = Hooks::new(vec![Hook {
        name: "guard",
        before_inference: Some(Box::new(|_| {
            ok(InferenceVerdict::Refuse("off hours".into()))
        })),
        ..Hook::default()
    }]);
    let rig = with_hooks(rig(vec![say("done")], Functions::new()), &hooks);
    let outcome = rig.runtime.start(&allow_all(), "r", 1, "go").await.unwrap();
    assert!(rig.model.seen().is_empty(), "the model must not be asked");
    assert_eq!(
        outcome,
        RunOutcome::Ended {
            run_id: "r".into(),
            cause: EndCause::Refused {
                hook: "guard".into(),
                reason: "off hours".into()
            },
            answer: None,
        }
    );
}

fn declared(agent: AgentDef, key: &str, scope: Scope, merge: MergePolicy) -> AgentDef {
    agent.with_state_key(
        key,
        StateKey::new(None)
            .unwrap()
            .in_scope(scope)
            .merged_by(merge),
    )
}

fn op_tool(key: &'static str, op: StateOp) -> Handler {
    Box::new(move |_, _| ToolCallOutcome {
        files: Default::default(),
        skills: Vec::new(),
        events: Vec::new(),
        result: Ok(ToolOutput::new(json!({"ok": true}))),
        writes: vec![StateWrite {
            key: key.into(),
            op: op.clone(),
        }],
    })
}

#[tokio::test]
async fn step_end_hooks_see_the_step_and_their_writes_commit_with_it() {
    let hooks = Hooks::new(vec![Hook {
        name: "tally",
        end: Some(Box::new(|summary| {
            writing(
                (),
                "steps",
                StateOp::Append {
                    item: json!(summary.calls.len()),
                },
            )
        })),
        ..Hook::default()
    }]);
    let rig = with_hooks(
        rig(
            vec![
                call(&[("c1", "echo", json!({})), ("c2", "echo", json!({}))]),
                say("ok"),
            ],
            Functions::new().with("echo", READ_ONLY, echo()),
        ),
        &hooks,
    );
    rig.runtime.start(&allow_all(), "r", 1, "go").await.unwrap();
    assert_eq!(
        rig.store.load("r").await.unwrap().state().unwrap()["steps"],
        json!([2, 0])
    );
}

#[tokio::test]
async fn commutative_writes_of_parallel_calls_and_gate_hooks_add_up() {
    let hooks = Hooks::new(vec![Hook {
        name: "budget",
        gate: Some(Box::new(|_, state| {
            let seen = state.get("calls").unwrap().unwrap_or(json!(0));
            writing(GateVerdict::Allow, "seen", StateOp::Append { item: seen })
                .with_write("calls", StateOp::Increment { delta: 1 })
        })),
        ..Hook::default()
    }]);
    let agent = declared(
        declared(allow_all(), "calls", Scope::Run, MergePolicy::Commutative),
        "seen",
        Scope::Run,
        MergePolicy::Commutative,
    );
    let agent = declared(agent, "hits", Scope::Run, MergePolicy::Commutative);
    let rig = with_hooks(
        rig(
            vec![
                call(&[
                    ("c1", "hit", json!({})),
                    ("c2", "hit", json!({})),
                    ("c3", "hit", json!({})),
                ]),
                say("ok"),
            ],
            Functions::new().with(
                "hit",
                EFFECTFUL,
                op_tool("hits", StateOp::Increment { delta: 5 }),
            ),
        ),
        &hooks,
    );
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    let state = rig.store.load("r").await.unwrap().state().unwrap();
    assert_eq!(state["hits"], json!(15));
    assert_eq!(state["calls"], json!(3));
    // Each gate saw the calls the gates before it in the step had counted.
    assert_eq!(state["seen"], json!([0, 1, 2]));
}

trait WithWrite {
    fn with_write(self, key: &str, op: StateOp) -> Self;
}

impl<T> WithWrite for HookOutcome<T> {
    fn with_write(mut self, key: &str, op: StateOp) -> Self {
        self.writes.push(StateWrite {
            key: key.into(),
            op,
        });
        self
    }
}

#[tokio::test]
async fn two_parallel_writers_of_an_exclusive_key_fail_the_step_and_commit_nothing() {
    let agent = declared(allow_all(), "owner", Scope::Run, MergePolicy::Exclusive);
    let rig = rig(
        vec![
            call(&[("c1", "claim", json!({})), ("c2", "claim", json!({}))]),
            say("ok"),
        ],
        Functions::new().with(
            "claim",
            EFFECTFUL,
            op_tool("owner", StateOp::Set { value: json!("me") }),
        ),
    );
    let error = rig.runtime.start(&agent, "r", 1, "go").await.unwrap_err();
    let RunError::StateConflict(conflict) = &error else {
        panic!("expected a conflict, got {error:?}");
    };
    assert_eq!(conflict.key, "owner");
    assert_eq!(
        conflict.writers,
        vec![
            Writer::Tool {
                call_id: "c1".into(),
                tool: "claim".into()
            },
            Writer::Tool {
                call_id: "c2".into(),
                tool: "claim".into()
            },
        ]
    );
    assert!(
        error
            .to_string()
            .contains("call c1 (claim), call c2 (claim)"),
        "{error}"
    );
    let record = rig.store.load("r").await.unwrap();
    assert_eq!(record.last_seq(), 1, "only the user's message is committed");
    assert!(record.state().unwrap().is_empty());
}

#[tokio::test]
async fn disjoint_writers_merge_field_by_field_and_collide_on_one_field() {
    let agent = declared(allow_all(), "owners", Scope::Run, MergePolicy::Disjoint);
    let field_tool: Handler = Box::new(|args: &Value, _: &dyn StateReader| ToolCallOutcome {
        files: Default::default(),
        skills: Vec::new(),
        events: Vec::new(),
        result: Ok(ToolOutput::new(json!({"ok": true}))),
        writes: vec![StateWrite {
            key: "owners".into(),
            op: StateOp::SetField {
                field: args["field"].as_str().unwrap_or_default().into(),
                value: json!(true),
            },
        }],
    });
    let rig = rig(
        vec![
            call(&[
                ("c1", "own", json!({"field": "a"})),
                ("c2", "own", json!({"field": "b"})),
            ]),
            call(&[
                ("c3", "own", json!({"field": "c"})),
                ("c4", "own", json!({"field": "c"})),
            ]),
            say("ok"),
        ],
        Functions::new().with("own", EFFECTFUL, field_tool),
    );
    let error = rig.runtime.start(&agent, "r", 1, "go").await.unwrap_err();
    assert!(error.to_string().contains("field `c`"), "{error}");
    let state = rig.store.load("r").await.unwrap().state().unwrap();
    assert_eq!(state["owners"], json!({"a": true, "b": true}));
}

#[tokio::test]
async fn thread_scoped_state_carries_over_to_the_next_run_of_the_thread_only() {
    let agent = declared(
        declared(
            allow_all(),
            "memory",
            Scope::Thread,
            MergePolicy::Commutative,
        ),
        "scratch",
        Scope::Run,
        MergePolicy::Commutative,
    );
    let tools = || {
        Functions::new()
            .with(
                "remember",
                EFFECTFUL,
                op_tool("memory", StateOp::Append { item: json!("x") }),
            )
            .with(
                "note",
                EFFECTFUL,
                op_tool("scratch", StateOp::Append { item: json!("y") }),
            )
    };
    let turns = || {
        vec![
            call(&[("c1", "remember", json!({})), ("c2", "note", json!({}))]),
            say("ok"),
        ]
    };
    let first = rig(turns(), tools());
    let store = first.store.clone();
    first
        .runtime
        .start_in(&agent, "t1", "r1", 1, "go")
        .await
        .unwrap();
    let second = rig(turns(), tools());
    let runtime = cordon_kernel::Runtime::new(
        second.model.clone(),
        second.tools.clone(),
        store.clone(),
        Arc::new(cordon_kernel::EventLog::new()),
    );
    runtime.start_in(&agent, "t1", "r2", 2, "go").await.unwrap();
    let seen = second.model.seen();
    assert_eq!(seen[0].state.get("memory"), Some(&json!(["x"])));
    assert_eq!(seen[0].state.get("scratch"), None);
    assert_eq!(
        store.thread_state("t1").await.unwrap()["memory"],
        json!(["x", "x"])
    );
    assert!(store.thread_state("t2").await.unwrap().is_empty());
    let run_state = store.load("r2").await.unwrap().state().unwrap();
    assert_eq!(run_state["scratch"], json!(["y"]));
    assert!(!run_state.contains_key("memory"));
}

#[tokio::test]
async fn a_hook_whose_writes_are_refused_fails_closed() {
    let hooks = Hooks::new(vec![Hook {
        name: "sneaky",
        gate: Some(Box::new(|_, _| {
            writing(
                GateVerdict::Allow,
                "undeclared",
                StateOp::Set { value: json!(1) },
            )
        })),
        ..Hook::default()
    }]);
    let agent = declared(allow_all(), "declared", Scope::Run, MergePolicy::Exclusive);
    let rig = with_hooks(
        rig(
            vec![call(&[("c1", "echo", json!({}))]), say("ok")],
            Functions::new().with("echo", EFFECTFUL, echo()),
        ),
        &hooks,
    );
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    assert_eq!(rig.tools.calls(), 0);
    let reason = denied_reason(&results(&rig, "r")[0]);
    assert!(reason.contains("`undeclared` is not declared"), "{reason}");
    assert!(
        !rig.store
            .load("r")
            .await
            .unwrap()
            .state()
            .unwrap()
            .contains_key("undeclared")
    );
}

/// The tool records of run `run`'s step that made calls.
fn records(rig: &Rig, run: &str) -> Vec<cordon_kernel::ToolRecord> {
    rig.store
        .load(run)
        .now_or_never()
        .expect("the test store answers at once")
        .unwrap()
        .commits
        .iter()
        .flat_map(|commit| commit.tools.clone())
        .collect()
}

#[tokio::test]
async fn a_tool_calling_a_tool_is_judged_by_the_agents_policy() {
    let tools =
        Functions::new()
            .nesting("outer", EFFECTFUL, "secret")
            .with("secret", READ_ONLY, echo());
    let rig = rig(
        vec![call(&[("c1", "outer", json!({"path": ".env"}))]), say("ok")],
        tools,
    );
    let agent = agent(
        Verdict::Allow,
        &[(Verdict::Deny, "secret(path=**/.env)")],
        4,
    );
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    assert_eq!(rig.tools.calls(), 1, "the inner tool never ran");
    let reason = denied_reason(&results(&rig, "r")[0]);
    assert!(reason.contains("secret(path=**/.env)"), "{reason}");
    let outer = &records(&rig, "r")[0];
    let inner = &outer.children[0];
    assert_eq!(inner.call.id, "c1.1");
    assert_eq!(inner.call.name, "secret");
    assert_eq!(inner.decision.verdict, Verdict::Deny);
}

#[tokio::test]
async fn a_tool_may_not_call_a_tool_outside_the_agents_tool_list() {
    let tools =
        Functions::new()
            .nesting("outer", EFFECTFUL, "hidden")
            .with("hidden", READ_ONLY, echo());
    let rig = rig(vec![call(&[("c1", "outer", json!({}))]), say("ok")], tools);
    let agent = AgentDef::new(
        "a",
        "",
        &["outer"],
        4,
        cordon_kernel::PermissionPolicy::new(Verdict::Allow),
    )
    .unwrap();
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    let reason = denied_reason(&results(&rig, "r")[0]);
    assert!(reason.contains("not among the agent's tools"), "{reason}");
}

#[tokio::test]
async fn nested_calls_pass_the_hooks_count_against_the_budget_and_are_recorded_as_children() {
    let hooks = Hooks::new(vec![
        Hook {
            name: "budget",
            gate: Some(Box::new(|call, state| {
                let spent = state.get("calls").unwrap().unwrap_or(json!(0));
                if spent.as_i64().unwrap_or_default() >= 2 {
                    return ok(GateVerdict::Deny(format!(
                        "budget spent before {}",
                        call.id
                    )));
                }
                writing(GateVerdict::Allow, "calls", StateOp::Increment { delta: 1 })
            })),
            ..Hook::default()
        },
        Hook {
            name: "redactor",
            after: Some(Box::new(|result| match result {
                CallResult::Output(value) if value.get("secret").is_some() => ok(
                    Observation::Replace(CallResult::Output(json!({"secret": "[REDACTED]"}))),
                ),
                _ => ok(Observation::Keep),
            })),
            ..Hook::default()
        },
    ]);
    let tools =
        Functions::new()
            .nesting("outer", EFFECTFUL, "inner")
            .with("inner", READ_ONLY, echo());
    let rig = with_hooks(
        rig(
            vec![
                call(&[("c1", "outer", json!({"secret": "hunter2"}))]),
                call(&[("c2", "outer", json!({"secret": "hunter2"}))]),
                say("ok"),
            ],
            tools,
        ),
        &hooks,
    );
    let agent = declared(allow_all(), "calls", Scope::Run, MergePolicy::Commutative);
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    let results = results(&rig, "r");
    // The first outer call and its inner call spend the budget of two; the
    // inner call's result passed the redactor before the outer tool saw it.
    assert_eq!(
        results[0],
        CallResult::Output(json!({"secret": "[REDACTED]"}))
    );
    let reason = denied_reason(&results[1]);
    assert!(reason.contains("budget spent before c2"), "{reason}");
    assert_eq!(
        rig.store.load("r").await.unwrap().state().unwrap()["calls"],
        json!(2)
    );
    let records = records(&rig, "r");
    assert_eq!(records[0].children.len(), 1);
    let child = &records[0].children[0];
    assert_eq!(child.call.id, "c1.1");
    assert_eq!(
        child.result,
        Some(CallResult::Output(json!({"secret": "[REDACTED]"})))
    );
    assert!(
        hooks.log().contains(&"budget:before-tool-call".to_owned())
            && hooks.log().contains(&"redactor:after-tool-call".to_owned())
    );
}

#[tokio::test]
async fn nested_calls_running_at_once_take_turns_at_the_budget() {
    let hooks = Hooks::new(vec![Hook {
        name: "budget",
        gate: Some(Box::new(|call, state| {
            let spent = state.get("calls").unwrap().unwrap_or(json!(0));
            if spent.as_i64().unwrap_or_default() >= 3 {
                return ok(GateVerdict::Deny(format!(
                    "budget spent before {}",
                    call.id
                )));
            }
            writing(GateVerdict::Allow, "calls", StateOp::Increment { delta: 1 })
        })),
        yields: true,
        ..Hook::default()
    }]);
    let tools =
        Functions::new()
            .nesting("outer", EFFECTFUL, "inner")
            .with("inner", READ_ONLY, echo());
    let rig = with_hooks(
        rig(
            vec![
                call(&[("c1", "outer", json!({})), ("c2", "outer", json!({}))]),
                say("ok"),
            ],
            tools,
        ),
        &hooks,
    );
    let agent = declared(allow_all(), "calls", Scope::Run, MergePolicy::Commutative);
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    // Two outer calls and one inner call spend the budget of three; the two
    // inner calls run at once and their gates yield mid-way, yet the second
    // gate reads the count the first one wrote.
    assert_eq!(
        rig.store.load("r").await.unwrap().state().unwrap()["calls"],
        json!(3)
    );
    assert_eq!(rig.tools.calls(), 3, "only one inner call ran");
    let denied: Vec<String> = records(&rig, "r")
        .iter()
        .flat_map(|record| &record.children)
        .filter(|child| child.decision.verdict == Verdict::Deny)
        .map(|child| child.call.id.clone())
        .collect();
    assert_eq!(denied.len(), 1, "{denied:?}");
}

#[tokio::test]
async fn a_nested_call_the_policy_asks_about_is_denied_when_no_one_can_answer() {
    let tools =
        Functions::new()
            .nesting("outer", EFFECTFUL, "inner")
            .with("inner", READ_ONLY, echo());
    let rig = rig(vec![call(&[("c1", "outer", json!({}))]), say("ok")], tools);
    let agent = agent(Verdict::Allow, &[(Verdict::Ask, "inner")], 4);
    let outcome = rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    assert!(matches!(outcome, RunOutcome::Ended { .. }), "{outcome:?}");
    let reason = denied_reason(&results(&rig, "r")[0]);
    assert!(reason.contains("cannot wait for approval"), "{reason}");
}
