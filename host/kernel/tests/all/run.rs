//! The agent loop against in-memory ports: a model that replays turns, a tool
//! set of plain functions, and the in-memory commit store.

use futures_util::FutureExt;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use cordon_kernel::{
    Approval, ApprovalFuture, Approver, CallResult, CommitError, CommitStore, DEFAULT_THREAD,
    Disposition, Durability, EndCause, Intent, MemoryCommitStore, Message, PendingCall,
    PendingReason, RunHeader, RunOutcome, StateOp, StateWrite, StepCommit, ToolCall,
    ToolCallOutcome, ToolErrorKind, ToolOutput, Verdict,
};
use serde_json::json;

use crate::support::reloads::{answering, reloading};
use crate::support::*;

#[tokio::test]
async fn a_final_answer_ends_the_run_with_two_commits() {
    let rig = rig(vec![say("done")], Functions::new());
    let outcome = rig
        .runtime
        .start(&agent(Verdict::Allow, &[], 5), "r1", 1, "hello")
        .await
        .unwrap();
    assert_eq!(
        outcome,
        RunOutcome::Ended {
            run_id: "r1".into(),
            cause: EndCause::FinalAnswer,
            answer: Some("done".into())
        }
    );
    let record = rig.store.load("r1").await.unwrap();
    assert_eq!(record.commits.len(), 2, "the input, then the answer");
    assert_eq!(record.messages().len(), 2);
}

#[tokio::test]
async fn a_submitted_run_commits_its_prompt_alone_and_a_resume_drives_it() {
    let rig = rig(vec![say("done")], Functions::new());
    let agent = agent(Verdict::Allow, &[], 5);
    rig.runtime
        .submit(&agent, "team", "r1", 1, "hello", None)
        .await
        .unwrap();
    assert!(rig.model.seen().is_empty(), "submitting asks no model");
    let record = rig.store.load("r1").await.unwrap();
    assert_eq!(record.commits.len(), 1);
    assert_eq!(record.header.thread, "team");
    assert_eq!(record.disposition(), Disposition::Running);
    let outcome = rig.runtime.resume(&agent, "r1", &BTreeMap::new()).await;
    assert!(
        matches!(
            outcome,
            Ok(RunOutcome::Ended {
                cause: EndCause::FinalAnswer,
                ..
            })
        ),
        "{outcome:?}"
    );
    assert_eq!(rig.store.load("r1").await.unwrap().commits.len(), 2);
    let again = rig
        .runtime
        .submit(&agent, "team", "r1", 2, "again", None)
        .await;
    assert!(
        matches!(again, Err(cordon_kernel::RunError::Commit(CommitError::DuplicateRun(ref id))) if id == "r1"),
        "{again:?}"
    );
}

#[tokio::test]
async fn allowed_calls_run_and_their_results_reach_the_model() {
    let tools = Functions::new().with("echo", READ_ONLY, echo());
    let rig = rig(
        vec![call(&[("c1", "echo", json!({"x": 1}))]), say("ok")],
        tools,
    );
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 5), "r", 1, "go")
        .await
        .unwrap();
    let seen = rig.model.seen();
    assert_eq!(seen[0].tools, ["echo"]);
    let last = seen[1].messages.last().unwrap();
    assert_eq!(
        tool_result(last),
        Some(&CallResult::Output(json!({"x": 1})))
    );
    let record = rig.store.load("r").await.unwrap();
    assert_eq!(record.commits[1].tools[0].decision.verdict, Verdict::Allow);
}

#[tokio::test]
async fn a_denied_call_reaches_the_model_as_a_denied_error() {
    let tools = Functions::new().with("echo", READ_ONLY, echo());
    let rig = rig(vec![call(&[("c1", "echo", json!({}))]), say("ok")], tools);
    rig.runtime
        .start(
            &agent(Verdict::Allow, &[(Verdict::Deny, "echo")], 5),
            "r",
            1,
            "go",
        )
        .await
        .unwrap();
    assert_eq!(rig.tools.calls(), 0);
    let seen = rig.model.seen();
    let Some(CallResult::Error(error)) = tool_result(seen[1].messages.last().unwrap()) else {
        panic!("expected a tool error");
    };
    assert_eq!(error.kind, ToolErrorKind::Denied);
    assert!(error.message.contains("echo"), "{error}");
}

