//! The guarantees every [`CommitStore`] makes, as one suite that runs against
//! each backend, so that the in-memory store, SQLite and Postgres cannot
//! drift apart: step sequence, duplicate and skipped steps refused, intents,
//! run and thread state, file changes kept apart from their step, published
//! marks, waiting runs and their decisions, deletion, and damaged rows named.
//!
//! A backend implements [`Backend`] and instantiates the suite with
//! [`store_conformance!`](crate::store_conformance), which makes one test per
//! case. Each case gets a backend of its own with nothing stored.

use std::collections::BTreeMap;
use std::sync::Arc;

use cordon_kernel::{
    Approval, CallResult, CommitError, CommitStore, Decision, Disposition, Durability, EndCause,
    FileChange, FileState, Intent, Message, ParentLink, PendingCall, PendingReason, Receipt,
    RunHeader, StateOp, StateWrite, StepCommit, ToolCall, ToolRecord,
};
use serde_json::{Value, json};

/// A store under test.
#[async_trait::async_trait]
pub trait Backend: Sized + Send + Sync {
    /// A backend holding nothing, or why none can be made on this machine;
    /// the suite then skips it, saying so.
    async fn new() -> Result<Self, String>;

    /// A handle on the backend's data. Each call opens another handle onto the
    /// same data, as another process would.
    async fn open(&self) -> Arc<dyn CommitStore>;

    /// Overwrite the stored body of step `seq` of `run_id` with bytes that do
    /// not decode; false when the backend keeps no bytes that could rot.
    async fn damage_step(&self, run_id: &str, seq: u64) -> bool;
}

/// Instantiate every case of the suite for backend `$backend`, one
/// `#[tokio::test]` each, in the module where it is invoked.
#[macro_export]
macro_rules! store_conformance {
    ($backend:ty) => {
        $crate::store_conformance!(@cases $backend;
            created_runs_and_their_commits_load_back_in_order,
            a_sub_agents_run_keeps_the_call_that_delegated_to_it,
            creating_a_run_twice_is_refused_and_unknown_runs_are_named,
            state_is_every_commit_applied_in_order,
            a_second_handle_cannot_commit_a_taken_step,
            handles_racing_for_one_step_commit_it_once,
            a_skipped_step_number_is_out_of_order,
            a_commit_whose_state_write_does_not_apply_leaves_nothing_behind,
            an_intent_is_kept_until_the_next_commit,
            an_unflushed_intent_is_seen_by_another_handle,
            a_commit_that_reaches_only_the_process_is_seen_by_another_handle,
            thread_state_commits_with_the_step_and_is_shared_by_the_threads_runs,
            file_changes_commit_with_their_step_and_load_apart_from_it,
            published_marks_never_move_back,
            a_waiting_run_lists_its_pending_calls_and_takes_their_decisions,
            a_deleted_run_is_gone_whole_and_its_thread_state_stays,
            a_damaged_step_is_corrupt_naming_the_step,
            many_runs_commit_at_once_each_in_order
        );
    };
    (@cases $backend:ty; $($case:ident),+) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                if let Some(backend) = $crate::conformance::prepare::<$backend>(stringify!($case)).await {
                    $crate::conformance::$case(&backend).await;
                }
            }
        )+
    };
}

/// A fresh backend for `case`, or `None` after saying loudly why it is
/// skipped.
pub async fn prepare<B: Backend>(case: &str) -> Option<B> {
    match B::new().await {
        Ok(backend) => Some(backend),
        Err(reason) => {
            eprintln!(
                "SKIPPED store conformance case {case} on {}: {reason}",
                std::any::type_name::<B>()
            );
            None
        }
    }
}

pub(crate) fn header(run_id: &str, created: u64) -> RunHeader {
    RunHeader {
        run_id: run_id.into(),
        agent: "helper".into(),
        created,
        thread: "main".into(),
        metadata: BTreeMap::from([("origin".to_owned(), "test".to_owned())]),
        parent: None,
    }
}

