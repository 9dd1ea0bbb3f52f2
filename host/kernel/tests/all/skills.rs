//! Skills in the loop: an activation commits with its step and narrows the
//! steps after it, layers only ever narrow, a skill's tools exist only while
//! it is active, and a resumed run keeps its activations unless the skill
//! changed.

use futures_util::FutureExt;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use cordon_kernel::{
    CallResult, CommitStore, Event, EventLog, EventSink, RunOutcome, SKILL_TOOL, SkillActivation,
    SkillCatalog, SkillChange, ToolCallOutcome, ToolErrorKind, Verdict,
};
use serde_json::{Value, json};

use crate::support::*;

/// A `skill` tool that activates whatever it is asked to, with the
/// allowed-tools `layers` gives the skill.
fn skill_tool(layers: BTreeMap<&'static str, Option<Vec<&'static str>>>) -> Handler {
    Box::new(move |args: &Value, _| {
        let name = args["name"].as_str().unwrap_or_default().to_owned();
        let allowed = layers
            .get(name.as_str())
            .cloned()
            .flatten()
            .map(|rules| rules.into_iter().map(str::to_owned).collect());
        ToolCallOutcome::output(json!(format!("instructions of {name}"))).with_skills(vec![
            SkillActivation {
                skill: name,
                fingerprint: "v1".into(),
                allowed,
            },
        ])
    })
}

fn tools(layers: BTreeMap<&'static str, Option<Vec<&'static str>>>) -> Functions {
    Functions::new()
        .with(SKILL_TOOL, READ_ONLY, skill_tool(layers))
        .with("read", READ_ONLY, echo())
        .with("notes.add", EFFECTFUL, echo())
        .with("report/csv.summary", READ_ONLY, echo())
}

/// The skills as a resumed run finds them.
struct Skills(Mutex<BTreeMap<String, String>>);

impl SkillCatalog for Skills {
    fn fingerprint(&self, name: &str) -> Option<String> {
        self.0.lock().unwrap().get(name).cloned()
    }
}

fn error_of(result: Option<&CallResult>) -> (ToolErrorKind, String) {
    match result {
        Some(CallResult::Error(error)) => (error.kind, error.message.clone()),
        other => panic!("expected an error, got {other:?}"),
    }
}

fn results(rig: &Rig, run: &str, seq: usize) -> Vec<CallResult> {
    let record = rig
        .store
        .load(run)
        .now_or_never()
        .expect("the test store answers at once")
        .unwrap();
    record.commits[seq]
        .tools
        .iter()
        .map(|tool| tool.result.clone().unwrap())
        .collect()
}

#[tokio::test]
async fn an_activation_commits_with_its_step_and_narrows_the_steps_after_it() {
    let layers = BTreeMap::from([("report", Some(vec!["read", "report/*"]))]);
    let rig = rig(
        vec![
            call(&[
                ("c1", SKILL_TOOL, json!({"name": "report"})),
                ("c2", "notes.add", json!({"n": 1})),
            ]),
            call(&[
                ("c3", "read", json!({"path": "a"})),
                ("c4", "notes.add", json!({"n": 2})),
            ]),
            say("done"),
        ],
        tools(layers),
    );
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 6), "r", 1, "go")
        .await
        .unwrap();
    let record = rig.store.load("r").await.unwrap();
    assert!(
        matches!(&record.commits[1].skills[..], [SkillChange::Activated { call_id, activation }]
            if call_id == "c1" && activation.skill == "report"),
        "{:?}",
        record.commits[1].skills
    );
    let step_one = results(&rig, "r", 1);
    assert!(
        matches!(step_one[1], CallResult::Output(_)),
        "the activation narrows the steps after it, not its own"
    );
    let step_two = results(&rig, "r", 2);
    assert!(matches!(step_two[0], CallResult::Output(_)));
    let (kind, message) = error_of(step_two.get(1));
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(
        message.contains("skill `report`") && message.contains("read report/*"),
        "{message}"
    );
    let denied: Vec<&Event> = record.commits[2]
        .events
        .iter()
        .filter(|event| matches!(event, Event::SkillDenied { .. }))
        .collect();
    assert!(
        matches!(denied[..], [Event::SkillDenied { skill, call_id, tool, .. }]
            if skill == "report" && call_id == "c4" && tool == "notes.add"),
        "{denied:?}"
    );
    assert!(record.skills().is_active("report"));
}