#[tokio::test]
async fn an_ask_commits_a_waiting_outcome_and_resumes_on_approval() {
    let tools = Functions::new().with("echo", READ_ONLY, echo());
    let rig = rig(
        vec![call(&[("c1", "echo", json!({"a": 1}))]), say("ok")],
        tools,
    );
    let agent = agent(Verdict::Ask, &[], 5);
    let outcome = rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    let RunOutcome::Waiting { pending, .. } = outcome else {
        panic!("expected waiting, got {outcome:?}");
    };
    assert_eq!(pending[0].call.id, "c1");
    assert!(matches!(pending[0].reason, PendingReason::Approval { .. }));
    assert_eq!(rig.tools.calls(), 0, "nothing runs before approval");
    assert!(matches!(
        rig.store.load("r").await.unwrap().disposition(),
        Disposition::Waiting { .. }
    ));

    let missing = rig.runtime.resume(&agent, "r", &BTreeMap::new()).await;
    assert!(missing.is_err(), "resuming without a decision is refused");
    let decisions = BTreeMap::from([("c1".to_owned(), Approval::Approve)]);
    let outcome = rig.runtime.resume(&agent, "r", &decisions).await.unwrap();
    assert!(matches!(
        outcome,
        RunOutcome::Ended {
            cause: EndCause::FinalAnswer,
            ..
        }
    ));
    assert_eq!(rig.tools.calls(), 1);
}

#[tokio::test]
async fn a_denial_on_resume_reaches_the_model() {
    let tools = Functions::new().with("echo", READ_ONLY, echo());
    let rig = rig(vec![call(&[("c1", "echo", json!({}))]), say("ok")], tools);
    let agent = agent(Verdict::Ask, &[], 5);
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    let decisions = BTreeMap::from([("c1".to_owned(), Approval::Deny)]);
    rig.runtime.resume(&agent, "r", &decisions).await.unwrap();
    assert_eq!(rig.tools.calls(), 0);
    let seen = rig.model.seen();
    let Some(CallResult::Error(error)) = tool_result(seen[1].messages.last().unwrap()) else {
        panic!("expected a tool error");
    };
    assert_eq!(error.kind, ToolErrorKind::Denied);
}

struct ApproveAll;

impl Approver for ApproveAll {
    fn decide<'a>(&'a self, pending: &'a [PendingCall]) -> ApprovalFuture<'a> {
        Box::pin(async move { Some(vec![Approval::Approve; pending.len()]) })
    }
}

#[tokio::test]
async fn an_interactive_approver_answers_without_pausing() {
    let tools = Functions::new().with("echo", READ_ONLY, echo());
    let mut rig = rig(vec![call(&[("c1", "echo", json!({}))]), say("ok")], tools);
    rig.runtime = rig.runtime.with_approver(Arc::new(ApproveAll));
    let outcome = rig
        .runtime
        .start(&agent(Verdict::Ask, &[], 5), "r", 1, "go")
        .await
        .unwrap();
    assert!(matches!(outcome, RunOutcome::Ended { .. }));
    assert_eq!(rig.tools.calls(), 1);
}

#[tokio::test]
async fn the_last_step_is_offered_no_tools_and_ends_the_run() {
    let tools = Functions::new().with("echo", READ_ONLY, echo());
    let turns = vec![
        call(&[("c1", "echo", json!({}))]),
        call(&[("c2", "echo", json!({}))]),
        call(&[("c3", "echo", json!({}))]),
    ];
    let rig = rig(turns, tools);
    let outcome = rig
        .runtime
        .start(&agent(Verdict::Allow, &[], 3), "r", 1, "go")
        .await
        .unwrap();
    assert!(
        matches!(
            outcome,
            RunOutcome::Ended {
                cause: EndCause::MaxSteps,
                ..
            }
        ),
        "{outcome:?}"
    );
    let seen = rig.model.seen();
    assert_eq!(seen.len(), 3);
    assert!(
        seen[2].tools.is_empty(),
        "the last step must answer without tools"
    );
    assert_eq!(rig.tools.calls(), 2);
}