pub(crate) fn step(run_id: &str, seq: u64, text: &str, state: Vec<StateWrite>) -> StepCommit {
    StepCommit {
        run_id: run_id.into(),
        seq,
        messages: vec![Message::User { text: text.into() }],
        tools: Vec::new(),
        state,
        thread_state: Vec::new(),
        events: Vec::new(),
        skills: Vec::new(),
        disposition: Disposition::Running,
        continues: None,
        usage: None,
        files: Vec::new(),
    }
}

pub(crate) fn write(key: &str, op: StateOp) -> StateWrite {
    StateWrite {
        key: key.into(),
        op,
    }
}

fn set(key: &str, value: Value) -> StateWrite {
    write(key, StateOp::Set { value })
}

pub(crate) fn intent(run_id: &str, seq: u64) -> Intent {
    Intent {
        run_id: run_id.into(),
        seq,
        assistant: None,
        calls: Vec::new(),
    }
}

/// Three steps' writes using every op, overwriting and removing keys.
pub(crate) fn mixed_writes() -> [Vec<StateWrite>; 3] {
    [
        vec![
            write("count", StateOp::Increment { delta: 2 }),
            write("list", StateOp::Append { item: json!("a") }),
            set("gone", json!(true)),
            set("name", json!("x")),
        ],
        vec![
            write("count", StateOp::Increment { delta: 5 }),
            write(
                "list",
                StateOp::Append {
                    item: json!({"b": 1}),
                },
            ),
            write("gone", StateOp::Remove),
        ],
        vec![
            write("name", StateOp::Remove),
            set("name", json!("y")),
            write("count", StateOp::Increment { delta: -1 }),
            set("never", json!(1)),
            write("never", StateOp::Remove),
        ],
    ]
}

/// The state [`mixed_writes`] leave, applied in order.
pub(crate) fn mixed_writes_applied() -> BTreeMap<String, Value> {
    BTreeMap::from([
        ("count".to_owned(), json!(6)),
        ("list".to_owned(), json!(["a", {"b": 1}])),
        ("name".to_owned(), json!("y")),
    ])
}

fn ids(runs: &[cordon_kernel::RunSummary]) -> Vec<&str> {
    runs.iter().map(|run| run.header.run_id.as_str()).collect()
}

/// Runs list oldest first (ties by id); each run's commits load back whole and
/// in order, with its last step number and disposition in the listing.
pub async fn created_runs_and_their_commits_load_back_in_order<B: Backend>(backend: &B) {
    let store = backend.open().await;
    for (run, created) in [("b", 10), ("a", 10), ("early", 5)] {
        store.create_run(&header(run, created)).await.unwrap();
    }
    let first = step("a", 1, "hello", Vec::new());
    let mut second = step("a", 2, "again", Vec::new());
    second.disposition = Disposition::Ended {
        cause: EndCause::FinalAnswer,
        answer: Some("done".into()),
    };
    assert_eq!(
        store.commit(&first, Durability::Disk).await.unwrap(),
        Receipt { seq: 1 }
    );
    assert_eq!(
        store.commit(&second, Durability::Disk).await.unwrap(),
        Receipt { seq: 2 }
    );

    let record = store.load("a").await.unwrap();
    assert_eq!(record.header, header("a", 10));
    assert_eq!(record.commits, vec![first, second.clone()]);
    assert_eq!(record.intent, None);

    let runs = store.runs().await.unwrap();
    assert_eq!(ids(&runs), ["early", "a", "b"]);
    assert_eq!(runs[1].last_seq, 2);
    assert_eq!(runs[1].disposition, second.disposition);
    assert_eq!(runs[2].last_seq, 0);
    assert_eq!(runs[2].disposition, Disposition::Running);
}

/// A sub-agent's run loads and lists with the call that delegated to it;
/// a run of its own has none.
pub async fn a_sub_agents_run_keeps_the_call_that_delegated_to_it<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.create_run(&header("root", 1)).await.unwrap();
    let mut child = header("root/call-2-1", 2);
    child.parent = Some(ParentLink {
        run_id: "root".into(),
        seq: 3,
        call_id: "call-2-1".into(),
        root: "root".into(),
        depth: 1,
    });
    store.create_run(&child).await.unwrap();
    assert_eq!(store.load("root/call-2-1").await.unwrap().header, child);
    assert_eq!(store.load("root").await.unwrap().header.parent, None);
    let runs = store.runs().await.unwrap();
    assert_eq!(ids(&runs), ["root", "root/call-2-1"]);
    assert_eq!(runs[1].header, child);
    assert_eq!(runs[0].header.parent, None);
}

