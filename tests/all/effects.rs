//! Every effect of a call travels back with its outcome and reaches the run
//! store only through its step's commit, over real components in staged
//! runs: two calls of a step changing one path are a conflict that commits
//! nothing; calls changing different paths all commit; a call that fails,
//! traps or times out after staging contributes nothing while the others of
//! its step commit; parallel calls never see each other's uncommitted
//! changes; and a tool's own calls see what its earlier calls changed, their
//! changes committing only with it.

use futures_util::FutureExt;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use cordon_kernel::{
    AgentDef, CallContext, CallResult, CommitStore, EndCause, Event, EventLog, LimitKind,
    MemoryCommitStore, ModelResponse, PermissionPolicy, Reach, RunError, RunOutcome, Runtime,
    StateSnapshot, ToolErrorKind, ToolSet, ToolSets, Verdict, Writer,
};
use cordon_tests::script::{Script, answer, calls};
use cordon_tests::{Fixture, artifacts, manifest};
use cordon_wasm::WorkspaceOptions;
use serde_json::{Value, json};

/// A run over a staged workspace, and what it left.
struct Run {
    fixture: Fixture,
    store: Arc<MemoryCommitStore>,
    events: Arc<EventLog>,
    result: Result<RunOutcome, RunError>,
}

impl Run {
    /// Run the model's `turns` over the bundles of `fixture`, the workspace
    /// bound to `backend` and staged.
    async fn of(fixture: Fixture, backend: &str, turns: Vec<ModelResponse>) -> Self {
        let loaded = fixture.load().await;
        let options = WorkspaceOptions {
            transactional: true,
            seed: true,
        };
        let workspace = loaded.plugins.workspace(backend, options).unwrap();
        let tools = ToolSets::new(vec![Arc::new(loaded.plugins.clone()), workspace.tools()])
            .expect("no tool named twice");
        let store = Arc::new(MemoryCommitStore::new());
        let runtime = Runtime::new(
            Arc::new(Script::new(turns)),
            Arc::new(tools),
            store.clone(),
            loaded.events.clone(),
        )
        .with_files(workspace.ledger().expect("a staged workspace"));
        let agent = AgentDef::new(
            "test",
            "be brief",
            &["*"],
            6,
            PermissionPolicy::new(Verdict::Allow),
        )
        .unwrap();
        let result = runtime.start(&agent, "r", 1, "go").await;
        Self {
            fixture,
            store,
            events: loaded.events,
            result,
        }
    }

    /// The paths every commit of the run changed, in order.
    fn committed(&self) -> Vec<String> {
        self.store
            .files("r")
            .now_or_never()
            .expect("the test store answers at once")
            .unwrap()
            .into_iter()
            .flat_map(|step| step.changes.into_iter().map(|change| change.path))
            .collect()
    }

    /// Each committed call's result, by call id.
    fn results(&self) -> BTreeMap<String, CallResult> {
        self.store
            .load("r")
            .now_or_never()
            .expect("the test store answers at once")
            .unwrap()
            .commits
            .iter()
            .flat_map(|commit| commit.tools.iter())
            .filter_map(|record| Some((record.call.id.clone(), record.result.clone()?)))
            .collect()
    }

    /// The output of committed call `id`, which must have succeeded.
    fn output(&self, id: &str) -> Value {
        match self.results().remove(id) {
            Some(CallResult::Output(output)) => output,
            other => panic!("call {id}: {other:?}"),
        }
    }

    /// The kind of error committed call `id` ended with.
    fn error_kind(&self, id: &str) -> ToolErrorKind {
        match self.results().remove(id) {
            Some(CallResult::Error(error)) => error.kind,
            other => panic!("call {id}: {other:?}"),
        }
    }

    /// The text of the workspace folder's file `path`, if any.
    fn on_disk(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.fixture.workspace.path().join(path)).ok()
    }

    fn ended(&self) {
        match &self.result {
            Ok(RunOutcome::Ended {
                cause: EndCause::FinalAnswer,
                ..
            }) => {}
            other => panic!("the run did not end with an answer: {other:?}"),
        }
    }
}

/// A workspace holding `seed.txt`, with the bundled `dir` backend.
fn dir_fixture() -> Fixture {
    let fixture = Fixture::new();
    std::fs::write(fixture.workspace.path().join("seed.txt"), "seed\n").unwrap();
    fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
    fixture
}

