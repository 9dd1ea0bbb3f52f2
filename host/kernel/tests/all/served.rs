//! Calls requested from outside the loop: each request is a committed step,
//! judged by the agent's policy, with state that carries to the next
//! request; approvals go to the requester's approver, and a call nobody can
//! approve is denied saying why.

use futures_util::FutureExt;
use std::sync::Arc;

use crate::support::reloads::{answering, reloading};
use crate::support::*;
use cordon_kernel::{Answer as Answered, AskFuture, Asker, Question, Unasked};
use cordon_kernel::{
    Approval, ApprovalFuture, Approver, CallResult, Cancellation, CommitStore, DeferApprovals,
    Disposition, EventLog, MemoryCommitStore, NO_APPROVER, PendingCall, Reach, Requester, Runtime,
    Served, ServedRun, ToolCall, ToolErrorKind, ToolSet, ToolSets, Unanswered, Verdict,
};
use serde_json::{Value, json};

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        args,
    }
}

async fn served(
    tools: Functions,
    default: Verdict,
    rules: &[(Verdict, &str)],
) -> (ServedRun, Arc<MemoryCommitStore>, Arc<Functions>) {
    let store = Arc::new(MemoryCommitStore::new());
    let tools = Arc::new(tools);
    let runtime = Runtime::for_requests(tools.clone(), store.clone(), Arc::new(EventLog::new()));
    let run = ServedRun::open(runtime, &agent(default, rules, 4), "main", "served-1", 7)
        .await
        .unwrap();
    (run, store, tools)
}

/// Answers every pending call with one approval, counting the calls asked.
struct Answer(Approval, std::sync::Mutex<Vec<String>>);

impl Approver for Answer {
    fn decide<'a>(&'a self, pending: &'a [PendingCall]) -> ApprovalFuture<'a> {
        self.1
            .lock()
            .unwrap()
            .extend(pending.iter().map(|pending| pending.call.id.clone()));
        let answers = vec![self.0.clone(); pending.len()];
        Box::pin(async move { Some(answers) })
    }
}

trait Committed {
    fn committed(self) -> Vec<cordon_kernel::ToolRecord>;
}

impl Committed for Served {
    fn committed(self) -> Vec<cordon_kernel::ToolRecord> {
        match self {
            Served::Committed { records, .. } => records,
            Served::Withdrawn(pending) => panic!("withdrawn: {pending:?}"),
            Served::Asking(deferred) => panic!("asking: {deferred:?}"),
        }
    }
}

fn output(record: &cordon_kernel::ToolRecord) -> &Value {
    match &record.result {
        Some(CallResult::Output(value)) => value,
        other => panic!("expected an output, got {other:?}"),
    }
}