/// A run id is taken once; every operation on a run that does not exist
/// names it.
pub async fn creating_a_run_twice_is_refused_and_unknown_runs_are_named<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    assert_eq!(
        store.create_run(&header("r", 2)).await,
        Err(CommitError::DuplicateRun("r".into()))
    );
    assert_eq!(store.load("r").await.unwrap().header.created, 1);

    let unknown = CommitError::UnknownRun("nope".into());
    assert_eq!(store.load("nope").await.unwrap_err(), unknown);
    let commit = step("nope", 1, "x", Vec::new());
    assert_eq!(
        store.commit(&commit, Durability::Disk).await.unwrap_err(),
        unknown
    );
    assert_eq!(
        store
            .record_intent(&intent("nope", 1), Durability::Disk)
            .await,
        Err(unknown.clone())
    );
    assert_eq!(store.files("nope").await.unwrap_err(), unknown);
    assert_eq!(store.published("nope").await.unwrap_err(), unknown);
    assert_eq!(store.mark_published("nope", 1).await.unwrap_err(), unknown);
    assert_eq!(store.delete_run("nope").await.unwrap_err(), unknown);
}

/// A run's state is its commits' writes applied in order, whichever ops they
/// use.
pub async fn state_is_every_commit_applied_in_order<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    let commits = mixed_writes();
    for (seq, writes) in (1..).zip(commits) {
        store
            .commit(&step("r", seq, "step", writes), Durability::Disk)
            .await
            .unwrap();
    }
    assert_eq!(
        store.load("r").await.unwrap().state().unwrap(),
        mixed_writes_applied()
    );
}

/// A step committed through one handle is a conflict through another, which
/// then sees the winner's step and state.
pub async fn a_second_handle_cannot_commit_a_taken_step<B: Backend>(backend: &B) {
    let first = backend.open().await;
    let second = backend.open().await;
    first.create_run(&header("r", 1)).await.unwrap();
    let winner = step("r", 1, "first", vec![set("k", json!(1))]);
    first.commit(&winner, Durability::Disk).await.unwrap();
    let loser = step("r", 1, "second", vec![set("k", json!(2))]);
    assert_eq!(
        second.commit(&loser, Durability::Disk).await,
        Err(CommitError::Conflict {
            run_id: "r".into(),
            seq: 1
        })
    );
    let record = second.load("r").await.unwrap();
    assert_eq!(record.commits, vec![winner]);
    assert_eq!(record.state().unwrap()["k"], json!(1));
}

/// Handles committing the same step at the same moment: exactly one wins,
/// every other is told the step is taken.
pub async fn handles_racing_for_one_step_commit_it_once<B: Backend>(backend: &B) {
    let setup = backend.open().await;
    setup.create_run(&header("r", 1)).await.unwrap();
    let mut racers = Vec::new();
    for racer in 0..6 {
        let store = backend.open().await;
        racers.push(tokio::spawn(async move {
            let text = format!("racer {racer}");
            let writes = vec![write("count", StateOp::Increment { delta: 1 })];
            store
                .commit(&step("r", 1, &text, writes), Durability::Disk)
                .await
        }));
    }
    let mut results = Vec::new();
    for racer in racers {
        results.push(racer.await.unwrap());
    }
    let won = results.iter().filter(|result| result.is_ok()).count();
    let lost = results
        .iter()
        .filter(|result| matches!(result, Err(CommitError::Conflict { seq: 1, .. })))
        .count();
    assert_eq!((won, lost), (1, results.len() - 1), "{results:?}");
    let record = setup.load("r").await.unwrap();
    assert_eq!(record.last_seq(), 1);
    assert_eq!(record.state().unwrap()["count"], json!(1));
}

