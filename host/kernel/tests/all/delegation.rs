//! Delegation through the loop: a sub-agent is a tool call whose task runs
//! as a run of its own, linked to the call, narrowed by every agent above
//! it, its file changes reaching the folder only with its parent's step,
//! its waiting calls named by path from the root, and a crash anywhere
//! resumed from each run's last commit.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::{
    AgentDef, Approval, CallResult, CommitStore, EndCause, Event, FileLedger, LimitKind,
    MemoryCommitStore, Message, ModelProvider, ModelResolver, ModelSettings, ParentLink,
    PendingReason, RunError, RunOutcome, ToolErrorKind, Verdict,
};
use serde_json::json;

use crate::files::{FakeFolder, writer};
use crate::support::*;

/// Agent files in a folder of their own; the first is the root.
fn agents(files: &[(&str, &str)]) -> (tempfile::TempDir, AgentDef) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let root = AgentDef::load(&dir.path().join(files[0].0)).unwrap();
    (dir, root)
}

fn task(id: &str, agent: &str, task: &str) -> (String, String, serde_json::Value) {
    (id.into(), format!("agent.{agent}"), json!({ "task": task }))
}

fn calls(calls: &[(String, String, serde_json::Value)]) -> cordon_kernel::ModelResponse {
    let borrowed: Vec<(&str, &str, serde_json::Value)> = calls
        .iter()
        .map(|(id, name, args)| (id.as_str(), name.as_str(), args.clone()))
        .collect();
    call(&borrowed)
}

/// The result the run `run_id` committed for call `call_id`.
async fn result_of(store: &MemoryCommitStore, run_id: &str, call_id: &str) -> CallResult {
    store
        .load(run_id)
        .await
        .unwrap()
        .messages()
        .into_iter()
        .find_map(|message| match message {
            Message::Tool {
                call_id: id,
                result,
                ..
            } if id == call_id => Some(result),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{run_id} has no result for {call_id}"))
}

/// The ids of the calls an observer is shown.
#[derive(Default)]
struct Shown(std::sync::Mutex<Vec<String>>);

impl cordon_kernel::Observer for Shown {
    fn observe(&self, progress: cordon_kernel::Progress) {
        if let cordon_kernel::Progress::ToolCall { call, .. } = progress {
            self.0.lock().unwrap().push(call.id);
        }
    }
}

fn answer(outcome: &RunOutcome) -> &str {
    match outcome {
        RunOutcome::Ended {
            cause: EndCause::FinalAnswer,
            answer: Some(answer),
            ..
        } => answer,
        other => panic!("expected an answer, got {other:?}"),
    }
}

const LEAD: &str = r#"
name = "lead"
instructions = "Delegate."
[permissions]
default = "allow"
[agents.helper]
description = "Answers arithmetic."
file = "helper.toml"
"#;

const HELPER: &str = r#"
name = "helper"
instructions = "Answer with a number."
[permissions]
default = "allow"
"#;

#[tokio::test]
async fn a_sub_agent_answers_as_a_tool_in_a_run_of_its_own_linked_to_the_call() {
    let (_dir, lead) = agents(&[("lead.toml", LEAD), ("helper.toml", HELPER)]);
    let rig = rig(
        vec![
            calls(&[task("call-1-1", "helper", "six times seven?")]),
            say("42"),
            say("It is 42."),
        ],
        Functions::new().with("echo", READ_ONLY, echo()),
    );
    let outcome = rig.runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert_eq!(answer(&outcome), "It is 42.");

    let seen = rig.model.seen();
    assert_eq!(seen[0].tools, ["echo", "agent.helper"]);
    assert_eq!(seen[1].instructions, "Answer with a number.");
    assert_eq!(seen[1].tools, ["echo"], "the helper has no sub-agents");
    assert_eq!(
        seen[1].messages,
        [Message::User {
            text: "six times seven?".into()
        }]
    );
    assert_eq!(
        result_of(&rig.store, "r", "call-1-1").await,
        CallResult::Output(json!("42"))
    );
    let child = rig.store.load("r/call-1-1").await.unwrap();
    assert_eq!(
        child.header.parent,
        Some(ParentLink {
            run_id: "r".into(),
            seq: 2,
            call_id: "call-1-1".into(),
            root: "r".into(),
            depth: 1,
        })
    );
    assert_eq!(child.header.agent, "helper");
    let runs: Vec<String> = rig
        .store
        .runs()
        .await
        .unwrap()
        .into_iter()
        .map(|run| run.header.run_id)
        .collect();
    assert_eq!(runs, ["r", "r/call-1-1"]);

    let alone = rig
        .runtime
        .resume(&lead, "r/call-1-1", &BTreeMap::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&alone, RunError::SubAgentRun { root, .. } if root == "r"),
        "{alone}"
    );
}

#[tokio::test]
async fn a_parents_deny_and_tool_list_hold_whatever_the_child_allows() {
    let lead = r#"
name = "lead"
tools = ["agent.*", "write", "echo"]
[permissions]
default = "allow"
deny = ["write(path=secret/**)"]
[agents.helper]
description = "Writes."
file = "helper.toml"
"#;
    let helper = r#"
name = "helper"
[permissions]
default = "allow"
allow = ["*", "write(path=secret/**)"]
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead), ("helper.toml", helper)]);
    let rig = rig(
        vec![
            calls(&[task("call-1-1", "helper", "write the secret")]),
            call(&[
                ("c-1", "write", json!({"path": "secret/key"})),
                ("c-2", "read", json!({})),
            ]),
            say("refused"),
            say("done"),
        ],
        Functions::new()
            .with("write", EFFECTFUL, echo())
            .with("read", READ_ONLY, echo())
            .with("echo", READ_ONLY, echo()),
    );
    let outcome = rig.runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert_eq!(answer(&outcome), "done");
    assert_eq!(rig.model.seen()[1].tools, ["write", "echo"], "not `read`");
    let child = rig.store.load("r/call-1-1").await.unwrap();
    let records = &child.commits[1].tools;
    assert_eq!(records[0].decision.verdict, Verdict::Deny);
    assert_eq!(
        records[0].decision.rule.as_deref(),
        Some("write(path=secret/**)")
    );
    assert_eq!(records[1].decision.verdict, Verdict::Deny, "{records:?}");
    assert_eq!(rig.tools.calls(), 0, "neither call ran");
}

