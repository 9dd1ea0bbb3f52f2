//! Hook plugins and typed state with real components: the bundled redactor,
//! guard and budget; hostile hooks that trap, loop, allocate, return garbage or
//! reach for what they were not granted, all failing closed; hooks a manifest
//! does not list, never called; and the merge policies under parallel calls.

use futures_util::FutureExt;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use cordon_kernel::{
    AgentDef, CallResult, Capability, CommitStore, EndCause, Event, HookPhase, MemoryCommitStore,
    MergePolicy, Message, ModelResponse, PermissionPolicy, Rule, RunError, RunOutcome, Runtime,
    Scope, StateKey, ToolErrorKind, Verdict,
};
use cordon_tests::script::{Script, answer, calls};
use cordon_tests::{Fixture, artifacts, hook_manifest, host, manifest};
use cordon_wasm::{Safeguards, Trust};
use serde_json::{Value, json};

/// The state keys the hostile tools may read and write in these tests.
const STATE_GRANTS: &str = "[grants.state]\nread = [\"n\", \"owner\", \"owners\"]\nwrite = [\"n\", \"owner\", \"owners\"]\n";

/// One run of `agent` over the bundles of `fixture`, with the model's `turns`.
struct Run {
    model: Arc<Script>,
    store: Arc<MemoryCommitStore>,
    result: Result<RunOutcome, RunError>,
}

impl Run {
    async fn of(fixture: &Fixture, agent: &AgentDef, turns: Vec<ModelResponse>) -> Self {
        Self::under(fixture, agent, turns, Safeguards::default()).await
    }

    async fn under(
        fixture: &Fixture,
        agent: &AgentDef,
        turns: Vec<ModelResponse>,
        safeguards: Safeguards,
    ) -> Self {
        let host = host();
        let report = fixture.report(&host).await;
        let errors: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
        assert!(errors.is_empty(), "bundles failed to load: {errors:#?}");
        let events = Arc::new(cordon_kernel::EventLog::new());
        let plugins = Arc::new(
            host.plugins_with(report.bundles, events.clone(), safeguards)
                .unwrap_or_else(|errors| panic!("{}", errors[0])),
        );
        let model = Arc::new(Script::new(turns));
        let store = Arc::new(MemoryCommitStore::new());
        let runtime =
            Runtime::new(model.clone(), plugins.clone(), store.clone(), events).with_hooks(plugins);
        let result = runtime.start(agent, "r", 1, "go").await;
        Self {
            model,
            store,
            result,
        }
    }

    fn events(&self) -> Vec<Event> {
        self.store
            .load("r")
            .now_or_never()
            .expect("the test store answers at once")
            .unwrap()
            .commits
            .iter()
            .flat_map(|commit| commit.events.clone())
            .collect()
    }

    fn results(&self) -> Vec<CallResult> {
        self.store
            .load("r")
            .now_or_never()
            .expect("the test store answers at once")
            .unwrap()
            .messages()
            .into_iter()
            .filter_map(|message| match message {
                Message::Tool { result, .. } => Some(result),
                _ => None,
            })
            .collect()
    }

    fn state(&self) -> BTreeMap<String, Value> {
        self.store
            .load("r")
            .now_or_never()
            .expect("the test store answers at once")
            .unwrap()
            .state()
            .unwrap()
    }

    /// The capability and target of every refusal recorded for `bundle`.
    fn denials(&self, bundle: &str) -> Vec<(Capability, String)> {
        self.events()
            .into_iter()
            .filter_map(|event| match event {
                Event::Denied(denial) if denial.bundle == bundle => {
                    Some((denial.capability, denial.target))
                }
                _ => None,
            })
            .collect()
    }

    fn logs(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|event| match event {
                Event::Log { message, .. } => Some(message),
                _ => None,
            })
            .collect()
    }
}

fn agent(default: Verdict, rules: &[(Verdict, &str)]) -> AgentDef {
    let policy = rules
        .iter()
        .fold(PermissionPolicy::new(default), |policy, (verdict, rule)| {
            policy.with_rule(Rule::parse(*verdict, rule).unwrap())
        });
    AgentDef::new("test", "be brief", &["*"], 6, policy).unwrap()
}