/// A workspace holding `seed.txt`, with the hostile backend granted it.
fn hostile_backend_fixture() -> Fixture {
    let fixture = Fixture::new();
    std::fs::write(fixture.workspace.path().join("seed.txt"), "seed\n").unwrap();
    fixture.bundle(
        "hostile",
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"sandbox\"\ncomponent = \"tool.wasm\"\n[[grants.dirs]]\nhost = \".\"\nguest = \"/workspace\"\nmode = \"rw\"\n[limits]\ntimeout-ms = 1500\n",
        Path::new(artifacts::HOSTILE_BACKEND),
    );
    fixture
}

fn write(id: &'static str, path: &str, content: &str) -> (&'static str, &'static str, Value) {
    (id, "write", json!({ "path": path, "content": content }))
}

fn read(id: &'static str, path: &str) -> (&'static str, &'static str, Value) {
    (id, "read", json!({ "path": path }))
}

#[tokio::test]
async fn two_calls_changing_one_path_fail_the_step_and_nothing_commits() {
    let run = Run::of(
        dir_fixture(),
        "dir",
        vec![
            calls(&[
                write("c1", "same.txt", "one"),
                write("c2", "other.txt", "beside"),
                write("c3", "same.txt", "two"),
            ]),
            answer(),
        ],
    )
    .await;
    let Err(RunError::FileConflict(conflict)) = &run.result else {
        panic!("expected a file conflict: {:?}", run.result);
    };
    assert_eq!(conflict.path, "same.txt");
    let tool = |id: &str| Writer::Tool {
        call_id: id.into(),
        tool: "write".into(),
    };
    assert_eq!(conflict.writers, [tool("c1"), tool("c3")]);
    let message = run.result.as_ref().unwrap_err().to_string();
    for needle in ["same.txt", "call c1 (write)", "call c3 (write)", "nothing"] {
        assert!(message.contains(needle), "{needle}: {message}");
    }
    assert!(run.committed().is_empty(), "{:?}", run.committed());
    assert!(run.results().is_empty(), "no call of the step committed");
    for path in ["same.txt", "other.txt"] {
        assert_eq!(run.on_disk(path), None, "{path} reached the folder");
    }
    assert_eq!(run.on_disk("seed.txt").as_deref(), Some("seed\n"));
}

#[tokio::test]
async fn calls_changing_different_paths_all_commit_with_their_step() {
    let run = Run::of(
        dir_fixture(),
        "dir",
        vec![
            calls(&[
                write("c1", "a.txt", "one"),
                write("c2", "sub/b.txt", "two"),
                write("c3", "seed.txt", "changed\n"),
            ]),
            answer(),
        ],
    )
    .await;
    run.ended();
    assert_eq!(run.committed(), ["a.txt", "seed.txt", "sub", "sub/b.txt"]);
    assert_eq!(run.on_disk("a.txt").as_deref(), Some("one"));
    assert_eq!(run.on_disk("sub/b.txt").as_deref(), Some("two"));
    assert_eq!(run.on_disk("seed.txt").as_deref(), Some("changed\n"));
}

#[tokio::test]
async fn a_call_that_fails_traps_or_times_out_after_staging_contributes_no_change() {
    let run = Run::of(
        hostile_backend_fixture(),
        "hostile",
        vec![
            calls(&[
                write("c1", "kept.txt", "kept"),
                read("c2", "stage-then-trap"),
                read("c3", "stage-then-spin"),
                read("c4", "stage-then-fail"),
            ]),
            answer(),
        ],
    )
    .await;
    run.ended();
    assert_eq!(run.error_kind("c2"), ToolErrorKind::Crashed);
    assert_eq!(run.error_kind("c3"), ToolErrorKind::Timeout);
    assert_eq!(run.error_kind("c4"), ToolErrorKind::Failed);
    assert_eq!(
        run.committed(),
        ["kept.txt"],
        "only the call that succeeded"
    );
    assert_eq!(run.on_disk("kept.txt").as_deref(), Some("kept"));
    for path in ["trapped.txt", "spun.txt", "failed.txt"] {
        assert_eq!(run.on_disk(path), None, "{path} reached the folder");
    }
    let commits = run.store.load("r").await.unwrap().commits;
    let timeouts = commits
        .iter()
        .flat_map(|commit| &commit.events)
        .filter(|event| {
            matches!(
                event,
                Event::LimitExceeded {
                    limit: LimitKind::Timeout,
                    tool,
                    ..
                } if tool == "workspace.read"
            )
        })
        .count();
    assert_eq!(
        timeouts, 1,
        "the timeout commits with the step as it happened"
    );
    assert_eq!(
        run.events
            .snapshot()
            .iter()
            .filter(|event| matches!(
                event,
                Event::LimitExceeded {
                    limit: LimitKind::Timeout,
                    ..
                }
            ))
            .count(),
        1,
        "and was shown once"
    );
}