const ROOT: &str = r#"
name = "root"
[permissions]
default = "allow"
[agents.mid]
description = "Delegates on."
file = "mid.toml"
"#;

const MID: &str = r#"
name = "mid"
[permissions]
default = "allow"
[agents.leaf]
description = "Writes files."
instructions = "Write what you are told."
[agents.leaf.permissions]
ask = ["write"]
"#;

#[tokio::test]
async fn a_grandchilds_ask_waits_at_the_root_by_path_and_its_approval_goes_on_there() {
    let (_dir, root) = agents(&[("root.toml", ROOT), ("mid.toml", MID)]);
    let folder = Arc::new(FakeFolder::default());
    let tools = Functions::new().with("write", EFFECTFUL, writer(&folder));
    let rig = rig(
        vec![
            calls(&[task("call-1-1", "mid", "have a.txt written")]),
            calls(&[task("m-1", "leaf", "write a.txt")]),
            call(&[("l-1", "write", json!({"path": "a.txt", "text": "hi"}))]),
            say("wrote it"),
            say("the leaf wrote it"),
            say("done"),
        ],
        tools,
    );
    let shown = Arc::new(Shown::default());
    let runtime = rig
        .runtime
        .clone()
        .with_files(Arc::clone(&folder) as Arc<dyn FileLedger>)
        .with_observer(shown.clone());
    let outcome = runtime.start(&root, "r", 1, "go").await.unwrap();
    assert_eq!(
        *shown.0.lock().unwrap(),
        ["call-1-1", "call-1-1/m-1", "call-1-1/m-1/l-1"],
        "a sub-agent's calls show through the root's observer by their path"
    );
    let RunOutcome::Waiting { pending, .. } = &outcome else {
        panic!("expected waiting, got {outcome:?}");
    };
    let PendingReason::Delegated {
        run_id,
        pending: below,
    } = &pending[0].reason
    else {
        panic!("{pending:?}");
    };
    assert_eq!(run_id, "r/call-1-1");
    assert!(matches!(
        &below[0].reason,
        PendingReason::Delegated { run_id, .. } if run_id == "r/call-1-1/m-1"
    ));
    let leaves = pending[0].leaves();
    assert_eq!(leaves[0].call.id, "call-1-1/m-1/l-1");
    assert_eq!(leaves[0].call.name, "write");
    assert_eq!(
        leaves[0].reason.asked().as_deref(),
        Some("permission rule `write` asks")
    );
    assert_eq!(rig.tools.calls(), 0);

    for (decisions, refused) in [
        (BTreeMap::new(), "call-1-1/m-1/l-1"),
        (
            BTreeMap::from([("call-1-1/m-1/l-2".to_owned(), Approval::Approve)]),
            "call-1-1/m-1/l-2",
        ),
    ] {
        let error = runtime.resume(&root, "r", &decisions).await.unwrap_err();
        assert!(error.to_string().contains(refused), "{error}");
    }
    let decisions = BTreeMap::from([("call-1-1/m-1/l-1".to_owned(), Approval::Approve)]);
    let outcome = runtime.resume(&root, "r", &decisions).await.unwrap();
    assert_eq!(answer(&outcome), "done");
    assert_eq!(rig.tools.calls(), 1);
    assert_eq!(
        result_of(&rig.store, "r/call-1-1/m-1", "l-1").await,
        CallResult::Output(json!("staged"))
    );
    assert_eq!(folder.folder()["a.txt"].as_ref(), b"hi");
    for run in ["r", "r/call-1-1", "r/call-1-1/m-1"] {
        let files = rig.store.files(run).await.unwrap();
        assert_eq!(files.len(), 1, "{run} commits the change once");
        assert_eq!(files[0].changes[0].path, "a.txt", "{run}");
    }
}