fn allow_all() -> AgentDef {
    agent(Verdict::Allow, &[])
}

/// A fixture with the hostile tools and a hostile hook bundle in `mode`
/// handling `hooks`, plus `extra` manifest TOML.
fn hostile(mode: &str, hooks: &[&str], extra: &str) -> Fixture {
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest("hostile", STATE_GRANTS),
        Path::new(artifacts::HOSTILE),
    );
    fixture.bundle(
        "hooks",
        &hook_manifest(
            "hooks",
            hooks,
            &format!("{extra}\n[config]\nmode = \"{mode}\"\n[limits]\ntimeout-ms = 500\nmemory-mib = 16\n"),
        ),
        Path::new(artifacts::HOSTILE_HOOKS),
    );
    fixture
}

fn echo(id: &str) -> (&str, &'static str, Value) {
    (id, "hostile.echo", json!({"path": "docs/a"}))
}

fn error_of(result: &CallResult) -> (ToolErrorKind, String) {
    match result {
        CallResult::Error(error) => (error.kind, error.message.clone()),
        CallResult::Output(output) => panic!("expected an error, got {output}"),
    }
}

#[tokio::test]
async fn a_hook_the_manifest_does_not_list_is_never_called() {
    let fixture = hostile("record", &["before-tool-call"], "");
    let run = Run::of(&fixture, &allow_all(), vec![calls(&[echo("c1")]), answer()]).await;
    assert!(run.result.is_ok(), "{:?}", run.result);
    assert_eq!(run.logs(), vec!["hook called: before-tool-call"]);
    assert_eq!(
        run.results()[0],
        CallResult::Output(json!({"path": "docs/a"}))
    );
}

#[tokio::test]
async fn hostile_gates_fail_closed_and_the_host_keeps_running() {
    for mode in ["trap", "loop", "alloc", "garbage"] {
        let fixture = hostile(mode, &["before-tool-call"], "");
        let run = Run::of(&fixture, &allow_all(), vec![calls(&[echo("c1")]), answer()]).await;
        assert!(
            matches!(
                run.result,
                Ok(RunOutcome::Ended {
                    cause: EndCause::FinalAnswer,
                    ..
                })
            ),
            "{mode}: {:?}",
            run.result
        );
        let (kind, message) = error_of(&run.results()[0]);
        assert_eq!(kind, ToolErrorKind::Denied, "{mode}");
        assert!(message.contains("hook `hooks` failed"), "{mode}: {message}");
        assert!(
            run.events().iter().any(|event| matches!(
                event,
                Event::HookFailed { bundle, phase: HookPhase::BeforeToolCall, .. } if bundle == "hooks"
            )),
            "{mode}: {:?}",
            run.events()
        );
    }
}

#[tokio::test]
async fn hostile_observation_filters_withhold_the_result() {
    for mode in ["trap", "garbage"] {
        let fixture = hostile(mode, &["after-tool-call"], "");
        let run = Run::of(&fixture, &allow_all(), vec![calls(&[echo("c1")]), answer()]).await;
        let (_, message) = error_of(&run.results()[0]);
        assert!(message.contains("withheld"), "{mode}: {message}");
        let next = &run.model.requests()[1];
        assert!(!next.contains("docs/a\"}\"}"), "{mode}");
    }
}

#[tokio::test]
async fn oversized_context_or_a_refusal_ends_the_run_before_the_model_is_asked() {
    for (mode, needle) in [
        ("garbage", "exceeds the limit"),
        ("refuse", "hostile refuses"),
    ] {
        let fixture = hostile(mode, &["before-inference"], "");
        let run = Run::of(&fixture, &allow_all(), vec![answer()]).await;
        let Ok(RunOutcome::Ended {
            cause: EndCause::Refused { hook, reason },
            ..
        }) = &run.result
        else {
            panic!("{mode}: {:?}", run.result);
        };
        assert_eq!(hook, "hooks");
        assert!(reason.contains(needle), "{mode}: {reason}");
        assert!(run.model.requests().is_empty());
    }
}