#[tokio::test]
async fn a_second_skill_narrows_further_and_never_widens() {
    let layers = BTreeMap::from([
        ("report", Some(vec!["read", "notes.*"])),
        ("second", Some(vec!["read"])),
    ]);
    let rig = rig(
        vec![
            call(&[("c1", SKILL_TOOL, json!({"name": "report"}))]),
            call(&[("c2", "notes.add", json!({}))]),
            call(&[("c3", SKILL_TOOL, json!({"name": "second"}))]),
            call(&[
                ("c4", "notes.add", json!({})),
                ("c5", "read", json!({"path": "x"})),
            ]),
            say("done"),
        ],
        tools(layers),
    );
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 8), "r", 1, "go")
        .await
        .unwrap();
    assert!(matches!(results(&rig, "r", 2)[0], CallResult::Output(_)));
    assert!(
        matches!(results(&rig, "r", 3)[0], CallResult::Output(_)),
        "the skill tool passes every layer"
    );
    let last = results(&rig, "r", 4);
    let (kind, message) = error_of(last.first());
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(message.contains("skill `second`"), "{message}");
    assert!(matches!(last[1], CallResult::Output(_)));
}

#[tokio::test]
async fn a_policy_deny_or_ask_stays_so_under_a_skill_that_lists_the_tool() {
    let layers = BTreeMap::from([("report", Some(vec!["notes.*", "read"]))]);
    let rig = rig(
        vec![
            call(&[("c1", SKILL_TOOL, json!({"name": "report"}))]),
            call(&[("c2", "notes.add", json!({})), ("c3", "read", json!({}))]),
            say("done"),
        ],
        tools(layers),
    );
    let policy = agent(
        Verdict::Allow,
        &[(Verdict::Deny, "notes.add"), (Verdict::Ask, "read")],
        6,
    );
    let outcome = rig.runtime.start(&policy, "r", 1, "go").await.unwrap();
    let RunOutcome::Waiting { pending, .. } = outcome else {
        panic!("the ask still asks: {outcome:?}");
    };
    assert_eq!(pending[0].call.id, "c3");
    let record = rig.store.load("r").await.unwrap();
    let tools = &record.commits[2].tools;
    assert_eq!(tools[0].decision.verdict, Verdict::Deny);
    assert_eq!(tools[0].decision.rule.as_deref(), Some("notes.add"));
}

#[tokio::test]
async fn a_skills_tools_are_offered_and_callable_only_while_it_is_active() {
    let rig = rig(
        vec![
            call(&[("c1", "report/csv.summary", json!({}))]),
            call(&[("c2", SKILL_TOOL, json!({"name": "report"}))]),
            call(&[("c3", "report/csv.summary", json!({"x": 1}))]),
            say("done"),
        ],
        tools(BTreeMap::from([("report", Some(vec!["read"]))])),
    );
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 6), "r", 1, "go")
        .await
        .unwrap();
    let seen = rig.model.seen();
    assert!(
        !seen[0]
            .tools
            .iter()
            .any(|tool| tool == "report/csv.summary")
    );
    assert!(
        seen[2]
            .tools
            .iter()
            .any(|tool| tool == "report/csv.summary")
    );
    let (kind, message) = error_of(results(&rig, "r", 1).first());
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(message.contains("not active"), "{message}");
    assert_eq!(
        results(&rig, "r", 3)[0],
        CallResult::Output(json!({"x": 1})),
        "its own tools pass its layer"
    );
}

#[tokio::test]
async fn two_activations_of_one_skill_in_a_step_inject_it_once() {
    let rig = rig(
        vec![
            call(&[
                ("c1", SKILL_TOOL, json!({"name": "report"})),
                ("c2", SKILL_TOOL, json!({"name": "report"})),
            ]),
            say("done"),
        ],
        tools(BTreeMap::new()),
    );
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 6), "r", 1, "go")
        .await
        .unwrap();
    let record = rig.store.load("r").await.unwrap();
    assert_eq!(record.commits[1].skills.len(), 1);
    let step = results(&rig, "r", 1);
    assert_eq!(step[0], CallResult::Output(json!("instructions of report")));
    assert_eq!(
        step[1],
        CallResult::Output(
            json!({"skills": ["report"], "status": "already active: its instructions are in the conversation above"})
        )
    );
}

#[tokio::test]
async fn a_tool_cannot_activate_a_skill_for_the_model() {
    let tools = tools(BTreeMap::new()).nesting("sneak", EFFECTFUL, SKILL_TOOL);
    let rig = rig(
        vec![
            call(&[("c1", "sneak", json!({"name": "report"}))]),
            say("done"),
        ],
        tools,
    );
    rig.runtime
        .start(&agent(Verdict::Allow, &[], 6), "r", 1, "go")
        .await
        .unwrap();
    let record = rig.store.load("r").await.unwrap();
    assert!(record.commits[1].skills.is_empty());
    let child = &record.commits[1].tools[0].children[0];
    assert_eq!(child.decision.verdict, Verdict::Deny);
    assert!(record.skills().is_empty());
}