#[tokio::test]
async fn a_childs_committed_files_reach_the_folder_only_with_its_parents_step() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
[agents.helper]
description = "Writes, then asks."
[agents.helper.permissions]
ask = ["confirm"]
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead)]);
    let folder = Arc::new(FakeFolder::default());
    let tools = Functions::new()
        .with("write", EFFECTFUL, writer(&folder))
        .with("confirm", EFFECTFUL, echo());
    let rig = rig(
        vec![
            calls(&[task("call-1-1", "helper", "write a.txt and confirm")]),
            call(&[("h-1", "write", json!({"path": "a.txt", "text": "draft"}))]),
            call(&[("h-2", "confirm", json!({}))]),
            say("written"),
            say("done"),
        ],
        tools,
    );
    let runtime = rig
        .runtime
        .clone()
        .with_files(Arc::clone(&folder) as Arc<dyn FileLedger>);
    let outcome = runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert!(matches!(outcome, RunOutcome::Waiting { .. }), "{outcome:?}");
    let committed = rig.store.files("r/call-1-1").await.unwrap();
    assert_eq!(committed[0].changes[0].path, "a.txt");
    assert!(folder.folder().is_empty(), "committed by the child alone");
    assert!(rig.store.files("r").await.unwrap().is_empty());

    let decisions = BTreeMap::from([("call-1-1/h-2".to_owned(), Approval::Approve)]);
    let outcome = runtime.resume(&lead, "r", &decisions).await.unwrap();
    assert_eq!(answer(&outcome), "done");
    assert_eq!(folder.folder()["a.txt"].as_ref(), b"draft");
    assert_eq!(rig.store.files("r").await.unwrap()[0].seq, 3);
}

#[tokio::test]
async fn depth_and_children_per_step_are_limits_naming_their_setting() {
    let root = format!("{ROOT}\n[delegation]\nmax-depth = 1\n");
    let (_dir, root) = agents(&[("root.toml", &root), ("mid.toml", MID)]);
    let rig = rig(
        vec![
            calls(&[task("call-1-1", "mid", "go deeper")]),
            calls(&[task("m-1", "leaf", "write")]),
            say("too deep"),
            say("done"),
        ],
        Functions::new(),
    );
    let outcome = rig.runtime.start(&root, "r", 1, "go").await.unwrap();
    assert_eq!(answer(&outcome), "done");
    let CallResult::Error(error) = result_of(&rig.store, "r/call-1-1", "m-1").await else {
        panic!("the grandchild must be refused");
    };
    assert_eq!(error.kind, ToolErrorKind::Limit);
    assert!(
        error.message.contains("`[delegation] max-depth`"),
        "{error}"
    );
    let events = &rig.store.load("r/call-1-1").await.unwrap().commits[1].events;
    assert!(
        events.iter().any(|event| matches!(
            event,
            Event::LimitExceeded { limit: LimitKind::Delegation, tool, .. } if tool == "agent.leaf"
        )),
        "{events:?}"
    );
    assert!(
        rig.store.load("r/call-1-1/m-1").await.is_err(),
        "never opened"
    );

    let fan = r#"
name = "lead"
[permissions]
default = "allow"
[delegation]
max-children-per-step = 1
[agents.a]
description = "A."
[agents.b]
description = "B."
"#;
    let (_dir, fan) = agents(&[("lead.toml", fan)]);
    let rig = crate::support::rig(
        vec![
            calls(&[task("call-1-1", "a", "one"), task("call-1-2", "b", "two")]),
            say("A"),
            say("done"),
        ],
        Functions::new(),
    );
    let outcome = rig.runtime.start(&fan, "r", 1, "go").await.unwrap();
    assert_eq!(answer(&outcome), "done");
    assert_eq!(
        result_of(&rig.store, "r", "call-1-1").await,
        CallResult::Output(json!("A"))
    );
    let CallResult::Error(error) = result_of(&rig.store, "r", "call-1-2").await else {
        panic!("the second child must be refused");
    };
    assert!(
        error
            .message
            .contains("`[delegation] max-children-per-step`"),
        "{error}"
    );
}