#[tokio::test]
async fn a_hook_reaching_for_ungranted_capabilities_is_refused_and_cannot_wave_calls_through() {
    let fixture = hostile("grant", &["before-tool-call"], "");
    let policy = agent(Verdict::Allow, &[(Verdict::Ask, "hostile.echo")]);
    let run = Run::of(&fixture, &policy, vec![calls(&[echo("c1")]), answer()]).await;
    assert!(
        matches!(run.result, Ok(RunOutcome::Waiting { .. })),
        "the policy's ask stands: {:?}",
        run.result
    );
    let denials = run.denials("hooks");
    assert!(
        denials.contains(&(Capability::ToolCall, "hostile.echo".into())),
        "{denials:?}"
    );
    assert!(
        denials.contains(&(Capability::StateWrite, "secret.flag".into())),
        "{denials:?}"
    );
    let leaks: Vec<String> = run
        .logs()
        .into_iter()
        .filter(|log| log.contains("HOME=") || log.contains("root:"))
        .collect();
    assert!(leaks.is_empty(), "{leaks:?}");
}

#[tokio::test]
async fn a_rewrite_into_a_denied_path_is_denied() {
    let fixture = hostile("rewrite", &["before-tool-call"], "");
    let policy = agent(
        Verdict::Allow,
        &[(Verdict::Deny, "hostile.echo(path=secrets/**)")],
    );
    let run = Run::of(&fixture, &policy, vec![calls(&[echo("c1")]), answer()]).await;
    let (kind, message) = error_of(&run.results()[0]);
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(message.contains("rewritten arguments"), "{message}");
}

#[tokio::test]
async fn a_hook_writing_an_ungranted_state_key_is_refused() {
    let fixture = hostile("state", &["before-tool-call"], "");
    let run = Run::of(&fixture, &allow_all(), vec![calls(&[echo("c1")]), answer()]).await;
    let (kind, _) = error_of(&run.results()[0]);
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(run.events().iter().any(|event| matches!(
        event,
        Event::Denied(denial) if denial.capability == Capability::StateRead && denial.target == "hook.calls"
    )));
    assert!(!run.state().contains_key("hook.calls"));
}

#[tokio::test]
async fn a_gate_that_denies_or_asks_stops_the_call() {
    let fixture = hostile("deny", &["before-tool-call"], "");
    let run = Run::of(&fixture, &allow_all(), vec![calls(&[echo("c1")]), answer()]).await;
    let (kind, message) = error_of(&run.results()[0]);
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(message.contains("hostile says no"), "{message}");

    let fixture = hostile("ask", &["before-tool-call"], "");
    let run = Run::of(&fixture, &allow_all(), vec![calls(&[echo("c1")]), answer()]).await;
    let Ok(RunOutcome::Waiting { pending, .. }) = &run.result else {
        panic!("a hook's ask waits for a person: {:?}", run.result);
    };
    assert_eq!(pending[0].call.id, "c1");
}

#[tokio::test]
async fn a_gate_that_allows_everything_widens_nothing() {
    let fixture = hostile("allow-all", &["before-tool-call", "after-tool-call"], "");
    let policy = agent(Verdict::Allow, &[(Verdict::Deny, "hostile.echo")]);
    let run = Run::of(&fixture, &policy, vec![calls(&[echo("c1")]), answer()]).await;
    let (kind, message) = error_of(&run.results()[0]);
    assert_eq!(kind, ToolErrorKind::Denied, "the policy's deny stands");
    assert!(message.contains("hostile.echo"), "{message}");
}

#[tokio::test]
async fn context_a_hook_adds_reaches_the_models_request() {
    let fixture = hostile("context", &["before-inference"], "");
    let run = Run::of(&fixture, &allow_all(), vec![answer()]).await;
    assert!(run.result.is_ok(), "{:?}", run.result);
    let request = &run.model.requests()[0];
    assert!(request.contains("the password is swordfish"), "{request}");
}

#[tokio::test]
async fn a_step_end_hook_granted_a_key_counts_each_step() {
    let fixture = hostile(
        "count",
        &["step-end"],
        "[grants.state]\nread = [\"steps.ended\"]\nwrite = [\"steps.ended\"]\n",
    );
    let agent = declared("steps.ended", MergePolicy::Commutative);
    let run = Run::of(
        &fixture,
        &agent,
        vec![calls(&[echo("c1")]), calls(&[echo("c2")]), answer()],
    )
    .await;
    assert!(run.result.is_ok(), "{:?}", run.result);
    assert_eq!(run.state()["steps.ended"], json!(3));
}

