//! Transactional file changes through the loop: each call's changes come back
//! with its outcome and are admitted in the model's call order; a step's
//! changes commit with it and reach the folder only after the receipt; two
//! calls changing one path fail the step; a call that fails, or whose changes
//! would pass the workspace's quota, contributes none; a waiting run holds
//! them; a crash between the commit and the folder write is repaired on
//! resume.

use futures_util::FutureExt;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cordon_kernel::{
    Approval, CallResult, CommitStore, Event, FileChange, FileLedger, FileState, FileWrites,
    LimitKind, MemoryCommitStore, PublishError, QuotaExceeded, RunError, RunOutcome, StateOp,
    StateWrite, StepFiles, ToolCallOutcome, ToolError, ToolErrorKind, Verdict,
};
use serde_json::json;

use crate::support::*;

type Files = BTreeMap<String, Arc<[u8]>>;

/// A folder in memory with the committed layer of a real ledger.
#[derive(Default)]
pub(crate) struct FakeFolder {
    committed: Mutex<Files>,
    folder: Mutex<Files>,
    /// The store and run whose commit must precede every publish.
    store: Mutex<Option<(Arc<MemoryCommitStore>, String)>>,
    fail_publish: AtomicBool,
    /// The most bytes a step may change, when bounded.
    quota: Option<usize>,
}

impl FakeFolder {
    pub(crate) fn folder(&self) -> Files {
        self.folder.lock().unwrap().clone()
    }
}

fn bytes(files: &FileWrites) -> usize {
    files
        .values()
        .map(|state| match state {
            FileState::File(contents) => contents.len(),
            FileState::Absent | FileState::Directory => 0,
        })
        .sum()
}

impl FileLedger for FakeFolder {
    fn fits(&self, step: &FileWrites, call: &FileWrites) -> Result<(), QuotaExceeded> {
        match self.quota {
            Some(quota) if bytes(step) + bytes(call) > quota => Err(QuotaExceeded {
                bundle: "fake".into(),
                detail: format!("the step would stage more than {quota} bytes"),
            }),
            _ => Ok(()),
        }
    }

    fn changes(&self, files: &FileWrites) -> Vec<FileChange> {
        let committed = self.committed.lock().unwrap();
        let folder = self.folder.lock().unwrap();
        files
            .iter()
            .map(|(path, after)| FileChange {
                path: path.clone(),
                before: committed
                    .get(path)
                    .or_else(|| folder.get(path))
                    .map_or(FileState::Absent, |old| FileState::File(old.clone())),
                after: after.clone(),
            })
            .filter(|change| change.before != change.after)
            .collect()
    }

    fn confirm(&self, changes: &[FileChange]) {
        let mut committed = self.committed.lock().unwrap();
        for change in changes {
            if let FileState::File(contents) = &change.after {
                committed.insert(change.path.clone(), contents.clone());
            }
        }
    }

    fn publish(&self) -> Result<(), PublishError> {
        if self.fail_publish.swap(false, Ordering::SeqCst) {
            return Err(PublishError {
                path: "a.txt".into(),
                message: "disk full".into(),
            });
        }
        if let Some((store, run_id)) = self.store.lock().unwrap().as_ref() {
            let committed: Vec<String> = store
                .files(run_id)
                .now_or_never()
                .expect("the test store answers at once")
                .unwrap()
                .into_iter()
                .flat_map(|step| step.changes.into_iter().map(|change| change.path))
                .collect();
            for path in self.committed.lock().unwrap().keys() {
                assert!(
                    committed.contains(path),
                    "{path} published before its commit"
                );
            }
        }
        let committed = std::mem::take(&mut *self.committed.lock().unwrap());
        self.folder.lock().unwrap().extend(committed);
        Ok(())
    }

    fn restore(&self, steps: &[StepFiles], published: u64) {
        let mut committed = self.committed.lock().unwrap();
        for step in steps.iter().filter(|step| step.seq > published) {
            for change in &step.changes {
                if let FileState::File(contents) = &change.after {
                    committed.insert(change.path.clone(), contents.clone());
                }
            }
        }
    }
}

/// A tool that changes `args.path` to `args.text`, returning the change
/// with its outcome; with `args.fail`, it fails after making it.
pub(crate) fn writer(folder: &Arc<FakeFolder>) -> Handler {
    let folder = Arc::clone(folder);
    Box::new(move |args, _| {
        let path = args["path"].as_str().unwrap_or("a.txt");
        assert!(
            !folder.folder().contains_key(path),
            "nothing reaches the folder while the step runs"
        );
        let text = args["text"].as_str().unwrap_or_default();
        let mut outcome = if args["fail"].as_bool().unwrap_or(false) {
            ToolCallOutcome::error(ToolError::new(
                ToolErrorKind::Failed,
                "failed after writing",
            ))
        } else {
            ToolCallOutcome::output(json!("staged"))
        };
        outcome
            .files
            .insert(path.to_owned(), FileState::File(text.as_bytes().into()));
        outcome
    })
}