/// A step number must follow the last one; a gap commits nothing.
pub async fn a_skipped_step_number_is_out_of_order<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    store
        .commit(&step("r", 1, "x", Vec::new()), Durability::Disk)
        .await
        .unwrap();
    assert_eq!(
        store
            .commit(&step("r", 3, "x", Vec::new()), Durability::Disk)
            .await,
        Err(CommitError::OutOfOrder {
            run_id: "r".into(),
            expected: 2,
            seq: 3
        })
    );
    assert_eq!(
        store
            .commit(&step("r", 0, "x", Vec::new()), Durability::Disk)
            .await,
        Err(CommitError::Conflict {
            run_id: "r".into(),
            seq: 0
        })
    );
    assert_eq!(store.load("r").await.unwrap().last_seq(), 1);
}

/// A commit is all or nothing: a state write that cannot apply refuses the
/// step, names the key, and leaves the state and the intent as they were.
pub async fn a_commit_whose_state_write_does_not_apply_leaves_nothing_behind<B: Backend>(
    backend: &B,
) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    store
        .commit(
            &step("r", 1, "x", vec![set("name", json!("x"))]),
            Durability::Disk,
        )
        .await
        .unwrap();
    store
        .record_intent(&intent("r", 2), Durability::Disk)
        .await
        .unwrap();
    let mut bad = step(
        "r",
        2,
        "y",
        vec![
            set("other", json!(1)),
            write("name", StateOp::Increment { delta: 1 }),
        ],
    );
    bad.files = vec![FileChange {
        path: "a.txt".into(),
        before: FileState::Absent,
        after: FileState::File(b"new".as_slice().into()),
    }];
    let error = store.commit(&bad, Durability::Disk).await.unwrap_err();
    assert!(
        matches!(&error, CommitError::Storage(message) if message.contains("name")),
        "{error}"
    );
    let record = store.load("r").await.unwrap();
    assert_eq!(record.last_seq(), 1);
    assert_eq!(record.intent, Some(intent("r", 2)));
    assert_eq!(
        record.state().unwrap(),
        BTreeMap::from([("name".to_owned(), json!("x"))])
    );
    assert!(store.files("r").await.unwrap().is_empty());
}

/// The intent of the step under way is replaced by a newer one and cleared by
/// the commit of that step.
pub async fn an_intent_is_kept_until_the_next_commit<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    store
        .record_intent(&intent("r", 1), Durability::Disk)
        .await
        .unwrap();
    let mut replaced = intent("r", 1);
    replaced.assistant = Some(Message::Assistant {
        text: "calling".into(),
        tool_calls: Vec::new(),
    });
    store
        .record_intent(&replaced, Durability::Disk)
        .await
        .unwrap();
    assert_eq!(store.load("r").await.unwrap().intent, Some(replaced));
    store
        .commit(&step("r", 1, "x", Vec::new()), Durability::Disk)
        .await
        .unwrap();
    assert_eq!(store.load("r").await.unwrap().intent, None);
}

/// An intent recorded without waiting for the disk is still visible to every
/// other handle at once.
pub async fn an_unflushed_intent_is_seen_by_another_handle<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    store
        .record_intent(&intent("r", 1), Durability::Process)
        .await
        .unwrap();
    let other = backend.open().await;
    assert_eq!(other.load("r").await.unwrap().intent, Some(intent("r", 1)));
    assert!(matches!(
        store
            .record_intent(&intent("nope", 1), Durability::Process)
            .await,
        Err(CommitError::UnknownRun(_))
    ));
    store
        .commit(&step("r", 1, "x", Vec::new()), Durability::Disk)
        .await
        .unwrap();
    assert_eq!(other.load("r").await.unwrap().intent, None);
}