#[tokio::test]
async fn parallel_calls_never_see_each_others_uncommitted_changes() {
    let run = Run::of(
        hostile_backend_fixture(),
        "hostile",
        vec![
            // The peek looks after the write has staged its change.
            calls(&[
                write("c1", "shared.txt", "fresh"),
                read("c2", "peek-shared"),
            ]),
            calls(&[read("c3", "peek-shared")]),
            answer(),
        ],
    )
    .await;
    run.ended();
    assert_eq!(run.output("c2")["content"], "absent");
    assert_eq!(
        run.output("c3")["content"],
        "fresh",
        "a later step sees the commit"
    );
}

/// The hostile tools, granted calls of the workspace's `read` and `write`.
fn caller_fixture() -> Fixture {
    let fixture = dir_fixture();
    fixture.bundle(
        "hostile",
        &manifest("hostile", "[grants]\ntools = [\"read\", \"write\"]\n"),
        Path::new(artifacts::HOSTILE),
    );
    fixture
}

fn call_each(id: &'static str, then: Option<&str>) -> (&'static str, &'static str, Value) {
    (
        id,
        "hostile.call-each",
        json!({
            "calls": [
                {"name": "write", "args": {"path": format!("{id}.txt"), "content": id}},
                {"name": "read", "args": {"path": format!("{id}.txt")}},
                {"name": "read", "args": {"path": "seed.txt"}},
            ],
            "then": then,
        }),
    )
}

#[tokio::test]
async fn a_tools_own_calls_see_its_changes_which_commit_only_with_it() {
    let run = Run::of(
        caller_fixture(),
        "dir",
        vec![
            calls(&[
                call_each("ok", None),
                call_each("fails", Some("fail")),
                call_each("traps", Some("trap")),
            ]),
            answer(),
        ],
    )
    .await;
    run.ended();
    let results = run.output("ok");
    assert_eq!(results[1]["ok"]["content"], "ok", "{results}");
    assert_eq!(results[2]["ok"]["content"], "seed\n", "{results}");
    assert_eq!(run.error_kind("fails"), ToolErrorKind::Failed);
    assert_eq!(run.error_kind("traps"), ToolErrorKind::Crashed);
    assert_eq!(run.committed(), ["ok.txt"]);
    assert_eq!(run.on_disk("ok.txt").as_deref(), Some("ok"));
    for path in ["fails.txt", "traps.txt"] {
        assert_eq!(run.on_disk(path), None, "{path} reached the folder");
    }
    let record = run.store.load("r").await.unwrap().commits;
    let children: Vec<&str> = record
        .iter()
        .flat_map(|commit| &commit.tools)
        .filter(|record| record.call.id == "ok")
        .flat_map(|record| &record.children)
        .map(|child| child.call.name.as_str())
        .collect();
    assert_eq!(children, ["write", "read", "read"]);
}