fn bundled(fixture: &Fixture) {
    fixture.bundle(
        "hostile",
        &manifest("hostile", ""),
        Path::new(artifacts::HOSTILE),
    );
}

#[tokio::test]
async fn the_redactor_hides_secrets_from_the_models_next_request() {
    let fixture = Fixture::new();
    bundled(&fixture);
    fixture.bundled_plugin("redactor", Path::new(artifacts::REDACTOR));
    let run = Run::of(
        &fixture,
        &allow_all(),
        vec![calls(&[("c1", "hostile.secret", json!({}))]), answer()],
    )
    .await;
    let next = run.model.requests()[1].clone();
    for secret in [
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
        "hunter2",
    ] {
        assert!(!next.contains(secret), "{secret} reached the model: {next}");
    }
    assert!(next.contains("[REDACTED:aws-access-key]"), "{next}");
    let stored = format!("{:?}", run.store.load("r").await.unwrap().commits);
    assert!(!stored.contains("AKIAIOSFODNN7EXAMPLE"), "{stored}");
}

#[tokio::test]
async fn the_guard_denies_escaping_paths_and_asks_about_destructive_commands() {
    let fixture = Fixture::new();
    bundled(&fixture);
    fixture.bundled_plugin("guard", Path::new(artifacts::GUARD));
    let run = Run::of(
        &fixture,
        &allow_all(),
        vec![
            calls(&[
                ("c1", "hostile.echo", json!({"path": "../../etc/passwd"})),
                ("c2", "hostile.echo", json!({"path": "docs/readme.md"})),
            ]),
            answer(),
        ],
    )
    .await;
    let results = run.results();
    let (kind, message) = error_of(&results[0]);
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(
        message.contains("hook `guard`") && message.contains("outside the workspace"),
        "{message}"
    );
    assert_eq!(
        results[1],
        CallResult::Output(json!({"path": "docs/readme.md"}))
    );

    let run = Run::of(
        &fixture,
        &allow_all(),
        vec![
            calls(&[("c1", "hostile.echo", json!({"command": "rm -rf build"}))]),
            answer(),
        ],
    )
    .await;
    let Ok(RunOutcome::Waiting { pending, .. }) = &run.result else {
        panic!("{:?}", run.result);
    };
    assert_eq!(pending[0].call.id, "c1");
}

#[tokio::test]
async fn the_budget_counts_calls_in_a_commutative_key_and_denies_past_its_limit() {
    let fixture = Fixture::new();
    bundled(&fixture);
    let dir = fixture.bundled_plugin("budget", Path::new(artifacts::BUDGET));
    let manifest = std::fs::read_to_string(dir.join("plugin.toml")).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        manifest.replace("max-calls = 20", "max-calls = 2"),
    )
    .unwrap();
    let agent = allow_all().with_state_key(
        "budget.calls",
        StateKey::new(None)
            .unwrap()
            .merged_by(MergePolicy::Commutative),
    );
    let run = Run::of(
        &fixture,
        &agent,
        vec![calls(&[echo("c1"), echo("c2"), echo("c3")]), answer()],
    )
    .await;
    let results = run.results();
    assert!(matches!(results[0], CallResult::Output(_)));
    assert!(matches!(results[1], CallResult::Output(_)));
    let (kind, message) = error_of(&results[2]);
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(message.contains("budget"), "{message}");
    assert_eq!(run.state()["budget.calls"], json!(2));
}

fn state_call(id: &'static str, args: Value) -> (&'static str, &'static str, Value) {
    (id, "hostile.state", args)
}

fn declared(key: &str, merge: MergePolicy) -> AgentDef {
    allow_all().with_state_key(
        key,
        StateKey::new(None)
            .unwrap()
            .merged_by(merge)
            .in_scope(Scope::Run),
    )
}