fn error_kind(record: &cordon_kernel::ToolRecord) -> (ToolErrorKind, String) {
    match &record.result {
        Some(CallResult::Error(error)) => (error.kind, error.message.clone()),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test]
async fn each_request_is_a_committed_step_whose_state_the_next_one_reads() {
    let tools = Functions::new().with("count", EFFECTFUL, counter());
    let (run, store, _) = served(tools, Verdict::Allow, &[]).await;
    let first = run
        .call(
            vec![call("c1", "count", json!({}))],
            &DeferApprovals,
            Unanswered::Deny,
            &Requester::default(),
        )
        .await
        .unwrap()
        .committed();
    assert_eq!(output(&first[0]), &json!({"saw": 0}));
    let second = run
        .call(
            vec![call("c2", "count", json!({}))],
            &DeferApprovals,
            Unanswered::Deny,
            &Requester::default(),
        )
        .await
        .unwrap()
        .committed();
    assert_eq!(
        output(&second[0]),
        &json!({"saw": 1}),
        "the first step's write committed"
    );

    let record = store.load("served-1").await.unwrap();
    assert_eq!(record.commits.len(), 2, "one commit per request");
    assert_eq!(record.commits[1].tools[0].call.id, "c2");
    assert_eq!(record.state().unwrap()["count"], json!(2));
    run.close().await.unwrap();
    let record = store.load("served-1").await.unwrap();
    assert!(matches!(record.disposition(), Disposition::Ended { .. }));
    let late = run
        .call(
            vec![call("c3", "count", json!({}))],
            &DeferApprovals,
            Unanswered::Deny,
            &Requester::default(),
        )
        .await;
    assert!(
        matches!(late, Err(cordon_kernel::RunError::Ended(_))),
        "{late:?}"
    );
}

#[tokio::test]
async fn served_runs_of_one_thread_each_read_the_thread_state_the_other_committed() {
    let store = Arc::new(MemoryCommitStore::new());
    let agent = agent(Verdict::Allow, &[], 4).with_state_key(
        "count",
        cordon_kernel::StateKey::new(None)
            .unwrap()
            .in_scope(cordon_kernel::Scope::Thread)
            .merged_by(cordon_kernel::MergePolicy::Commutative),
    );
    let mut runs = Vec::new();
    for run_id in ["served-1", "served-2"] {
        let tools = Arc::new(Functions::new().with("count", EFFECTFUL, counter()));
        let runtime = Runtime::for_requests(tools, store.clone(), Arc::new(EventLog::new()));
        runs.push(
            ServedRun::open(runtime, &agent, "shared", run_id, 7)
                .await
                .unwrap(),
        );
    }
    let mut seen = Vec::new();
    for (number, run) in [&runs[0], &runs[1], &runs[0], &runs[1]]
        .into_iter()
        .enumerate()
    {
        let records = run
            .call(
                vec![call(&format!("c{number}"), "count", json!({}))],
                &DeferApprovals,
                Unanswered::Deny,
                &Requester::default(),
            )
            .await
            .unwrap()
            .committed();
        seen.push(output(&records[0])["saw"].clone());
    }
    assert_eq!(
        seen,
        [json!(0), json!(1), json!(2), json!(3)],
        "each step saw every earlier step of the thread, whichever run made it"
    );
    assert_eq!(
        store.thread_state("shared").await.unwrap()["count"],
        json!(4)
    );
}

#[tokio::test]
async fn the_policy_judges_requested_calls_and_unoffered_tools_never_run() {
    let tools = Functions::new()
        .with("echo", READ_ONLY, echo())
        .with("wipe", EFFECTFUL, echo());
    let (run, store, tools) = served(tools, Verdict::Allow, &[(Verdict::Deny, "wipe")]).await;
    let records = run
        .call(
            vec![
                call("a", "echo", json!({"x": 1})),
                call("b", "wipe", json!({})),
                call("c", "nowhere", json!({})),
                call("d", "echo", json!("not an object")),
            ],
            &DeferApprovals,
            Unanswered::Deny,
            &Requester::default(),
        )
        .await
        .unwrap()
        .committed();
    assert_eq!(output(&records[0]), &json!({"x": 1}));
    assert_eq!(error_kind(&records[1]).0, ToolErrorKind::Denied);
    assert_eq!(records[1].decision.rule.as_deref(), Some("wipe"));
    let (kind, message) = error_kind(&records[2]);
    assert_eq!(kind, ToolErrorKind::NotFound);
    assert!(message.contains("`nowhere`"), "{message}");
    assert_eq!(error_kind(&records[3]).0, ToolErrorKind::InvalidInput);
    assert_eq!(
        tools.calls(),
        1,
        "only the allowed, offered, well-formed call ran"
    );
    let committed = &store.load("served-1").await.unwrap().commits[0];
    assert_eq!(committed.tools.len(), 4, "every verdict is committed");
}

#[tokio::test]
async fn a_call_needing_approval_goes_to_the_requesters_approver_or_is_denied_saying_why() {
    let tools = Functions::new().with("send", EFFECTFUL, echo());
    let (run, _, tools) = served(tools, Verdict::Ask, &[]).await;

    let unasked = run
        .call(
            vec![call("c1", "send", json!({}))],
            &DeferApprovals,
            Unanswered::Deny,
            &Requester::default(),
        )
        .await
        .unwrap()
        .committed();
    let (kind, message) = error_kind(&unasked[0]);
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(message.contains(NO_APPROVER), "{message}");
    assert_eq!(tools.calls(), 0);

    let no = Answer(Approval::Deny, Default::default());
    let denied = run
        .call(
            vec![call("c2", "send", json!({}))],
            &no,
            Unanswered::Deny,
            &Requester::default(),
        )
        .await
        .unwrap()
        .committed();
    assert_eq!(error_kind(&denied[0]).0, ToolErrorKind::Denied);
    assert_eq!(*no.1.lock().unwrap(), ["c2"]);
    assert_eq!(tools.calls(), 0);

    let yes = Answer(Approval::Approve, Default::default());
    let approved = run
        .call(
            vec![call("c3", "send", json!({"to": "x"}))],
            &yes,
            Unanswered::Deny,
            &Requester::default(),
        )
        .await
        .unwrap()
        .committed();
    assert_eq!(output(&approved[0]), &json!({"to": "x"}));
    assert_eq!(approved[0].decision.verdict, Verdict::Allow);
    assert_eq!(tools.calls(), 1);
}

#[tokio::test]
async fn a_runtime_for_requests_has_no_model_to_drive() {
    let store = Arc::new(MemoryCommitStore::new());
    let runtime = Runtime::for_requests(
        Arc::new(Functions::new()),
        store.clone(),
        Arc::new(EventLog::new()),
    );
    let outcome = runtime
        .start(&agent(Verdict::Allow, &[], 3), "r", 0, "hello")
        .await
        .unwrap();
    let cordon_kernel::RunOutcome::Ended { cause, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert!(format!("{cause:?}").contains("no model"), "{cause:?}");
}

#[tokio::test]
async fn a_withdrawn_request_commits_nothing_and_runs_nothing() {
    let tools = Functions::new()
        .with("send", EFFECTFUL, echo())
        .with("look", READ_ONLY, echo());
    let (run, store, tools) = served(tools, Verdict::Ask, &[(Verdict::Allow, "look")]).await;
    let outcome = run
        .call(
            vec![call("c1", "look", json!({})), call("c2", "send", json!({}))],
            &DeferApprovals,
            Unanswered::Withdraw,
            &Requester::default(),
        )
        .await
        .unwrap();
    let Served::Withdrawn(pending) = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call.id, "c2");
    assert_eq!(
        tools.calls(),
        0,
        "not even the allowed call of the request ran"
    );
    assert!(store.load("served-1").await.unwrap().commits.is_empty());
    let yes = Answer(Approval::Approve, Default::default());
    let again = run
        .call(
            vec![call("c2", "send", json!({"n": 1}))],
            &yes,
            Unanswered::Withdraw,
            &Requester::default(),
        )
        .await
        .unwrap()
        .committed();
    assert_eq!(output(&again[0]), &json!({"n": 1}));
    assert_eq!(store.load("served-1").await.unwrap().commits.len(), 1);
}

/// A tool that runs until its call is cancelled.
struct Patient;

impl cordon_kernel::ToolSet for Patient {
    fn specs(&self) -> Vec<cordon_kernel::ToolSpec> {
        vec![cordon_kernel::ToolSpec {
            name: "wait".into(),
            description: "waits".into(),
            input_schema: std::sync::Arc::new(json!({"type": "object"})),
            output_schema: None,
            annotations: READ_ONLY,
        }]
    }

    fn call<'a>(
        &'a self,
        _name: &'a str,
        _args: Value,
        context: cordon_kernel::CallContext,
    ) -> cordon_kernel::ToolFuture<'a> {
        Box::pin(async move {
            context.cancel.cancelled().await;
            cordon_kernel::ToolCallOutcome::error(cordon_kernel::ToolError::new(
                ToolErrorKind::Cancelled,
                "stopped",
            ))
        })
    }
}