fn with_folder(rig: Rig, folder: &Arc<FakeFolder>, run_id: &str) -> Rig {
    *folder.store.lock().unwrap() = Some((rig.store.clone(), run_id.to_owned()));
    Rig {
        runtime: rig
            .runtime
            .with_files(Arc::clone(folder) as Arc<dyn FileLedger>),
        ..rig
    }
}

fn write(
    id: &'static str,
    path: &str,
    text: &str,
) -> (&'static str, &'static str, serde_json::Value) {
    (id, "write", json!({ "path": path, "text": text }))
}

fn committed_paths(rig: &Rig, run: &str) -> Vec<String> {
    rig.store
        .files(run)
        .now_or_never()
        .expect("the test store answers at once")
        .unwrap()
        .into_iter()
        .flat_map(|step| step.changes.into_iter().map(|change| change.path))
        .collect()
}

#[tokio::test]
async fn a_steps_changes_commit_with_it_and_reach_the_folder_after_the_receipt() {
    let folder = Arc::new(FakeFolder::default());
    let tools = Functions::new().with("write", EFFECTFUL, writer(&folder));
    let turns = vec![call(&[write("c1", "a.txt", "one")]), say("done")];
    let rig = with_folder(rig(turns, tools), &folder, "r");
    let agent = agent(Verdict::Allow, &[], 5);
    let outcome = rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    assert!(matches!(outcome, RunOutcome::Ended { .. }));

    let files = rig.store.files("r").await.unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].seq, 2, "the tool's step carries the change");
    assert_eq!(files[0].changes[0].before, FileState::Absent);
    assert_eq!(folder.folder()["a.txt"][..], b"one"[..]);
    assert_eq!(rig.store.published("r").await.unwrap(), 2);
}

#[tokio::test]
async fn two_calls_changing_one_path_fail_the_step_naming_both() {
    let folder = Arc::new(FakeFolder::default());
    let tools = Functions::new().with("write", EFFECTFUL, writer(&folder));
    let turns = vec![
        call(&[write("c1", "a.txt", "one"), write("c2", "a.txt", "two")]),
        say("done"),
    ];
    let rig = with_folder(rig(turns, tools), &folder, "r");
    let failed = rig
        .runtime
        .start(&agent(Verdict::Allow, &[], 5), "r", 1, "go")
        .await;
    let Err(RunError::FileConflict(conflict)) = failed else {
        panic!("expected a file conflict, got {failed:?}");
    };
    assert_eq!(conflict.path, "a.txt");
    let text = conflict.to_string();
    assert!(text.contains("call c1 (write), call c2 (write)"), "{text}");
    assert!(
        rig.store.files("r").await.unwrap().is_empty(),
        "nothing commits"
    );
    assert!(folder.folder().is_empty());
}

#[tokio::test]
async fn calls_changing_different_paths_all_commit_and_a_failed_call_contributes_none() {
    let folder = Arc::new(FakeFolder::default());
    let tools = Functions::new().with("write", EFFECTFUL, writer(&folder));
    let turns = vec![
        call(&[
            write("c1", "a.txt", "one"),
            (
                "c2",
                "write",
                json!({"path": "failed.txt", "text": "x", "fail": true}),
            ),
            write("c3", "b.txt", "three"),
        ]),
        say("done"),
    ];
    let rig = with_folder(rig(turns, tools), &folder, "r");
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 5), "r", 1, "go")
        .await
        .unwrap();
    assert_eq!(committed_paths(&rig, "r"), ["a.txt", "b.txt"]);
    let folder = folder.folder();
    assert_eq!(folder.keys().collect::<Vec<_>>(), ["a.txt", "b.txt"]);
}