#[tokio::test]
async fn parallel_component_writes_merge_by_policy() {
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest("hostile", STATE_GRANTS),
        Path::new(artifacts::HOSTILE),
    );
    let increment = json!({"op": "increment", "key": "n", "delta": 2});
    let run = Run::of(
        &fixture,
        &declared("n", MergePolicy::Commutative),
        vec![
            calls(&[
                state_call("c1", increment.clone()),
                state_call("c2", increment.clone()),
                state_call("c3", increment),
            ]),
            answer(),
        ],
    )
    .await;
    assert!(run.result.is_ok(), "{:?}", run.result);
    assert_eq!(run.state()["n"], json!(6));

    let field =
        |name: &str| json!({"op": "set-field", "key": "owners", "field": name, "value": true});
    let run = Run::of(
        &fixture,
        &declared("owners", MergePolicy::Disjoint),
        vec![
            calls(&[state_call("c1", field("a")), state_call("c2", field("b"))]),
            answer(),
        ],
    )
    .await;
    assert!(run.result.is_ok(), "{:?}", run.result);
    assert_eq!(run.state()["owners"], json!({"a": true, "b": true}));

    let claim = json!({"op": "set", "key": "owner", "value": "me"});
    let run = Run::of(
        &fixture,
        &declared("owner", MergePolicy::Exclusive),
        vec![
            calls(&[state_call("c1", claim.clone()), state_call("c2", claim)]),
            answer(),
        ],
    )
    .await;
    let Err(RunError::StateConflict(conflict)) = &run.result else {
        panic!("{:?}", run.result);
    };
    assert_eq!(conflict.key, "owner");
    assert_eq!(conflict.writers.len(), 2);
    let record = run.store.load("r").await.unwrap();
    assert_eq!(record.last_seq(), 1, "the failed step committed nothing");
    assert!(record.state().unwrap().is_empty());
}

#[tokio::test]
async fn undeclared_state_reads_and_writes_by_a_tool_are_refused() {
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest("hostile", "[grants.state]\nread = [\"n\"]\n"),
        Path::new(artifacts::HOSTILE),
    );
    let run = Run::of(
        &fixture,
        &declared("n", MergePolicy::Commutative),
        vec![
            calls(&[
                state_call("c1", json!({"op": "set", "key": "n", "value": 1})),
                state_call("c2", json!({"op": "set", "key": "elsewhere", "value": 1})),
                state_call(
                    "c3",
                    json!({"op": "set-field", "key": "elsewhere", "field": "f", "value": 1}),
                ),
                state_call("c4", json!({"op": "insert", "key": "n", "value": 1})),
            ]),
            answer(),
        ],
    )
    .await;
    let results = run.results();
    assert_eq!(error_of(&results[0]).0, ToolErrorKind::Denied);
    assert_eq!(error_of(&results[1]).0, ToolErrorKind::Denied);
    assert_eq!(error_of(&results[2]).0, ToolErrorKind::Denied);
    assert_eq!(error_of(&results[3]).0, ToolErrorKind::Denied);
    assert!(run.state().is_empty());
    let denied = run.denials("hostile");
    assert!(
        denied.contains(&(Capability::StateWrite, "n".into())),
        "{denied:?}"
    );
    assert!(
        denied.contains(&(Capability::StateWrite, "elsewhere".into())),
        "{denied:?}"
    );
}

/// Every call record of the run, nested ones as children.
fn records(run: &Run) -> Vec<cordon_kernel::ToolRecord> {
    run.store
        .load("r")
        .now_or_never()
        .expect("the test store answers at once")
        .unwrap()
        .commits
        .iter()
        .flat_map(|commit| commit.tools.clone())
        .collect()
}

fn call_tool(id: &'static str, name: &str, args: Value) -> (&'static str, &'static str, Value) {
    (
        id,
        "hostile.call-tool",
        json!({ "name": name, "args": args }),
    )
}