#[tokio::test]
async fn cancelling_a_request_stops_its_call_and_the_step_still_commits() {
    let store = Arc::new(MemoryCommitStore::new());
    let runtime =
        Runtime::for_requests(Arc::new(Patient), store.clone(), Arc::new(EventLog::new()));
    let run = ServedRun::open(
        runtime,
        &agent(Verdict::Allow, &[], 4),
        "main",
        "served-1",
        7,
    )
    .await
    .unwrap();
    let cancel = Cancellation::new();
    let later = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        later.cancel();
    });
    let records = run
        .call(
            vec![call("c1", "wait", json!({}))],
            &DeferApprovals,
            Unanswered::Deny,
            &Requester {
                cancel,
                asker: None,
            },
        )
        .await
        .unwrap()
        .committed();
    assert_eq!(error_kind(&records[0]).0, ToolErrorKind::Cancelled);
    assert_eq!(store.load("served-1").await.unwrap().commits.len(), 1);
}

/// While each of `tools`' calls runs, note in `seen` whether run
/// `served-1` has an intent.
fn note_intents(
    tools: &Functions,
    store: &Arc<MemoryCommitStore>,
    seen: &Arc<std::sync::Mutex<Vec<bool>>>,
) {
    let (store, seen) = (store.clone(), seen.clone());
    *tools.during.lock().unwrap() = Some(Box::new(move || {
        let intent = store
            .load("served-1")
            .now_or_never()
            .expect("the test store answers at once")
            .unwrap()
            .intent
            .is_some();
        seen.lock().unwrap().push(intent);
    }));
}