/// A step committed without waiting for the disk is visible to every other
/// handle at once, state and all, and keeps the step order as any other.
pub async fn a_commit_that_reaches_only_the_process_is_seen_by_another_handle<B: Backend>(
    backend: &B,
) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    store
        .record_intent(&intent("r", 1), Durability::Process)
        .await
        .unwrap();
    let first = step("r", 1, "x", vec![set("k", json!(1))]);
    store.commit(&first, Durability::Process).await.unwrap();
    let second = step("r", 2, "y", Vec::new());
    store.commit(&second, Durability::Process).await.unwrap();
    let other = backend.open().await;
    let record = other.load("r").await.unwrap();
    assert_eq!(record.commits, vec![first, second]);
    assert_eq!(record.intent, None);
    assert_eq!(
        record.state().unwrap(),
        BTreeMap::from([("k".to_owned(), json!(1))])
    );
    assert!(matches!(
        other
            .commit(&step("r", 2, "again", Vec::new()), Durability::Process)
            .await,
        Err(CommitError::Conflict { .. } | CommitError::OutOfOrder { .. })
    ));
    store
        .commit(&step("r", 3, "z", Vec::new()), Durability::Disk)
        .await
        .unwrap();
    assert_eq!(other.load("r").await.unwrap().commits.len(), 3);
}

/// Thread state commits with the step that wrote it, is shared by every run
/// of the thread, and a write that cannot apply refuses the whole step.
pub async fn thread_state_commits_with_the_step_and_is_shared_by_the_threads_runs<B: Backend>(
    backend: &B,
) {
    let store = backend.open().await;
    store.create_run(&header("a", 1)).await.unwrap();
    store.create_run(&header("b", 2)).await.unwrap();
    let mut commit = step("a", 1, "x", vec![set("scratch", json!(1))]);
    commit.thread_state = vec![write("memory", StateOp::Append { item: json!("a") })];
    store.commit(&commit, Durability::Disk).await.unwrap();
    let mut commit = step("b", 1, "y", Vec::new());
    commit.thread_state = vec![write("memory", StateOp::Append { item: json!("b") })];
    store.commit(&commit, Durability::Disk).await.unwrap();
    assert_eq!(
        store.thread_state("main").await.unwrap(),
        BTreeMap::from([("memory".to_owned(), json!(["a", "b"]))])
    );
    assert!(store.thread_state("other").await.unwrap().is_empty());
    assert!(
        store.load("b").await.unwrap().state().unwrap().is_empty(),
        "run state stays per run"
    );
    let mut failing = step("b", 2, "z", vec![set("fine", json!(1))]);
    failing.thread_state = vec![write("memory", StateOp::Increment { delta: 1 })];
    assert!(store.commit(&failing, Durability::Disk).await.is_err());
    assert_eq!(store.load("b").await.unwrap().last_seq(), 1);
    assert_eq!(
        store.thread_state("main").await.unwrap()["memory"],
        json!(["a", "b"]),
        "nothing of a refused commit stays"
    );
}

/// File changes, binary or not, commit with their step but load apart from
/// it, in path order, only for steps that made some.
pub async fn file_changes_commit_with_their_step_and_load_apart_from_it<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    let binary = vec![0, 159, 146, 150];
    let mut first = step("r", 1, "write", Vec::new());
    first.files = vec![
        FileChange {
            path: "docs".into(),
            before: FileState::Directory,
            after: FileState::Absent,
        },
        FileChange {
            path: "bin/blob".into(),
            before: FileState::Absent,
            after: FileState::File(binary.as_slice().into()),
        },
    ];
    store.commit(&first, Durability::Disk).await.unwrap();
    store
        .commit(&step("r", 2, "nothing", Vec::new()), Durability::Disk)
        .await
        .unwrap();
    let files = store.files("r").await.unwrap();
    assert_eq!(files.len(), 1, "a step without changes has no entry");
    assert_eq!(files[0].seq, 1);
    let mut by_path = first.files.clone();
    by_path.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(files[0].changes, by_path);
    let loaded = store.load("r").await.unwrap();
    assert!(loaded.commits.iter().all(|commit| commit.files.is_empty()));

    let mut conflicting = step("r", 2, "again", Vec::new());
    conflicting.files = first.files.clone();
    assert!(store.commit(&conflicting, Durability::Disk).await.is_err());
    assert_eq!(
        store.files("r").await.unwrap().len(),
        1,
        "a refused step adds no files"
    );
}