/// Each sub-agent's own model, by the spec it names.
struct Models(BTreeMap<String, Arc<Replay>>);

impl ModelResolver for Models {
    fn resolve(
        &self,
        spec: &str,
        _settings: &ModelSettings,
        _dir: &Path,
    ) -> Result<Arc<dyn ModelProvider>, String> {
        self.0
            .get(spec)
            .map(|model| Arc::clone(model) as Arc<dyn ModelProvider>)
            .ok_or_else(|| format!("no model {spec}"))
    }
}

const PAIR: &str = r#"
name = "lead"
[permissions]
default = "allow"
[agents.a]
description = "A."
model = "a"
[agents.b]
description = "B."
model = "b"
"#;

#[tokio::test]
async fn children_of_one_step_run_at_once_each_on_its_model() {
    let (_dir, lead) = agents(&[("lead.toml", PAIR)]);
    let mut tools = Functions::new().with("meet", READ_ONLY, echo());
    tools.rendezvous = Some(Arc::new(tokio::sync::Barrier::new(2)));
    let rig = rig(
        vec![
            calls(&[task("call-1-1", "a", "meet"), task("call-1-2", "b", "meet")]),
            say("both met"),
        ],
        tools,
    );
    let models = Models(BTreeMap::from([
        (
            "a".to_owned(),
            Replay::new(vec![call(&[("a-1", "meet", json!({}))]), say("A met")]),
        ),
        (
            "b".to_owned(),
            Replay::new(vec![call(&[("b-1", "meet", json!({}))]), say("B met")]),
        ),
    ]));
    let runtime = rig.runtime.clone().with_models(Arc::new(models));
    let outcome = tokio::time::timeout(Duration::from_secs(20), runtime.start(&lead, "r", 1, "go"))
        .await
        .expect("the two children wait for each other, so they run at once")
        .unwrap();
    assert_eq!(answer(&outcome), "both met");
    for (id, said) in [("call-1-1", "A met"), ("call-1-2", "B met")] {
        assert_eq!(
            result_of(&rig.store, "r", id).await,
            CallResult::Output(json!(said))
        );
    }
}

#[tokio::test]
async fn two_children_changing_one_path_conflict_like_two_calls() {
    let (_dir, lead) = agents(&[("lead.toml", PAIR)]);
    let folder = Arc::new(FakeFolder::default());
    let rig = rig(
        vec![calls(&[
            task("call-1-1", "a", "write"),
            task("call-1-2", "b", "write"),
        ])],
        Functions::new().with("write", EFFECTFUL, writer(&folder)),
    );
    let write =
        |id: &str, text: &str| call(&[(id, "write", json!({"path": "a.txt", "text": text}))]);
    let models = Models(BTreeMap::from([
        (
            "a".to_owned(),
            Replay::new(vec![write("a-1", "A"), say("A")]),
        ),
        (
            "b".to_owned(),
            Replay::new(vec![write("b-1", "B"), say("B")]),
        ),
    ]));
    let runtime = rig
        .runtime
        .clone()
        .with_models(Arc::new(models))
        .with_files(Arc::clone(&folder) as Arc<dyn FileLedger>);
    let error = runtime.start(&lead, "r", 1, "go").await.unwrap_err();
    assert!(matches!(error, RunError::FileConflict(_)), "{error}");
    assert!(error.to_string().contains("a.txt"), "{error}");
    assert!(folder.folder().is_empty());
    assert_eq!(rig.store.load("r").await.unwrap().commits.len(), 1);
}