#[tokio::test]
async fn a_call_past_the_workspaces_quota_fails_as_a_limit_and_the_step_goes_on() {
    let folder = Arc::new(FakeFolder {
        quota: Some(5),
        ..FakeFolder::default()
    });
    let tools = Functions::new().with("write", EFFECTFUL, writer(&folder));
    let turns = vec![
        call(&[write("c1", "a.txt", "four"), write("c2", "b.txt", "four")]),
        say("done"),
    ];
    let rig = with_folder(rig(turns, tools), &folder, "r");
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 5), "r", 1, "go")
        .await
        .unwrap();
    assert_eq!(committed_paths(&rig, "r"), ["a.txt"]);
    let record = rig.store.load("r").await.unwrap();
    let results: Vec<CallResult> = record
        .messages()
        .iter()
        .filter_map(|message| tool_result(message).cloned())
        .collect();
    assert!(
        matches!(&results[1], CallResult::Error(error) if error.kind == ToolErrorKind::Limit),
        "{results:?}"
    );
    let limits: Vec<&Event> = record
        .commits
        .iter()
        .flat_map(|commit| &commit.events)
        .filter(|event| {
            matches!(
                event,
                Event::LimitExceeded {
                    limit: LimitKind::Staging,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(limits.len(), 1, "{limits:?}");
}

#[tokio::test]
async fn an_approval_wait_holds_the_changes_its_step_staged() {
    let folder = Arc::new(FakeFolder::default());
    let tools = Functions::new()
        .with("write", EFFECTFUL, writer(&folder))
        .with("deploy", EFFECTFUL, echo());
    let turns = vec![
        call(&[write("c1", "a.txt", "one"), ("c2", "deploy", json!({}))]),
        say("done"),
    ];
    let rig = with_folder(rig(turns, tools), &folder, "r");
    let agent = agent(Verdict::Allow, &[(Verdict::Ask, "deploy")], 5);
    let outcome = rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    let RunOutcome::Waiting { pending, .. } = outcome else {
        panic!("expected a wait, got {outcome:?}");
    };
    assert_eq!(pending[0].call.id, "c2");
    assert_eq!(rig.tools.calls(), 1, "the allowed call ran before the wait");
    assert_eq!(
        rig.store.files("r").await.unwrap()[0].seq,
        2,
        "committed while waiting"
    );
    assert!(folder.folder().is_empty(), "the wait holds the change");
    assert_eq!(rig.store.published("r").await.unwrap(), 0);

    let decisions = BTreeMap::from([("c2".to_owned(), Approval::Approve)]);
    let outcome = rig.runtime.resume(&agent, "r", &decisions).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Ended { .. }));
    assert_eq!(rig.tools.calls(), 2, "the write did not run again");
    assert_eq!(folder.folder()["a.txt"][..], b"one"[..]);
    assert!(rig.store.published("r").await.unwrap() >= 2);
}

#[tokio::test]
async fn a_step_that_fails_commits_none_of_its_changes() {
    let folder = Arc::new(FakeFolder::default());
    let clashing = {
        Box::new(
            move |args: &serde_json::Value, _: &dyn cordon_kernel::StateReader| {
                let mut outcome =
                    ToolCallOutcome::output(json!("ok")).with_writes(vec![StateWrite {
                        key: "owner".into(),
                        op: StateOp::Set {
                            value: args["who"].clone(),
                        },
                    }]);
                let path = format!("{}.txt", args["who"].as_str().unwrap_or("x"));
                outcome
                    .files
                    .insert(path, FileState::File(b"claimed".as_slice().into()));
                outcome
            },
        ) as Handler
    };
    let tools = Functions::new().with("claim", EFFECTFUL, clashing);
    let turns = vec![
        call(&[
            ("c1", "claim", json!({"who": "a"})),
            ("c2", "claim", json!({"who": "b"})),
        ]),
        say("done"),
    ];
    let rig = with_folder(rig(turns, tools), &folder, "r");
    let agent = agent(Verdict::Allow, &[], 5);
    let failed = rig.runtime.start(&agent, "r", 1, "go").await;
    assert!(
        matches!(failed, Err(RunError::StateConflict(_))),
        "{failed:?}"
    );
    assert!(rig.store.files("r").await.unwrap().is_empty());
    assert!(folder.committed.lock().unwrap().is_empty());
    assert!(folder.folder().is_empty());
}

#[tokio::test]
async fn changes_committed_but_not_published_reach_the_folder_on_resume() {
    let folder = Arc::new(FakeFolder::default());
    folder.fail_publish.store(true, Ordering::SeqCst);
    let tools = Functions::new().with("write", EFFECTFUL, writer(&folder));
    let turns = vec![call(&[write("c1", "a.txt", "one")]), say("done")];
    let rig = with_folder(rig(turns, tools), &folder, "r");
    let agent = agent(Verdict::Allow, &[], 5);
    let failed = rig.runtime.start(&agent, "r", 1, "go").await;
    assert!(matches!(failed, Err(RunError::Publish(_))), "{failed:?}");
    assert!(folder.folder().is_empty());
    assert_eq!(rig.store.published("r").await.unwrap(), 0);

    // A new process: its ledger knows nothing until the run is restored.
    let fresh = Arc::new(FakeFolder::default());
    let tools = Functions::new().with("write", EFFECTFUL, writer(&fresh));
    let again = with_folder(
        rig_on(vec![say("done")], tools, rig.store.clone()),
        &fresh,
        "r",
    );
    let outcome = again
        .runtime
        .resume(&agent, "r", &BTreeMap::new())
        .await
        .unwrap();
    assert!(matches!(outcome, RunOutcome::Ended { .. }));
    assert_eq!(fresh.folder()["a.txt"][..], b"one"[..]);
    assert_eq!(
        again.tools.calls(),
        0,
        "the committed write did not run again"
    );
    assert_eq!(rig.store.published("r").await.unwrap(), 2);
}