#[tokio::test]
async fn only_a_request_that_may_have_effects_records_an_intent() {
    let store = Arc::new(MemoryCommitStore::new());
    let tools = Arc::new(
        Functions::new()
            .with("look", READ_ONLY, echo())
            .with("send", EFFECTFUL, echo())
            .with("tally", EFFECTFUL, echo())
            .confined("tally"),
    );
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    note_intents(&tools, &store, &seen);
    let runtime = Runtime::for_requests(tools.clone(), store.clone(), Arc::new(EventLog::new()));
    let run = ServedRun::open(
        runtime,
        &agent(Verdict::Allow, &[], 4),
        "main",
        "served-1",
        7,
    )
    .await
    .unwrap();
    for (id, tool) in [("c1", "look"), ("c2", "send"), ("c3", "tally")] {
        run.call(
            vec![call(id, tool, json!({}))],
            &DeferApprovals,
            Unanswered::Deny,
            &Requester::default(),
        )
        .await
        .unwrap()
        .committed();
    }
    assert_eq!(
        *seen.lock().unwrap(),
        [false, true, false],
        "a read-only call runs without an intent, an effectful one with, and one whose \
         effects all travel with its outcome without"
    );
    assert!(
        store.load("served-1").await.unwrap().intent.is_none(),
        "the commit clears it"
    );
}

/// Sets offered as one answer each name's reach from the set that serves it:
/// a set that vouches for a name another set serves, or that no set serves,
/// is not asked.
#[test]
fn tool_sets_answer_reach_from_the_set_serving_the_name() {
    let first = Functions::new()
        .with("look", EFFECTFUL, echo())
        .confined("send")
        .confined("ghost");
    let second = Functions::new()
        .with("send", EFFECTFUL, echo())
        .with("tally", EFFECTFUL, echo())
        .confined("look")
        .confined("tally");
    let sets = ToolSets::new(vec![Arc::new(first), Arc::new(second)]).unwrap();
    assert_eq!(sets.reach("look"), Reach::Beyond);
    assert_eq!(sets.reach("send"), Reach::Beyond);
    assert_eq!(sets.reach("tally"), Reach::Outcome);
    assert_eq!(sets.reach("ghost"), Reach::Beyond);
}

#[test]
fn tool_sets_give_the_spec_of_the_set_serving_the_name() {
    let first = Functions::new().with("look", READ_ONLY, echo());
    let second = Functions::new().with("send", EFFECTFUL, echo());
    let sets = ToolSets::new(vec![Arc::new(first), Arc::new(second)]).unwrap();
    for name in ["look", "send"] {
        let listed = sets.specs().into_iter().find(|spec| spec.name == name);
        assert!(listed.is_some(), "{name}");
        assert_eq!(sets.spec(name), listed, "{name}");
    }
    assert_eq!(sets.spec("send").unwrap().annotations, EFFECTFUL);
    assert_eq!(sets.spec("ghost"), None);
}

/// A tool whose result carries an image beside its JSON.
fn picture() -> Handler {
    Box::new(|_, _| cordon_kernel::ToolCallOutcome {
        files: Default::default(),
        skills: Vec::new(),
        events: Vec::new(),
        result: Ok(cordon_kernel::ToolOutput {
            content: json!({"caption": "a pixel"}),
            blocks: vec![cordon_kernel::ContentBlock::Image {
                mime_type: "image/png".into(),
                data: "iVBORw==".into(),
            }],
        }),
        writes: Vec::new(),
    })
}

/// One after-tool-call hook that keeps every result as it is.
struct Keeper;

impl cordon_kernel::HookSet for Keeper {
    fn handlers(&self, phase: cordon_kernel::HookPhase) -> Vec<String> {
        match phase {
            cordon_kernel::HookPhase::AfterToolCall => vec!["keeper".into()],
            _ => Vec::new(),
        }
    }