#[tokio::test]
async fn a_crash_during_a_childs_effectful_call_resumes_without_running_it_again() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
[agents.helper]
description = "Counts."
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead)]);
    let mut tools = Functions::new().with("count", EFFECTFUL, counter());
    tools.rendezvous = Some(Arc::new(tokio::sync::Barrier::new(2)));
    let first = rig(
        vec![
            calls(&[task("call-1-1", "helper", "count")]),
            call(&[("h-1", "count", json!({}))]),
        ],
        tools,
    );
    let running = tokio::spawn({
        let (runtime, lead) = (first.runtime.clone(), lead.clone());
        async move { runtime.start(&lead, "r", 1, "go").await }
    });
    while first.tools.calls() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    assert!(
        first
            .store
            .load("r/call-1-1")
            .await
            .unwrap()
            .intent
            .is_some(),
        "the child recorded its call before running it"
    );

    let again = rig_on(
        vec![say("counted"), say("done")],
        Functions::new().with("count", EFFECTFUL, counter()),
        first.store.clone(),
    );
    let outcome = again
        .runtime
        .resume(&lead, "r", &BTreeMap::new())
        .await
        .unwrap();
    let RunOutcome::Waiting { pending, .. } = &outcome else {
        panic!("expected waiting, got {outcome:?}");
    };
    let leaves = pending[0].leaves();
    assert_eq!(leaves[0].call.id, "call-1-1/h-1");
    assert_eq!(leaves[0].reason, PendingReason::Indeterminate);
    assert_eq!(again.tools.calls(), 0, "never silently run twice");

    let decisions = BTreeMap::from([("call-1-1/h-1".to_owned(), Approval::Approve)]);
    let outcome = again.runtime.resume(&lead, "r", &decisions).await.unwrap();
    assert_eq!(answer(&outcome), "done");
    assert_eq!(again.tools.calls(), 1);
    assert_eq!(
        result_of(&again.store, "r", "call-1-1").await,
        CallResult::Output(json!("counted"))
    );
}

#[test]
fn sub_agent_declarations_are_checked_naming_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write(
        "loop.toml",
        "name = \"l\"\n[agents.me]\ndescription = \"Me.\"\nfile = \"loop.toml\"\n",
    );
    write("skilled.toml", "name = \"s\"\nskills = [\"skills\"]\n");
    let parent = |table: &str| {
        let file = dir.path().join("parent.toml");
        std::fs::write(&file, format!("name = \"p\"\n{table}")).unwrap();
        AgentDef::load(&file).unwrap_err().to_string()
    };
    for (table, says) in [
        (
            "[agents.x]\ndescription = \"X.\"\nfile = \"loop.toml\"\n",
            "includes itself",
        ),
        (
            "[agents.x]\ndescription = \"X.\"\nfile = \"skilled.toml\"\n",
            "skilled.toml: field `skills`: a sub-agent uses its parent's skills",
        ),
        (
            "[agents.x]\ndescription = \"X.\"\nfile = \"missing.toml\"\n",
            "field `agents.x.file`: cannot read",
        ),
        ("[agents.X]\ndescription = \"X.\"\n", "field `agents.X`"),
        (
            "[agents.x]\ndescription = \" \"\n",
            "field `agents.x.description`",
        ),
        ("[agents.x]\n", "missing field `description`"),
        (
            "[agents.x]\ndescription = \"X.\"\nskills = []\n",
            "unknown field `skills`",
        ),
        (
            "[agents.x]\ndescription = \"X.\"\nsandbox = \"dir\"\n",
            "field `agents.x.sandbox`",
        ),
        ("[delegation]\nmax-depth = \"3\"\n", "max-depth"),
    ] {
        let error = parent(table);
        assert!(error.contains(says), "{table}: {error}");
    }
}

#[tokio::test]
async fn a_counter_counts_across_the_tree_from_the_parents_count() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
[state.count]
merge = "commutative"
[agents.helper]
description = "Counts twice."
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead)]);
    let rig = rig(
        vec![
            call(&[("call-1-1", "count", json!({}))]),
            calls(&[task("call-2-1", "helper", "count twice")]),
            call(&[("h-1", "count", json!({}))]),
            call(&[("h-2", "count", json!({}))]),
            say("counted twice"),
            call(&[("call-3-1", "count", json!({}))]),
            say("done"),
        ],
        Functions::new().with("count", EFFECTFUL, counter()),
    );
    let outcome = rig.runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert_eq!(answer(&outcome), "done");
    for (run, call, saw) in [
        ("r/call-2-1", "h-1", 1),
        ("r/call-2-1", "h-2", 2),
        ("r", "call-3-1", 3),
    ] {
        assert_eq!(
            result_of(&rig.store, run, call).await,
            CallResult::Output(json!({ "saw": saw })),
            "{run} {call}"
        );
    }
    let state = rig.store.load("r").await.unwrap().state().unwrap();
    assert_eq!(state["count"], json!(4));
}

fn costing(
    mut response: cordon_kernel::ModelResponse,
    tokens: u64,
) -> cordon_kernel::ModelResponse {
    response.usage.output_tokens = tokens;
    response
}

