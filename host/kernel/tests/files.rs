//! Transactional file changes through the loop: a step's staged changes
//! commit with it and reach the folder only after the receipt; a waiting run
//! holds them; a failed step abandons them; a crash between the commit and the
//! folder write is repaired on resume.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cordon_kernel::{
    Approval, CommitStore, FileChange, FileLedger, FileState, MemoryCommitStore, PublishError,
    RunError, RunOutcome, StateOp, StateWrite, StepFiles, ToolCallOutcome, ToolOutput, Verdict,
};
use serde_json::json;

mod support;

use support::*;

type Files = BTreeMap<String, Vec<u8>>;

/// A folder in memory with the two staging layers of a real ledger.
#[derive(Default)]
struct FakeFolder {
    pending: Mutex<Files>,
    committed: Mutex<Files>,
    folder: Mutex<Files>,
    /// The store and run whose commit must precede every publish.
    store: Mutex<Option<(Arc<MemoryCommitStore>, String)>>,
    fail_publish: AtomicBool,
    abandoned: AtomicUsize,
}

impl FakeFolder {
    fn stage(&self, path: &str, contents: &str) {
        self.pending
            .lock()
            .unwrap()
            .insert(path.to_owned(), contents.as_bytes().to_vec());
    }

    fn folder(&self) -> Files {
        self.folder.lock().unwrap().clone()
    }
}

impl FileLedger for FakeFolder {
    fn staged(&self) -> Vec<FileChange> {
        let committed = self.committed.lock().unwrap();
        let folder = self.folder.lock().unwrap();
        self.pending
            .lock()
            .unwrap()
            .iter()
            .map(|(path, contents)| FileChange {
                path: path.clone(),
                before: committed
                    .get(path)
                    .or_else(|| folder.get(path))
                    .map_or(FileState::Absent, |old| FileState::File(old.clone())),
                after: FileState::File(contents.clone()),
            })
            .collect()
    }

    fn confirm(&self) {
        let pending = std::mem::take(&mut *self.pending.lock().unwrap());
        self.committed.lock().unwrap().extend(pending);
    }

    fn abandon(&self) {
        self.pending.lock().unwrap().clear();
        self.abandoned.fetch_add(1, Ordering::SeqCst);
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

/// A tool that stages `args.path` with `args.text` in `folder`.
fn writer(folder: &Arc<FakeFolder>) -> Handler {
    let folder = Arc::clone(folder);
    Box::new(move |args, _| {
        let path = args["path"].as_str().unwrap_or("a.txt");
        folder.stage(path, args["text"].as_str().unwrap_or_default());
        assert!(
            !folder.folder().contains_key(path),
            "nothing reaches the folder while the step runs"
        );
        ToolCallOutcome {
            result: Ok(ToolOutput {
                content: json!("staged"),
            }),
            writes: Vec::new(),
        }
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

#[tokio::test]
async fn a_steps_changes_commit_with_it_and_reach_the_folder_after_the_receipt() {
    let folder = Arc::new(FakeFolder::default());
    let tools = Functions::new().with("write", EFFECTFUL, writer(&folder));
    let turns = vec![
        call(&[("c1", "write", json!({"path": "a.txt", "text": "one"}))]),
        say("done"),
    ];
    let rig = with_folder(rig(turns, tools), &folder, "r");
    let agent = agent(Verdict::Allow, &[], 5);
    let outcome = rig.runtime.start(&agent, "r", 1, "go").await.unwrap();
    assert!(matches!(outcome, RunOutcome::Ended { .. }));

    let files = rig.store.files("r").unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].seq, 2, "the tool's step carries the change");
    assert_eq!(files[0].changes[0].before, FileState::Absent);
    assert_eq!(folder.folder()["a.txt"], b"one");
    assert_eq!(rig.store.published("r").unwrap(), 2);
}

#[tokio::test]
async fn an_approval_wait_holds_the_changes_its_step_staged() {
    let folder = Arc::new(FakeFolder::default());
    let tools = Functions::new()
        .with("write", EFFECTFUL, writer(&folder))
        .with("deploy", EFFECTFUL, echo());
    let turns = vec![
        call(&[
            ("c1", "write", json!({"path": "a.txt", "text": "one"})),
            ("c2", "deploy", json!({})),
        ]),
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
        rig.store.files("r").unwrap()[0].seq,
        2,
        "committed while waiting"
    );
    assert!(folder.folder().is_empty(), "the wait holds the change");
    assert_eq!(rig.store.published("r").unwrap(), 0);

    let decisions = BTreeMap::from([("c2".to_owned(), Approval::Approve)]);
    let outcome = rig.runtime.resume(&agent, "r", &decisions).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Ended { .. }));
    assert_eq!(rig.tools.calls(), 2, "the write did not run again");
    assert_eq!(folder.folder()["a.txt"], b"one");
    assert!(rig.store.published("r").unwrap() >= 2);
}

#[tokio::test]
async fn a_step_that_fails_abandons_what_it_staged() {
    let folder = Arc::new(FakeFolder::default());
    let clashing = {
        let folder = Arc::clone(&folder);
        Box::new(
            move |args: &serde_json::Value, _: &dyn cordon_kernel::StateReader| {
                folder.stage("a.txt", "clash");
                ToolCallOutcome {
                    result: Ok(ToolOutput {
                        content: json!("ok"),
                    }),
                    writes: vec![StateWrite {
                        key: "owner".into(),
                        op: StateOp::Set {
                            value: args["who"].clone(),
                        },
                    }],
                }
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
    assert_eq!(folder.abandoned.load(Ordering::SeqCst), 1);
    assert!(folder.pending.lock().unwrap().is_empty());
    assert!(rig.store.files("r").unwrap().is_empty());
    assert!(folder.folder().is_empty());
}

#[tokio::test]
async fn changes_committed_but_not_published_reach_the_folder_on_resume() {
    let folder = Arc::new(FakeFolder::default());
    folder.fail_publish.store(true, Ordering::SeqCst);
    let tools = Functions::new().with("write", EFFECTFUL, writer(&folder));
    let turns = vec![
        call(&[("c1", "write", json!({"path": "a.txt", "text": "one"}))]),
        say("done"),
    ];
    let rig = with_folder(rig(turns, tools), &folder, "r");
    let agent = agent(Verdict::Allow, &[], 5);
    let failed = rig.runtime.start(&agent, "r", 1, "go").await;
    assert!(matches!(failed, Err(RunError::Publish(_))), "{failed:?}");
    assert!(folder.folder().is_empty());
    assert_eq!(rig.store.published("r").unwrap(), 0);

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
    assert_eq!(fresh.folder()["a.txt"], b"one");
    assert_eq!(
        again.tools.calls(),
        0,
        "the committed write did not run again"
    );
    assert_eq!(rig.store.published("r").unwrap(), 2);
}