    fn before_inference<'a>(
        &'a self,
        _hook: &'a str,
        _request: &'a cordon_kernel::InferenceRequest,
        _state: Arc<dyn cordon_kernel::StateReader>,
    ) -> cordon_kernel::HookFuture<'a, cordon_kernel::InferenceVerdict> {
        Box::pin(async {
            cordon_kernel::HookOutcome::answered(cordon_kernel::InferenceVerdict::Proceed)
        })
    }

    fn before_tool_call<'a>(
        &'a self,
        _hook: &'a str,
        _call: &'a ToolCall,
        _state: Arc<dyn cordon_kernel::StateReader>,
    ) -> cordon_kernel::HookFuture<'a, cordon_kernel::GateVerdict> {
        Box::pin(async { cordon_kernel::HookOutcome::answered(cordon_kernel::GateVerdict::Allow) })
    }

    fn after_tool_call<'a>(
        &'a self,
        _hook: &'a str,
        _call: &'a ToolCall,
        _result: &'a CallResult,
        _state: Arc<dyn cordon_kernel::StateReader>,
    ) -> cordon_kernel::HookFuture<'a, cordon_kernel::Observation> {
        Box::pin(async { cordon_kernel::HookOutcome::answered(cordon_kernel::Observation::Keep) })
    }

    fn step_end<'a>(
        &'a self,
        _hook: &'a str,
        _summary: &'a cordon_kernel::StepSummary,
        _state: Arc<dyn cordon_kernel::StateReader>,
    ) -> cordon_kernel::HookFuture<'a, ()> {
        Box::pin(async { cordon_kernel::HookOutcome::answered(()) })
    }
}

#[tokio::test]
async fn content_blocks_travel_with_the_record_unless_a_hook_judged_the_result() {
    for hooked in [false, true] {
        let store = Arc::new(MemoryCommitStore::new());
        let tools = Arc::new(Functions::new().with("draw", READ_ONLY, picture()));
        let mut runtime = Runtime::for_requests(tools, store.clone(), Arc::new(EventLog::new()));
        if hooked {
            runtime = runtime.with_hooks(Arc::new(Keeper));
        }
        let run = ServedRun::open(
            runtime,
            &agent(Verdict::Allow, &[], 4),
            "main",
            "served-1",
            7,
        )
        .await
        .unwrap();
        let records = run
            .call(
                vec![call("c1", "draw", json!({}))],
                &DeferApprovals,
                Unanswered::Deny,
                &Requester::default(),
            )
            .await
            .unwrap()
            .committed();
        assert_eq!(output(&records[0]), &json!({"caption": "a pixel"}));
        let loaded = store.load("served-1").await.unwrap();
        let committed = &loaded.commits[0].tools[0];
        let told = loaded.commits[0]
            .messages
            .iter()
            .find_map(|message| match message {
                cordon_kernel::Message::Tool { blocks, .. } => Some(blocks.clone()),
                _ => None,
            })
            .expect("the result is a message of the conversation");
        assert_eq!(&told, &records[0].blocks, "a model sees what a client sees");
        assert!(
            committed.blocks.is_empty(),
            "the blocks are committed once, with the tool message"
        );
        if hooked {
            assert!(records[0].blocks.is_empty(), "a hook saw the JSON alone");
            assert!(told.is_empty());
        } else {
            assert_eq!(records[0].blocks.len(), 1);
            assert_eq!(told, records[0].blocks, "the blocks are committed");
        }
    }
}

/// A tool that asks the person its name, and answers with what they said.
struct Curious;

impl cordon_kernel::ToolSet for Curious {
    fn specs(&self) -> Vec<cordon_kernel::ToolSpec> {
        vec![cordon_kernel::ToolSpec {
            name: "greet".into(),
            description: "asks a name".into(),
            input_schema: std::sync::Arc::new(json!({"type": "object"})),
            output_schema: None,
            annotations: EFFECTFUL,
        }]
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        _args: Value,
        context: cordon_kernel::CallContext,
    ) -> cordon_kernel::ToolFuture<'a> {
        Box::pin(async move {
            let question = Question {
                key: "name".into(),
                message: "What is your name?".into(),
                schema: json!({"type": "object"}),
            };
            let Some(asker) = context.asker else {
                return cordon_kernel::ToolCallOutcome::error(cordon_kernel::ToolError::new(
                    ToolErrorKind::Denied,
                    "nobody to ask",
                ));
            };
            match asker.ask(name, &question).await {
                Ok(Answered::Accept(fields)) => cordon_kernel::ToolCallOutcome::output(fields),
                Ok(other) => cordon_kernel::ToolCallOutcome::output(json!(format!("{other:?}"))),
                Err(unasked) => cordon_kernel::ToolCallOutcome::error(
                    cordon_kernel::ToolError::new(ToolErrorKind::Failed, format!("{unasked:?}")),
                ),
            }
        })
    }
}