#[tokio::test]
async fn a_tools_own_calls_pass_the_agents_policy_its_tool_list_and_the_budget() {
    let fixture = Fixture::new();
    std::fs::write(fixture.workspace.path().join(".env"), "API_KEY=sk-SECRET").unwrap();
    fixture.bundle(
        "hostile",
        &manifest(
            "hostile",
            "[grants]\ntools = [\"hostile.read-file\", \"hostile.echo\", \"hostile.env\"]\n[[grants.dirs]]\nhost = \".\"\nguest = \"/w\"\nmode = \"ro\"\n",
        ),
        Path::new(artifacts::HOSTILE),
    );
    let dir = fixture.bundled_plugin("budget", Path::new(artifacts::BUDGET));
    let manifest_text = std::fs::read_to_string(dir.join("plugin.toml")).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        manifest_text.replace("max-calls = 20", "max-calls = 5"),
    )
    .unwrap();
    let policy = PermissionPolicy::new(Verdict::Allow)
        .with_rule(Rule::parse(Verdict::Deny, "hostile.read-file(path=**/.env)").unwrap());
    let agent = AgentDef::new(
        "nested",
        "",
        &["hostile.call-tool", "hostile.read-file", "hostile.echo"],
        4,
        policy,
    )
    .unwrap()
    .with_state_key(
        "budget.calls",
        StateKey::new(None)
            .unwrap()
            .merged_by(MergePolicy::Commutative),
    );
    let run = Run::of(
        &fixture,
        &agent,
        vec![
            calls(&[
                call_tool("c1", "hostile.read-file", json!({"path": "/w/.env"})),
                call_tool("c2", "hostile.echo", json!({"via": "c2"})),
                call_tool("c3", "hostile.env", json!({"name": "HOME"})),
                call_tool("c4", "hostile.echo", json!({"via": "c4"})),
            ]),
            answer(),
        ],
    )
    .await;
    let results = run.results();
    let (kind, message) = error_of(&results[0]);
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(
        message.contains("hostile.read-file(path=**/.env)"),
        "{message}"
    );
    assert!(!format!("{results:?}").contains("sk-SECRET"));
    let (kind, message) = error_of(&results[2]);
    assert_eq!(kind, ToolErrorKind::Denied);
    assert!(message.contains("not among the agent's tools"), "{message}");
    // Four top-level calls and one nested echo spend the budget of five; the
    // other nested echo, whichever came second, is denied by the budget hook.
    assert_eq!(run.state()["budget.calls"], json!(5));
    let echoed: Vec<&CallResult> = [&results[1], &results[3]]
        .into_iter()
        .filter(|result| matches!(result, CallResult::Output(_)))
        .collect();
    assert_eq!(echoed.len(), 1, "{results:?}");
    let records = records(&run);
    let children: Vec<(String, Verdict)> = records
        .iter()
        .flat_map(|record| &record.children)
        .map(|child| (child.call.id.clone(), child.decision.verdict))
        .collect();
    assert_eq!(children.len(), 4, "{children:?}");
    for (id, verdict) in [("c1.1", Verdict::Deny), ("c3.1", Verdict::Deny)] {
        assert!(children.contains(&(id.to_owned(), verdict)), "{children:?}");
    }
    let budget_denied = records
        .iter()
        .flat_map(|record| &record.children)
        .filter(|child| {
            child
                .decision
                .rule
                .as_deref()
                .is_some_and(|rule| rule.contains("hook `budget`"))
        })
        .count();
    assert_eq!(budget_denied, 1, "{records:#?}");
}

#[tokio::test]
async fn effect_rules_believe_only_the_bundles_the_operator_trusts() {
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest("hostile", ""),
        Path::new(artifacts::HOSTILE),
    );
    // `hostile.echo` says it is read-only.
    let reader = agent(Verdict::Deny, &[(Verdict::Allow, "@read-only")]);
    let turns = || vec![calls(&[echo("c1")]), answer()];
    let untrusted = Run::of(&fixture, &reader, turns()).await;
    let (kind, _) = error_of(&untrusted.results()[0]);
    assert_eq!(kind, ToolErrorKind::Denied);

    let trusting = Safeguards {
        trust: Trust::bundled().with("hostile").unwrap(),
        ..Safeguards::default()
    };
    let trusted = Run::under(&fixture, &reader, turns(), trusting).await;
    assert!(matches!(trusted.results()[0], CallResult::Output(_)));

    // A deny on destructive tools covers a tool no one vouches for.
    let cautious = agent(Verdict::Allow, &[(Verdict::Deny, "@destructive")]);
    let run = Run::of(&fixture, &cautious, turns()).await;
    let (kind, _) = error_of(&run.results()[0]);
    assert_eq!(kind, ToolErrorKind::Denied);
}