/// The published mark starts at 0 and only moves forward.
pub async fn published_marks_never_move_back<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    for seq in 1..=3 {
        store
            .commit(&step("r", seq, "x", Vec::new()), Durability::Disk)
            .await
            .unwrap();
    }
    assert_eq!(store.published("r").await.unwrap(), 0);
    store.mark_published("r", 2).await.unwrap();
    store.mark_published("r", 1).await.unwrap();
    assert_eq!(store.published("r").await.unwrap(), 2, "never moves back");
    let other = backend.open().await;
    assert_eq!(other.published("r").await.unwrap(), 2);
    store.mark_published("r", 3).await.unwrap();
    assert_eq!(other.published("r").await.unwrap(), 3);
}

/// A run that committed a waiting step lists as waiting on its calls; the
/// step carrying their decisions makes it run again.
pub async fn a_waiting_run_lists_its_pending_calls_and_takes_their_decisions<B: Backend>(
    backend: &B,
) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    let call = ToolCall {
        id: "c1".into(),
        name: "files.write".into(),
        args: json!({"path": "a.txt"}),
    };
    let mut waiting = step("r", 1, "please", Vec::new());
    waiting.disposition = Disposition::Waiting {
        pending: vec![PendingCall {
            call: call.clone(),
            reason: PendingReason::Approval {
                rule: Some("ask files.*".into()),
                by: cordon_kernel::Decider::Policy,
            },
        }],
    };
    store.commit(&waiting, Durability::Disk).await.unwrap();
    let runs = store.runs().await.unwrap();
    assert_eq!(runs[0].disposition, waiting.disposition);
    assert_eq!(
        store.load("r").await.unwrap().disposition(),
        waiting.disposition
    );

    let mut decided = step("r", 2, "decided", Vec::new());
    decided.tools = vec![ToolRecord {
        call,
        decision: Decision::answered(Approval::Approve, Some("ask files.*".into())),
        result: Some(CallResult::Output(json!({"written": true}))),
        children: Vec::new(),
        blocks: Vec::new(),
        // When the call ran travels with it, for the run's timeline.
        timing: Some(cordon_kernel::CallTiming {
            started_ms: 1_765_000_000_123,
            took_us: 4_567,
        }),
    }];
    store.commit(&decided, Durability::Disk).await.unwrap();
    let record = store.load("r").await.unwrap();
    assert_eq!(record.disposition(), Disposition::Running);
    assert_eq!(record.commits[1].tools, decided.tools);
    assert_eq!(
        store.runs().await.unwrap()[0].disposition,
        Disposition::Running
    );
}

/// Deleting a run forgets its header, steps, intent, state and file changes,
/// frees its id, and leaves the other runs and its thread's state.
pub async fn a_deleted_run_is_gone_whole_and_its_thread_state_stays<B: Backend>(backend: &B) {
    let store = backend.open().await;
    for run in ["keep", "gone"] {
        store.create_run(&header(run, 1)).await.unwrap();
        let mut commit = step(run, 1, "hello", vec![set("k", json!(1))]);
        commit.thread_state = vec![write("seen", StateOp::Append { item: json!(run) })];
        commit.files = vec![FileChange {
            path: format!("{run}.txt"),
            before: FileState::Absent,
            after: FileState::File(b"x".as_slice().into()),
        }];
        store.commit(&commit, Durability::Disk).await.unwrap();
    }
    store
        .record_intent(&intent("gone", 2), Durability::Disk)
        .await
        .unwrap();
    store.mark_published("gone", 1).await.unwrap();
    store.delete_run("gone").await.unwrap();

    let other = backend.open().await;
    let unknown = CommitError::UnknownRun("gone".into());
    assert_eq!(other.load("gone").await.unwrap_err(), unknown);
    assert_eq!(other.delete_run("gone").await.unwrap_err(), unknown);
    assert_eq!(ids(&other.runs().await.unwrap()), ["keep"]);
    assert_eq!(other.load("keep").await.unwrap().state().unwrap()["k"], 1);
    assert_eq!(other.files("keep").await.unwrap().len(), 1);
    assert_eq!(
        other.thread_state("main").await.unwrap()["seen"],
        json!(["keep", "gone"])
    );

    other.create_run(&header("gone", 2)).await.unwrap();
    let reborn = other.load("gone").await.unwrap();
    assert!(reborn.commits.is_empty() && reborn.intent.is_none());
    assert!(other.files("gone").await.unwrap().is_empty());
    assert_eq!(other.published("gone").await.unwrap(), 0);
    other
        .commit(&step("gone", 1, "again", Vec::new()), Durability::Disk)
        .await
        .unwrap();
    assert!(
        other
            .load("gone")
            .await
            .unwrap()
            .state()
            .unwrap()
            .is_empty()
    );
}