#[tokio::test]
async fn the_trees_token_and_time_budgets_end_children_and_root_with_a_limit_naming_the_setting() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
[delegation]
max-tokens = 10
[agents.helper]
description = "Counts."
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead)]);
    let rig = rig(
        vec![
            costing(calls(&[task("call-1-1", "helper", "count")]), 6),
            costing(call(&[("h-1", "count", json!({}))]), 6),
            say("never asked: the tree is over budget"),
        ],
        Functions::new().with("count", EFFECTFUL, counter()),
    );
    let outcome = rig.runtime.start(&lead, "r", 1, "go").await.unwrap();
    let RunOutcome::Ended {
        cause: EndCause::Limit(detail),
        ..
    } = &outcome
    else {
        panic!("expected the budget to end the run, got {outcome:?}");
    };
    assert!(
        detail.contains("spent 12 model tokens, past its budget of 10")
            && detail.contains("`[delegation] max-tokens`"),
        "{detail}"
    );
    let CallResult::Error(error) = result_of(&rig.store, "r", "call-1-1").await else {
        panic!("the helper must stop");
    };
    assert_eq!(error.kind, ToolErrorKind::Limit);
    assert!(error.message.contains("max-tokens"), "{error}");
    assert_eq!(rig.store.load("r").await.unwrap().tokens(), 6);
    assert_eq!(rig.store.load("r/call-1-1").await.unwrap().tokens(), 6);
    let last = rig.store.load("r").await.unwrap().commits.pop().unwrap();
    assert!(
        last.events.iter().any(|event| matches!(
            event,
            Event::LimitExceeded {
                limit: LimitKind::Delegation,
                ..
            }
        )),
        "{:?}",
        last.events
    );
    assert_eq!(rig.model.seen().len(), 2, "no model step past the budget");

    let spent = rig_on(
        vec![costing(calls(&[task("call-1-1", "helper", "count")]), 11)],
        Functions::new(),
        Arc::new(MemoryCommitStore::new()),
    );
    spent.runtime.start(&lead, "s", 1, "go").await.unwrap();
    let CallResult::Error(error) = result_of(&spent.store, "s", "call-1-1").await else {
        panic!("a delegation past the budget is refused");
    };
    assert!(
        error.message.contains("`[delegation] max-tokens`"),
        "{error}"
    );
    assert!(
        spent.store.load("s/call-1-1").await.is_err(),
        "never opened"
    );

    let hurried = r#"
name = "lead"
[permissions]
default = "allow"
[delegation]
max-seconds = 0
"#;
    let (_dir, hurried) = agents(&[("lead.toml", hurried)]);
    let quick = crate::support::rig(vec![say("never asked")], Functions::new());
    let outcome = quick.runtime.start(&hurried, "q", 1, "go").await.unwrap();
    assert!(
        matches!(&outcome, RunOutcome::Ended { cause: EndCause::Limit(detail), .. } if detail.contains("`[delegation] max-seconds`")),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_resumed_tree_counts_the_tokens_its_runs_spent_before() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
ask = ["confirm"]
[delegation]
max-tokens = 10
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead)]);
    let rig = rig(
        vec![
            costing(call(&[("call-1-1", "confirm", json!({}))]), 8),
            costing(call(&[("call-2-1", "confirm", json!({}))]), 4),
        ],
        Functions::new().with("confirm", EFFECTFUL, echo()),
    );
    let outcome = rig.runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert!(matches!(outcome, RunOutcome::Waiting { .. }), "{outcome:?}");
    let approve = |id: &str| BTreeMap::from([(id.to_owned(), Approval::Approve)]);
    let outcome = rig
        .runtime
        .resume(&lead, "r", &approve("call-1-1"))
        .await
        .unwrap();
    assert!(matches!(outcome, RunOutcome::Waiting { .. }), "{outcome:?}");
    let outcome = rig
        .runtime
        .resume(&lead, "r", &approve("call-2-1"))
        .await
        .unwrap();
    assert!(
        matches!(&outcome, RunOutcome::Ended { cause: EndCause::Limit(detail), .. } if detail.contains("spent 12")),
        "8 tokens before the first wait and 4 after: {outcome:?}"
    );
}