/// A run that activated `report` (allowing `read` only) and then waits
/// for approval of a `read`.
async fn waiting_with_an_active_skill() -> Arc<cordon_kernel::MemoryCommitStore> {
    let store = Arc::new(cordon_kernel::MemoryCommitStore::new());
    let first = rig_on(
        vec![
            call(&[("c1", SKILL_TOOL, json!({"name": "report"}))]),
            call(&[("c2", "read", json!({}))]),
        ],
        tools(BTreeMap::from([("report", Some(vec!["read"]))])),
        store.clone(),
    );
    let outcome = first.runtime.start(&asking(), "r", 1, "go").await.unwrap();
    assert!(matches!(outcome, RunOutcome::Waiting { .. }), "{outcome:?}");
    store
}

fn asking() -> cordon_kernel::AgentDef {
    agent(Verdict::Allow, &[(Verdict::Ask, "read")], 8)
}

/// Resume run `r` of `store` with the skills as `catalog` has them, its
/// model then calling `notes.add`; the events shown live.
async fn resume_with(
    store: &Arc<cordon_kernel::MemoryCommitStore>,
    catalog: &[(&str, &str)],
) -> Arc<EventLog> {
    let catalog = Skills(Mutex::new(
        catalog
            .iter()
            .map(|(name, print)| ((*name).to_owned(), (*print).to_owned()))
            .collect(),
    ));
    let live = Arc::new(EventLog::new());
    let resumed = rig_on(
        vec![call(&[("c4", "notes.add", json!({}))]), say("done")],
        tools(BTreeMap::new()),
        store.clone(),
    );
    let runtime = cordon_kernel::Runtime::new(
        resumed.model.clone(),
        resumed.tools.clone(),
        store.clone(),
        live.clone() as Arc<dyn EventSink>,
    )
    .with_skills(Arc::new(catalog));
    let decisions = BTreeMap::from([("c2".to_owned(), cordon_kernel::Approval::Approve)]);
    runtime.resume(&asking(), "r", &decisions).await.unwrap();
    live
}

/// The result of the call `id` wherever the run committed it.
fn result_of(store: &cordon_kernel::MemoryCommitStore, id: &str) -> CallResult {
    let record = store
        .load("r")
        .now_or_never()
        .expect("the test store answers at once")
        .unwrap();
    record
        .commits
        .iter()
        .flat_map(|commit| commit.tools.iter())
        .find(|tool| tool.call.id == id && tool.result.is_some())
        .and_then(|tool| tool.result.clone())
        .unwrap()
}

#[tokio::test]
async fn a_resumed_run_keeps_its_activation() {
    let store = waiting_with_an_active_skill().await;
    let live = resume_with(&store, &[("report", "v1")]).await;
    assert!(store.load("r").await.unwrap().skills().is_active("report"));
    let (kind, message) = error_of(Some(&result_of(&store, "c4")));
    assert_eq!(
        kind,
        ToolErrorKind::Denied,
        "the layer still holds: {message}"
    );
    assert!(matches!(result_of(&store, "c2"), CallResult::Output(_)));
    assert!(
        !live
            .snapshot()
            .iter()
            .any(|event| matches!(event, Event::SkillDropped { .. }))
    );
}

#[tokio::test]
async fn a_resumed_run_drops_an_activation_whose_skill_changed_or_went() {
    for (catalog, reason) in [
        (&[("report", "v2")][..], "SKILL.md changed"),
        (&[][..], "no longer has this skill"),
    ] {
        let store = waiting_with_an_active_skill().await;
        let live = resume_with(&store, catalog).await;
        let record = store.load("r").await.unwrap();
        assert!(!record.skills().is_active("report"));
        let dropped: Vec<&SkillChange> = record
            .commits
            .iter()
            .flat_map(|commit| commit.skills.iter())
            .filter(|change| matches!(change, SkillChange::Dropped { .. }))
            .collect();
        assert!(
            matches!(dropped[..], [SkillChange::Dropped { skill, reason: why }]
                if skill == "report" && why.contains(reason)),
            "{dropped:?}"
        );
        assert!(
            live.snapshot().iter().any(
                |event| matches!(event, Event::SkillDropped { skill, .. } if skill == "report")
            )
        );
        assert!(
            matches!(result_of(&store, "c4"), CallResult::Output(_)),
            "without the layer the agent's policy alone decides"
        );
    }
}