#[tokio::test]
async fn state_writes_commit_with_their_step_and_reach_the_next_request() {
    let tools = Functions::new().with("count", EFFECTFUL, counter());
    let turns = vec![
        call(&[("c1", "count", json!({}))]),
        call(&[("c2", "count", json!({}))]),
        say("ok"),
    ];
    let rig = rig(turns, tools);
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 5), "r", 1, "go")
        .await
        .unwrap();
    let seen = rig.model.seen();
    assert_eq!(seen[1].state.get("count"), Some(&json!(1)));
    assert_eq!(seen[2].state.get("count"), Some(&json!(2)));
    let record = rig.store.load("r").await.unwrap();
    assert_eq!(record.state().unwrap().get("count"), Some(&json!(2)));
}

#[tokio::test]
async fn nothing_a_step_does_is_visible_before_its_commit() {
    let tools = Functions::new().with("count", EFFECTFUL, counter());
    let rig = rig(vec![call(&[("c1", "count", json!({}))]), say("ok")], tools);
    let store = rig.store.clone();
    let observed = Arc::new(Mutex::new(None));
    let observed_in_call = observed.clone();
    *rig.tools.during.lock().unwrap() = Some(Box::new(move || {
        let record = store
            .load("r")
            .now_or_never()
            .expect("the test store answers at once")
            .unwrap();
        *observed_in_call.lock().unwrap() = Some((record.last_seq(), record.state().unwrap()));
    }));
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 5), "r", 1, "go")
        .await
        .unwrap();
    let (seq, state) = observed.lock().unwrap().clone().unwrap();
    assert_eq!(seq, 1, "only the input was committed while the tool ran");
    assert!(state.is_empty());
}

#[tokio::test]
async fn parallel_calls_run_concurrently() {
    let mut tools = Functions::new()
        .with("a", READ_ONLY, echo())
        .with("b", READ_ONLY, echo());
    // Each call waits until both have started: run one after the other, they
    // would wait forever.
    tools.rendezvous = Some(Arc::new(tokio::sync::Barrier::new(2)));
    let rig = rig(
        vec![
            call(&[("c1", "a", json!({})), ("c2", "b", json!({}))]),
            say("ok"),
        ],
        tools,
    );
    let agent = agent(Verdict::Allow, &[], 5);
    let run = rig.runtime.start(&agent, "r", 1, "go");
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(10), run)
        .await
        .expect("both calls were in flight at once")
        .unwrap();
    assert!(matches!(outcome, RunOutcome::Ended { .. }));
    assert_eq!(rig.tools.calls(), 2);
}

#[tokio::test]
async fn two_writers_cannot_both_commit_one_step() {
    let store = MemoryCommitStore::new();
    store
        .create_run(&RunHeader {
            run_id: "r".into(),
            agent: "a".into(),
            created: 1,
            thread: DEFAULT_THREAD.into(),
            metadata: BTreeMap::new(),
            parent: None,
        })
        .await
        .unwrap();
    let commit = |text: &str| StepCommit {
        run_id: "r".into(),
        seq: 1,
        messages: vec![Message::User { text: text.into() }],
        tools: Vec::new(),
        state: Vec::new(),
        thread_state: Vec::new(),
        events: Vec::new(),
        skills: Vec::new(),
        disposition: Disposition::Running,
        continues: None,
        usage: None,
        files: Vec::new(),
    };
    store
        .commit(&commit("first"), Durability::Disk)
        .await
        .unwrap();
    assert_eq!(
        store.commit(&commit("second"), Durability::Disk).await,
        Err(CommitError::Conflict {
            run_id: "r".into(),
            seq: 1
        })
    );
    assert_eq!(
        store.load("r").await.unwrap().messages(),
        vec![Message::User {
            text: "first".into()
        }]
    );
}