#[tokio::test]
async fn a_reused_or_slashed_call_id_never_reaches_an_earlier_sub_agents_run() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
[agents.helper]
description = "Answers."
[agents.other]
description = "Answers otherwise."
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead)]);
    let rig = rig(
        vec![
            calls(&[task("call-1", "helper", "first")]),
            say("the helper's answer"),
            calls(&[task("call-1", "other", "second")]),
            calls(&[task("a/b", "helper", "slashed")]),
            say("done"),
        ],
        Functions::new(),
    );
    let outcome = rig.runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert_eq!(answer(&outcome), "done");
    let record = rig.store.load("r").await.unwrap();
    let results: Vec<CallResult> = record
        .messages()
        .into_iter()
        .filter_map(|message| match message {
            Message::Tool { result, .. } => Some(result),
            _ => None,
        })
        .collect();
    assert_eq!(results[0], CallResult::Output(json!("the helper's answer")));
    let CallResult::Error(reused) = &results[1] else {
        panic!("a reused id must not get the earlier answer: {results:?}");
    };
    assert!(reused.message.contains("earlier in this run"), "{reused}");
    let CallResult::Error(slashed) = &results[2] else {
        panic!("{results:?}");
    };
    assert_eq!(slashed.kind, ToolErrorKind::InvalidInput);
    assert!(slashed.message.contains("holds `/`"), "{slashed}");
    let runs = rig.store.runs().await.unwrap();
    assert_eq!(runs.len(), 2, "one sub-agent run only: {runs:?}");

    let refused = rig.runtime.start(&lead, "x/y", 1, "go").await.unwrap_err();
    assert!(matches!(refused, RunError::InvalidRunId(_)), "{refused}");
}

#[tokio::test]
async fn a_crash_after_an_approval_inside_a_child_leaves_the_call_indeterminate() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
[agents.helper]
description = "Counts when allowed."
[agents.helper.permissions]
ask = ["count"]
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead)]);
    let mut tools = Functions::new().with("count", EFFECTFUL, counter());
    tools.rendezvous = Some(Arc::new(tokio::sync::Barrier::new(2)));
    let first = rig(
        vec![
            calls(&[task("call-1-1", "helper", "count")]),
            call(&[("h-1", "count", json!({}))]),
        ],
        tools,
    );
    let outcome = first.runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert!(matches!(outcome, RunOutcome::Waiting { .. }), "{outcome:?}");
    let approving = tokio::spawn({
        let (runtime, lead) = (first.runtime.clone(), lead.clone());
        async move {
            let decisions = BTreeMap::from([("call-1-1/h-1".to_owned(), Approval::Approve)]);
            runtime.resume(&lead, "r", &decisions).await
        }
    });
    while first.tools.calls() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    approving.abort();
    let _ = approving.await;

    let again = rig_on(
        vec![say("counted"), say("done")],
        Functions::new().with("count", EFFECTFUL, counter()),
        first.store.clone(),
    );
    let outcome = again
        .runtime
        .resume(&lead, "r", &BTreeMap::new())
        .await
        .unwrap();
    let RunOutcome::Waiting { pending, .. } = &outcome else {
        panic!("expected waiting, got {outcome:?}");
    };
    let leaves = pending[0].leaves();
    assert_eq!(leaves[0].call.id, "call-1-1/h-1");
    assert_eq!(
        leaves[0].reason,
        PendingReason::Indeterminate,
        "the approved call may have acted before the crash"
    );
    assert_eq!(again.tools.calls(), 0);
}

#[tokio::test]
async fn a_child_cannot_escape_its_parents_counter_or_write_thread_state() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
[state.count]
merge = "commutative"
[state.shared]
scope = "thread"
[agents.helper]
description = "Counts."
file = "helper.toml"
"#;
    let helper = r#"
name = "helper"
[permissions]
default = "allow"
[state.count]
scope = "thread"
[state.shared]
scope = "thread"
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead), ("helper.toml", helper)]);
    let share = Box::new(
        |_: &serde_json::Value, _: &dyn cordon_kernel::StateReader| {
            cordon_kernel::ToolCallOutcome::output(json!("shared")).with_writes(vec![
                cordon_kernel::StateWrite {
                    key: "shared".into(),
                    op: cordon_kernel::StateOp::Set { value: json!(1) },
                },
            ])
        },
    );
    let rig = rig(
        vec![
            calls(&[task("call-1-1", "helper", "count")]),
            call(&[("h-1", "count", json!({})), ("h-2", "share", json!({}))]),
            say("counted"),
            say("done"),
        ],
        Functions::new()
            .with("count", EFFECTFUL, counter())
            .with("share", EFFECTFUL, share),
    );
    let outcome = rig.runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert_eq!(answer(&outcome), "done");
    let state = rig.store.load("r").await.unwrap().state().unwrap();
    assert_eq!(state["count"], json!(1), "the child's count travels back");
    let CallResult::Error(refused) = result_of(&rig.store, "r/call-1-1", "h-2").await else {
        panic!("a thread write of a sub-agent is refused");
    };
    assert!(
        refused.message.contains("writes no thread state"),
        "{refused}"
    );
    assert!(rig.store.thread_state("default").await.unwrap().is_empty());
}