#[tokio::test]
async fn a_failed_calls_outcome_carries_its_trail_and_no_change() {
    let fixture = hostile_backend_fixture();
    let loaded = fixture.load().await;
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    let tools = loaded
        .plugins
        .workspace("hostile", options)
        .unwrap()
        .tools();
    let context = || CallContext::outside_run(Arc::new(StateSnapshot::default()));
    let wrote = tools
        .call("write", json!({"path": "a.txt", "content": "a"}), context())
        .await;
    assert!(wrote.result.is_ok(), "{:?}", wrote.result);
    assert_eq!(wrote.files.keys().collect::<Vec<_>>(), ["a.txt"]);
    for (attempt, kind) in [
        ("stage-then-trap", ToolErrorKind::Crashed),
        ("stage-then-spin", ToolErrorKind::Timeout),
        ("stage-then-fail", ToolErrorKind::Failed),
    ] {
        let outcome = tools
            .call("read", json!({ "path": attempt }), context())
            .await;
        let error = outcome.result.expect_err(attempt);
        assert_eq!(error.kind, kind, "{attempt}: {error}");
        assert!(outcome.files.is_empty(), "{attempt}: {:?}", outcome.files);
        assert!(outcome.writes.is_empty(), "{attempt}");
        if kind == ToolErrorKind::Timeout {
            assert!(
                outcome.events.iter().any(|event| matches!(
                    event,
                    Event::LimitExceeded {
                        limit: LimitKind::Timeout,
                        ..
                    }
                )),
                "the trail travels with the outcome: {:?}",
                outcome.events
            );
        }
    }
}

#[tokio::test]
async fn a_tool_that_fails_or_traps_after_writing_brings_back_no_write() {
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest(
            "hostile",
            "[grants.state]\nread = [\"k\"]\nwrite = [\"k\"]\n",
        ),
        Path::new(artifacts::HOSTILE),
    );
    let loaded = fixture.load().await;
    let context = || CallContext::outside_run(Arc::new(StateSnapshot::default()));
    let args = json!({"key": "k", "value": 1});
    let wrote = loaded
        .plugins
        .call("hostile.state-write", args.clone(), context())
        .await;
    assert!(wrote.result.is_ok(), "{:?}", wrote.result);
    assert_eq!(wrote.writes.len(), 1);
    for (tool, kind) in [
        ("hostile.write-then-fail", ToolErrorKind::Failed),
        ("hostile.write-then-trap", ToolErrorKind::Crashed),
    ] {
        let outcome = loaded.plugins.call(tool, args.clone(), context()).await;
        assert_eq!(outcome.result.expect_err(tool).kind, kind, "{tool}");
        assert!(outcome.writes.is_empty(), "{tool}: {:?}", outcome.writes);
    }
}

/// A tool reaches past its step exactly when its bundle is granted a
/// writable directory, an origin or other tools; each case below differs
/// from the first in one grant. The hostile component says its `echo` is
/// read-only and its `state-write` is not, which changes nothing: reach comes
/// from what the host grants, not from what a bundle says.
#[tokio::test]
async fn only_grants_that_act_past_the_step_let_a_tool_reach_beyond_it() {
    let dir = |mode: &str| {
        format!("[[grants.dirs]]\nhost = \"data\"\nguest = \"/data\"\nmode = \"{mode}\"\n")
    };
    let cases = [
        ("nothing", String::new(), Reach::Outcome),
        (
            "state",
            "[grants.state]\nread = [\"k\"]\nwrite = [\"k\"]\n".into(),
            Reach::Outcome,
        ),
        (
            "a question",
            "[grants]\nelicit = true\n".into(),
            Reach::Outcome,
        ),
        (
            "variables",
            "[grants]\nenv = [\"HOME\"]\n".into(),
            Reach::Outcome,
        ),
        ("a read-only directory", dir("ro"), Reach::Outcome),
        ("a writable directory", dir("rw"), Reach::Beyond),
        (
            "an origin",
            "[grants]\nnetwork = [\"https://api.example.com\"]\n".into(),
            Reach::Beyond,
        ),
        (
            "other tools",
            "[grants]\ntools = [\"hostile.echo\"]\n".into(),
            Reach::Beyond,
        ),
    ];
    for (granted, grants, expected) in cases {
        let fixture = Fixture::new();
        std::fs::create_dir(fixture.workspace.path().join("data")).unwrap();
        fixture.bundle(
            "hostile",
            &manifest("hostile", &grants),
            Path::new(artifacts::HOSTILE),
        );
        let loaded = fixture.load().await;
        for tool in ["hostile.echo", "hostile.state-write"] {
            assert_eq!(
                loaded.plugins.reach(tool),
                expected,
                "{tool} granted {granted}"
            );
        }
    }
    let loaded = Fixture::new().load().await;
    assert_eq!(
        loaded.plugins.reach("hostile.echo"),
        Reach::Beyond,
        "a tool no bundle provides is not vouched for"
    );
}