/// A run interrupted after recording an intent for `tool`, before committing.
async fn interrupted(store: &MemoryCommitStore, tool: &str) {
    store
        .create_run(&RunHeader {
            run_id: "r".into(),
            agent: "test".into(),
            created: 1,
            thread: DEFAULT_THREAD.into(),
            metadata: BTreeMap::new(),
            parent: None,
        })
        .await
        .unwrap();
    store
        .commit(
            &StepCommit {
                run_id: "r".into(),
                seq: 1,
                messages: vec![Message::User { text: "go".into() }],
                tools: Vec::new(),
                state: Vec::new(),
                thread_state: Vec::new(),
                events: Vec::new(),
                skills: Vec::new(),
                disposition: Disposition::Running,
                continues: None,
                usage: None,
                files: Vec::new(),
            },
            Durability::Disk,
        )
        .await
        .unwrap();
    let call = ToolCall {
        id: "c1".into(),
        name: tool.into(),
        args: json!({}),
    };
    store
        .record_intent(
            &Intent {
                run_id: "r".into(),
                seq: 2,
                assistant: Some(Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![call.clone()],
                }),
                calls: vec![cordon_kernel::ToolRecord {
                    children: Vec::new(),
                    blocks: Vec::new(),
                    call,
                    decision: cordon_kernel::Decision {
                        verdict: Verdict::Allow,
                        answered: None,
                        rule: None,
                        by: cordon_kernel::Decider::Policy,
                    },
                    result: None,
                    timing: None,
                }],
            },
            Durability::Disk,
        )
        .await
        .unwrap();
}