/// Answers what it was given and defers the rest, as a client that is
/// asked between requests.
struct Between(Option<Value>);

impl Asker for Between {
    fn ask<'a>(&'a self, _tool: &'a str, _question: &'a Question) -> AskFuture<'a> {
        let answer = self.0.clone();
        Box::pin(async move { answer.map(Answered::Accept).ok_or(Unasked::Deferred) })
    }
}

#[tokio::test]
async fn a_deferred_question_withdraws_the_step_and_the_answer_brought_back_commits_it() {
    let store = Arc::new(MemoryCommitStore::new());
    let runtime =
        Runtime::for_requests(Arc::new(Curious), store.clone(), Arc::new(EventLog::new()));
    let run = ServedRun::open(
        runtime,
        &agent(Verdict::Allow, &[], 4),
        "main",
        "served-1",
        7,
    )
    .await
    .unwrap();
    let asking = |answer: Option<Value>| Requester {
        cancel: Cancellation::new(),
        asker: Some(Arc::new(Between(answer)) as Arc<dyn Asker>),
    };
    let first = run
        .call(
            vec![call("c1", "greet", json!({}))],
            &DeferApprovals,
            Unanswered::Deny,
            &asking(None),
        )
        .await
        .unwrap();
    let Served::Asking(deferred) = first else {
        panic!("expected the question to be deferred: {first:?}");
    };
    assert_eq!(deferred.len(), 1);
    assert_eq!(deferred[0].tool, "greet");
    assert_eq!(deferred[0].question.key, "name");
    assert!(
        store.load("served-1").await.unwrap().commits.is_empty(),
        "nothing commits while a question waits"
    );

    let records = run
        .call(
            vec![call("c1", "greet", json!({}))],
            &DeferApprovals,
            Unanswered::Deny,
            &asking(Some(json!({"name": "Ada"}))),
        )
        .await
        .unwrap()
        .committed();
    assert_eq!(output(&records[0]), &json!({"name": "Ada"}));
    let record = store.load("served-1").await.unwrap();
    assert_eq!(record.commits.len(), 1, "one step, committed once");
    assert!(record.intent.is_none());

    let unasked = run
        .call(
            vec![call("c2", "greet", json!({}))],
            &DeferApprovals,
            Unanswered::Deny,
            &Requester::default(),
        )
        .await
        .unwrap()
        .committed();
    assert_eq!(
        error_kind(&unasked[0]).0,
        ToolErrorKind::Denied,
        "nobody to ask"
    );
}

/// A reload landing while a request's gate waits on a hook takes effect from
/// the next request: the call runs the version its spec was judged by, and
/// the intent is skipped because that version leaves no trace, not because
/// of what the new one says.
#[tokio::test]
async fn a_request_keeps_the_tools_in_force_when_it_started_through_a_reload() {
    let store = Arc::new(MemoryCommitStore::new());
    let intents = Arc::new(std::sync::Mutex::new(Vec::new()));
    let before = Arc::new(
        Functions::new()
            .with("t", READ_ONLY, answering(json!("before")))
            .confined("t"),
    );
    let after = Arc::new(Functions::new().with("t", EFFECTFUL, answering(json!("after"))));
    for tools in [&before, &after] {
        note_intents(tools, &store, &intents);
    }
    let reloads = reloading(before.clone(), after.clone());
    let runtime = Runtime::for_requests(
        Arc::new(Functions::new()),
        store.clone(),
        Arc::new(EventLog::new()),
    )
    .with_reloads(reloads.clone());
    let run = ServedRun::open(
        runtime,
        &agent(Verdict::Allow, &[], 4),
        "main",
        "served-1",
        7,
    )
    .await
    .unwrap();
    let mut answers = Vec::new();
    for id in ["c1", "c2"] {
        let records = run
            .call(
                vec![call(id, "t", json!({}))],
                &DeferApprovals,
                Unanswered::Deny,
                &Requester::default(),
            )
            .await
            .unwrap()
            .committed();
        answers.push(output(&records[0]).clone());
    }
    assert_eq!(
        answers,
        [json!("before"), json!("after")],
        "the reload during the first request served the second"
    );
    assert_eq!((before.calls(), after.calls()), (1, 1));
    assert_eq!(
        *intents.lock().unwrap(),
        [false, true],
        "each call's intent follows the version that ran it"
    );
}