/// A step whose stored bytes no longer decode is reported as corrupt, naming
/// the run and step, by every read that meets it.
pub async fn a_damaged_step_is_corrupt_naming_the_step<B: Backend>(backend: &B) {
    let store = backend.open().await;
    store.create_run(&header("r", 1)).await.unwrap();
    store
        .commit(&step("r", 1, "x", Vec::new()), Durability::Disk)
        .await
        .unwrap();
    store
        .commit(&step("r", 2, "y", Vec::new()), Durability::Disk)
        .await
        .unwrap();
    if !backend.damage_step("r", 2).await {
        return;
    }
    for error in [
        store.load("r").await.unwrap_err(),
        store.runs().await.unwrap_err(),
    ] {
        assert!(
            matches!(&error, CommitError::Corrupt { location, .. }
                if location.ends_with("run r step 2")),
            "{error}"
        );
    }
}

/// Many runs committing at once through several handles each keep their own
/// order and count.
pub async fn many_runs_commit_at_once_each_in_order<B: Backend>(backend: &B) {
    const RUNS: u64 = 8;
    const STEPS: u64 = 12;
    let mut writers = Vec::new();
    for run in 0..RUNS {
        let store = backend.open().await;
        writers.push(tokio::spawn(async move {
            let run_id = format!("run-{run}");
            store.create_run(&header(&run_id, run)).await?;
            for seq in 1..=STEPS {
                store
                    .record_intent(&intent(&run_id, seq), Durability::Process)
                    .await?;
                let writes = vec![write("count", StateOp::Increment { delta: 1 })];
                let mut commit = step(&run_id, seq, "tick", writes);
                commit.thread_state = vec![write("total", StateOp::Increment { delta: 1 })];
                store.commit(&commit, Durability::Disk).await?;
            }
            Ok::<_, CommitError>(())
        }));
    }
    for writer in writers {
        writer.await.unwrap().unwrap();
    }
    let store = backend.open().await;
    let runs = store.runs().await.unwrap();
    assert_eq!(runs.len() as u64, RUNS);
    for run in &runs {
        assert_eq!(run.last_seq, STEPS, "{}", run.header.run_id);
        let record = store.load(&run.header.run_id).await.unwrap();
        let seqs: Vec<u64> = record.commits.iter().map(|commit| commit.seq).collect();
        assert_eq!(seqs, (1..=STEPS).collect::<Vec<_>>());
        assert_eq!(record.state().unwrap()["count"], json!(STEPS));
    }
    assert_eq!(
        store.thread_state("main").await.unwrap()["total"],
        json!(RUNS * STEPS)
    );
}

#[cfg(test)]
mod memory {
    use std::sync::Arc;

    use cordon_kernel::{CommitStore, MemoryCommitStore};

    use super::Backend;

    /// The in-memory store: every handle is the one store.
    struct Memory(Arc<MemoryCommitStore>);

    #[async_trait::async_trait]
    impl Backend for Memory {
        async fn new() -> Result<Self, String> {
            Ok(Self(Arc::new(MemoryCommitStore::new())))
        }

        async fn open(&self) -> Arc<dyn CommitStore> {
            Arc::clone(&self.0) as Arc<dyn CommitStore>
        }

        async fn damage_step(&self, _run_id: &str, _seq: u64) -> bool {
            false
        }
    }

    crate::store_conformance!(Memory);
}