/// Resume the run a crash left with a call of `tool` under way, and check
/// the call ran again, once, and the run went on to its answer.
async fn runs_again_on_resume(tools: Functions, tool: &str) {
    let rig = rig(vec![say("ok")], tools);
    interrupted(&rig.store, tool).await;
    let agent = agent(Verdict::Allow, &[], 5);
    let outcome = rig
        .runtime
        .resume(&agent, "r", &BTreeMap::new())
        .await
        .unwrap();
    assert!(
        matches!(
            outcome,
            RunOutcome::Ended {
                cause: EndCause::FinalAnswer,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(rig.tools.calls(), 1);
}

#[tokio::test]
async fn an_interrupted_read_only_call_runs_again_on_resume() {
    runs_again_on_resume(Functions::new().with("echo", READ_ONLY, echo()), "echo").await;
}

/// A repeat changes nothing more.
#[tokio::test]
async fn an_interrupted_idempotent_call_runs_again_on_resume() {
    let idempotent = cordon_kernel::ToolAnnotations {
        idempotent: true,
        ..EFFECTFUL
    };
    runs_again_on_resume(Functions::new().with("put", idempotent, echo()), "put").await;
}

/// A call whose grants confine every effect to its outcome left nothing
/// behind when it was lost, whatever its annotations claim.
#[tokio::test]
async fn an_interrupted_call_confined_to_its_outcome_runs_again_on_resume() {
    let tools = Functions::new()
        .with("count", EFFECTFUL, counter())
        .confined("count");
    runs_again_on_resume(tools, "count").await;
}

#[tokio::test]
async fn an_interrupted_effectful_call_is_indeterminate_until_decided() {
    let tools = Functions::new().with("count", EFFECTFUL, counter());
    let rig = rig(vec![say("ok")], tools);
    interrupted(&rig.store, "count").await;
    let agent = agent(Verdict::Allow, &[], 5);
    let outcome = rig
        .runtime
        .resume(&agent, "r", &BTreeMap::new())
        .await
        .unwrap();
    let RunOutcome::Waiting { pending, .. } = outcome else {
        panic!("expected waiting, got {outcome:?}");
    };
    assert_eq!(pending[0].reason, PendingReason::Indeterminate);
    assert_eq!(rig.tools.calls(), 0, "never silently run twice");

    let decisions = BTreeMap::from([("c1".to_owned(), Approval::Deny)]);
    let outcome = rig.runtime.resume(&agent, "r", &decisions).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Ended { .. }));
    assert_eq!(rig.tools.calls(), 0);
}

#[tokio::test]
async fn a_model_failure_ends_the_run_with_the_error() {
    let rig = rig(Vec::new(), Functions::new());
    let outcome = rig
        .runtime
        .start(&agent(Verdict::Allow, &[], 5), "r", 1, "go")
        .await
        .unwrap();
    let RunOutcome::Ended {
        cause: EndCause::Error(message),
        ..
    } = outcome
    else {
        panic!("expected an error end, got {outcome:?}");
    };
    assert!(message.contains("no turn left"), "{message}");
    assert!(
        rig.runtime
            .resume(&agent(Verdict::Allow, &[], 5), "r", &BTreeMap::new())
            .await
            .is_err()
    );
}

#[tokio::test]
async fn cancelling_ends_the_run_at_the_next_step_boundary() {
    let tools = Functions::new().with("echo", READ_ONLY, echo());
    let rig = rig(
        vec![call(&[("c1", "echo", json!({}))]), say("never asked")],
        tools,
    );
    let flag = rig.runtime.cancel_flag();
    *rig.tools.during.lock().unwrap() = Some(Box::new(move || {
        flag.store(true, Ordering::SeqCst);
    }));
    let outcome = rig
        .runtime
        .start(&agent(Verdict::Allow, &[], 5), "r", 1, "go")
        .await
        .unwrap();
    assert!(
        matches!(
            outcome,
            RunOutcome::Ended {
                cause: EndCause::Cancelled,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(rig.model.seen().len(), 1, "no model step after the cancel");
    let record = rig.store.load("r").await.unwrap();
    assert_eq!(
        record.commits.len(),
        3,
        "the input, the step that was running, the end"
    );
}

#[tokio::test]
async fn declared_state_is_validated_and_undeclared_state_refused() {
    let tools = Functions::new().with("count", EFFECTFUL, counter()).with(
        "stray",
        EFFECTFUL,
        Box::new(|_, _| ToolCallOutcome {
            files: Default::default(),
            skills: Vec::new(),
            events: Vec::new(),
            result: Ok(ToolOutput::new(json!({}))),
            writes: vec![StateWrite {
                key: "stray".into(),
                op: StateOp::Set { value: json!(1) },
            }],
        }),
    );
    let turns = vec![
        call(&[("c1", "count", json!({}))]),
        call(&[("c2", "count", json!({})), ("c3", "stray", json!({}))]),
        say("ok"),
    ];
    let rig = rig(turns, tools);
    let agent = agent(Verdict::Allow, &[], 5)
        .with_state("count", Some(json!({"type": "integer", "maximum": 1})))
        .unwrap();
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();

    let state = rig.store.load("r").await.unwrap().state().unwrap();
    assert_eq!(
        state.get("count"),
        Some(&json!(1)),
        "the write past the schema was discarded"
    );
    assert!(
        !state.contains_key("stray"),
        "an undeclared key is never committed"
    );
    let seen = rig.model.seen();
    let errors: Vec<String> = seen[2]
        .messages
        .iter()
        .filter_map(|message| match tool_result(message) {
            Some(CallResult::Error(error)) => Some(error.message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("`count`") && errors[0].contains("schema"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("`stray`") && errors[1].contains("not declared"),
        "{errors:?}"
    );
}

#[tokio::test]
async fn the_model_sees_only_declared_state() {
    let tools = Functions::new().with(
        "both",
        EFFECTFUL,
        Box::new(|_, _| ToolCallOutcome {
            files: Default::default(),
            skills: Vec::new(),
            events: Vec::new(),
            result: Ok(ToolOutput::new(json!({}))),
            writes: vec![StateWrite {
                key: "shown".into(),
                op: StateOp::Set {
                    value: json!("yes"),
                },
            }],
        }),
    );
    let rig = rig(vec![call(&[("c1", "both", json!({}))]), say("ok")], tools);
    let agent = agent(Verdict::Allow, &[], 5)
        .with_state("shown", None)
        .unwrap()
        .with_state("other", None)
        .unwrap();
    rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    let seen = rig.model.seen();
    assert_eq!(
        seen[1].state,
        BTreeMap::from([("shown".to_owned(), json!("yes"))])
    );
}

#[tokio::test]
async fn a_run_goes_on_with_an_earlier_runs_conversation_in_its_thread() {
    let tools = || Functions::new().with("echo", READ_ONLY, echo());
    let store = Arc::new(MemoryCommitStore::new());
    let first = rig_on(
        vec![call(&[("c1", "echo", json!({"x": 1}))]), say("one")],
        tools(),
        store.clone(),
    );
    let three_steps = agent(Verdict::Allow, &[], 3);
    first
        .runtime
        .start_in(&three_steps, "errands", "r1", 1, "go")
        .await
        .unwrap();
    let earlier = store.load("r1").await.unwrap();

    // The model gives the new run's call the id it gave the earlier one.
    let second = rig_on(
        vec![call(&[("c1", "echo", json!({"x": 2}))]), say("two")],
        tools(),
        store.clone(),
    );
    let outcome = second
        .runtime
        .start_after(&three_steps, &earlier, "r2", 2, "and again")
        .await
        .unwrap();
    assert!(
        matches!(
            outcome,
            RunOutcome::Ended {
                cause: EndCause::FinalAnswer,
                ..
            }
        ),
        "the carried turns are no steps of the new run: {outcome:?}"
    );
    let seen = second.model.seen();
    let ids: Vec<String> = seen[1]
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["earlier-1", "c1"], "no id is seen twice");
    assert_eq!(
        seen[0].messages.last(),
        Some(&Message::User {
            text: "and again".into()
        })
    );
    assert_eq!(seen[0].messages.len(), 5, "{:?}", seen[0].messages);
    let record = store.load("r2").await.unwrap();
    assert_eq!(record.header.thread, "errands");
    assert_eq!(
        record.commits[0].continues,
        Some(cordon_kernel::Continued {
            run_id: "r1".into(),
            messages: 4
        })
    );
    assert_eq!(
        record.steps(),
        [0, 1, 2],
        "the carried turns are numbered in no step: the prompt, the call, the answer"
    );
    assert_eq!(earlier.steps(), [0, 1, 2]);
    assert_eq!(
        store.load("r1").await.unwrap(),
        earlier,
        "the earlier run is kept as it was"
    );

    // A run that waits on a call has no whole conversation to go on with.
    let asking = rig_on(
        vec![call(&[("c9", "echo", json!({}))])],
        tools(),
        store.clone(),
    );
    asking
        .runtime
        .start(&agent(Verdict::Ask, &[], 2), "r3", 3, "ask")
        .await
        .unwrap();
    let waiting = store.load("r3").await.unwrap();
    let error = asking
        .runtime
        .start_after(&three_steps, &waiting, "r4", 4, "more")
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("run r3 waits on calls"),
        "{error}"
    );
    assert!(
        store.load("r4").await.is_err(),
        "nothing of the refused run is kept"
    );
}

/// A drive of the loop keeps the tools and hooks in force when it started:
/// a reload during its first step serves the next run, not the next step.
#[tokio::test]
async fn a_reload_during_a_run_serves_the_next_run() {
    let before = Arc::new(Functions::new().with("t", READ_ONLY, answering(json!("before"))));
    let after = Arc::new(Functions::new().with("t", READ_ONLY, answering(json!("after"))));
    let model = Replay::new(vec![
        call(&[("c1", "t", json!({}))]),
        call(&[("c2", "t", json!({}))]),
        say("one"),
        call(&[("c3", "t", json!({}))]),
        say("two"),
    ]);
    let store = Arc::new(MemoryCommitStore::new());
    let runtime = cordon_kernel::Runtime::new(
        model.clone(),
        Arc::new(Functions::new()),
        store.clone(),
        Arc::new(cordon_kernel::EventLog::new()),
    )
    .with_reloads(reloading(before.clone(), after.clone()));
    let agent = agent(Verdict::Allow, &[], 5);
    runtime.start(&agent, "r1", 1, "go").await.unwrap();
    assert_eq!(
        (before.calls(), after.calls()),
        (2, 0),
        "both steps of the first run"
    );
    runtime.start(&agent, "r2", 2, "again").await.unwrap();
    assert_eq!((before.calls(), after.calls()), (2, 1));
}