#[tokio::test]
async fn a_sub_agents_own_token_budget_stops_it_inside_its_parents() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
[agents.helper]
description = "Counts."
file = "helper.toml"
"#;
    let helper = r#"
name = "helper"
[permissions]
default = "allow"
[delegation]
max-tokens = 5
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead), ("helper.toml", helper)]);
    let rig = rig(
        vec![
            costing(calls(&[task("call-1-1", "helper", "count")]), 100),
            costing(call(&[("h-1", "count", json!({}))]), 6),
            costing(say("done"), 1),
        ],
        Functions::new().with("count", EFFECTFUL, counter()),
    );
    let outcome = rig.runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert_eq!(
        answer(&outcome),
        "done",
        "the lead has no budget of its own"
    );
    let CallResult::Error(error) = result_of(&rig.store, "r", "call-1-1").await else {
        panic!("the helper must stop at its own budget");
    };
    assert_eq!(error.kind, ToolErrorKind::Limit);
    assert!(error.message.contains("past its budget of 5"), "{error}");
}

#[test]
fn inline_sub_agents_share_their_files_model_settings_and_files_read_are_bounded() {
    let (_dir, lead) = agents(&[(
        "lead.toml",
        "name = \"lead\"\nbase-url = \"http://gateway.test/v1\"\ntemperature = 0.3\n\
         [agents.helper]\ndescription = \"Helps.\"\nmodel = \"openai:small\"\n",
    )]);
    let helper = &lead.agents["helper"].agent;
    assert_eq!(helper.model_settings, lead.model_settings);
    assert_eq!(helper.model.as_deref(), Some("openai:small"));

    let wide = |next: &str| {
        let mut text = "name = \"w\"\n".to_owned();
        for branch in 0..5 {
            text.push_str(&format!(
                "[agents.b{branch}]\ndescription = \"B.\"\nfile = \"{next}\"\n"
            ));
        }
        text
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, next) in [
        ("a.toml", "b.toml"),
        ("b.toml", "c.toml"),
        ("c.toml", "d.toml"),
    ] {
        std::fs::write(dir.path().join(name), wide(next)).unwrap();
    }
    std::fs::write(dir.path().join("d.toml"), "name = \"d\"\n").unwrap();
    let error = AgentDef::load(&dir.path().join("a.toml"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("at most 64 agent files"), "{error}");
}

#[tokio::test]
async fn a_parents_active_skills_narrow_its_sub_agents_calls() {
    let lead = r#"
name = "lead"
[permissions]
default = "allow"
[agents.helper]
description = "Writes notes."
"#;
    let (_dir, lead) = agents(&[("lead.toml", lead)]);
    let activate = Box::new(
        |args: &serde_json::Value, _: &dyn cordon_kernel::StateReader| {
            cordon_kernel::ToolCallOutcome::output(json!("instructions")).with_skills(vec![
                cordon_kernel::SkillActivation {
                    skill: args["name"].as_str().unwrap_or_default().to_owned(),
                    fingerprint: "v1".into(),
                    allowed: Some(vec!["read".into(), "agent.*".into()]),
                },
            ])
        },
    );
    let rig = rig(
        vec![
            call(&[(
                "call-1-1",
                cordon_kernel::SKILL_TOOL,
                json!({"name": "careful"}),
            )]),
            calls(&[task("call-2-1", "helper", "add a note")]),
            call(&[("h-1", "notes.add", json!({})), ("h-2", "read", json!({}))]),
            say("added"),
            say("done"),
        ],
        Functions::new()
            .with(cordon_kernel::SKILL_TOOL, READ_ONLY, activate)
            .with("read", READ_ONLY, echo())
            .with("notes.add", EFFECTFUL, echo()),
    );
    let outcome = rig.runtime.start(&lead, "r", 1, "go").await.unwrap();
    assert_eq!(answer(&outcome), "done");
    let child = rig.store.load("r/call-2-1").await.unwrap();
    assert_eq!(
        child
            .skills()
            .activations()
            .next()
            .map(|active| active.skill.as_str()),
        Some("careful"),
        "the child opens with its parent's active skills"
    );
    let records = &child.commits[1].tools;
    assert_eq!(records[0].decision.verdict, Verdict::Deny, "{records:?}");
    assert_eq!(records[1].decision.verdict, Verdict::Allow, "{records:?}");
    assert_eq!(
        rig.tools.calls(),
        2,
        "the skill call and the read, not the note"
    );
}
