//! The agent loop's own cost, measured: per-step overhead of the loop with a
//! scripted model and a trivial wasm tool, against calling the same tool
//! directly; the cost of a before-tool-call hook per call (a minimal allowing
//! hook, and the bundled `guard`), against the same loop without hooks; and
//! SQLite step commits per second with durability on, against a bare rusqlite
//! insert of the same bytes; and a served request (one call judged, run and
//! committed as a step, as `cordon mcp` serves it) with commits in memory, on
//! SQLite reaching only the process and on disk, against the call alone; and
//! a delegation to a sub-agent that answers in one step, against a step with
//! a plain tool call, with commits in memory and on SQLite. Every baseline
//! runs in the same process, right beside what it is compared with.
//!
//! Run with `cargo bench -p cordon-tests --bench loop`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_kernel::{
    AgentDef, CallContext, CommitStore, DeferApprovals, Disposition, Durability, EventLog,
    MemoryCommitStore, Message, ModelProvider, ModelResolver, ModelSettings, PermissionPolicy,
    Requester, RunHeader, Runtime, Served, ServedRun, StateSnapshot, StepCommit, ToolCall, ToolSet,
    Unanswered, Verdict,
};
use cordon_providers::ScriptedModel;
use cordon_store::SqliteCommitStore;
use cordon_wasm::{HostConfig, PluginHost, Plugins};
use serde_json::json;

const MANIFEST: &str = "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n";
const ALLOWING_HOOK: &str = "[plugin]\nname = \"allow\"\nversion = \"0.1.0\"\nkind = \"hook\"\nhooks = [\"before-tool-call\"]\ncomponent = \"hook.wasm\"\n[config]\nmode = \"allow-all\"\n";
const STEPS: usize = 40;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let host = PluginHost::new(HostConfig::default()).expect("host");
        let events = Arc::new(EventLog::new());
        let (_dir, plugins) = load(&host, &events, &[]).await;
        loop_overhead(&plugins, &events).await;
        hook_overhead(&host, &events).await;
        commit_throughput().await;
        served_overhead(&plugins, &events).await;
        delegation_overhead(&plugins, &events).await;
    });
}

/// The hostile tool bundle plus `extra` bundles (folder, manifest, component),
/// loaded onto `host`.
async fn load(
    host: &PluginHost,
    events: &Arc<EventLog>,
    extra: &[(&str, &str, &str)],
) -> (tempfile::TempDir, Arc<Plugins>) {
    let plugins_dir = tempfile::tempdir().expect("plugins dir");
    let bundles = [("hostile", MANIFEST, cordon_test_artifacts::HOSTILE)];
    for (folder, manifest, component) in bundles.iter().chain(extra) {
        let bundle = plugins_dir.path().join(folder);
        std::fs::create_dir_all(&bundle).expect("bundle dir");
        std::fs::write(bundle.join("plugin.toml"), manifest).expect("manifest");
        let file = if *folder == "hostile" {
            "tool.wasm"
        } else {
            "hook.wasm"
        };
        std::fs::copy(component, bundle.join(file)).expect("component");
    }
    let report = host
        .load_dir(plugins_dir.path(), plugins_dir.path())
        .await
        .expect("load");
    assert!(report.errors.is_empty(), "{}", report.errors[0]);
    let plugins = Arc::new(
        host.plugins(report.bundles, events.clone())
            .unwrap_or_else(|errors| panic!("{}", errors[0])),
    );
    (plugins_dir, plugins)
}

fn bench_agent() -> AgentDef {
    AgentDef::new(
        "bench",
        "",
        &["*"],
        u32::try_from(STEPS + 2).expect("steps"),
        PermissionPolicy::new(Verdict::Allow),
    )
    .expect("agent")
}

/// Median time per step of a run of [`STEPS`] steps over `plugins`, with
/// hooks when `hooked`.
async fn step_time(plugins: &Arc<Plugins>, events: &Arc<EventLog>, hooked: bool) -> Duration {
    let agent = bench_agent();
    let mut times = Vec::new();
    for round in 0..7 {
        let mut runtime = Runtime::new(
            Arc::new(script(STEPS)),
            plugins.clone(),
            Arc::new(MemoryCommitStore::new()),
            events.clone(),
        );
        if hooked {
            runtime = runtime.with_hooks(plugins.clone());
        }
        let started = Instant::now();
        runtime
            .start(&agent, &format!("run-{round}"), 0, "go")
            .await
            .expect("run");
        times.push(started.elapsed() / u32::try_from(STEPS).expect("steps"));
    }
    median(times)
}

async fn hook_overhead(host: &PluginHost, events: &Arc<EventLog>) {
    let guard_manifest = std::fs::read_to_string(
        Path::new(cordon_test_artifacts::PLUGINS_DIR).join("guard/plugin.toml"),
    )
    .expect("guard manifest")
    .replace("guard.wasm", "hook.wasm");
    let (_plain_dir, plain) = load(host, events, &[]).await;
    let (_allow_dir, allowing) = load(
        host,
        events,
        &[("allow", ALLOWING_HOOK, cordon_test_artifacts::HOSTILE_HOOKS)],
    )
    .await;
    let (_guard_dir, guarded) = load(
        host,
        events,
        &[("guard", &guard_manifest, cordon_test_artifacts::GUARD)],
    )
    .await;
    let without = step_time(&plain, events, false).await;
    for (name, plugins) in [
        ("minimal allowing hook", &allowing),
        ("bundled guard", &guarded),
    ] {
        let with = step_time(plugins, events, true).await;
        println!(
            "before-tool-call hook ({name}): {:.1} us per step with one call vs {:.1} us without hooks; hook overhead {:.1} us per call; with/without = {:.2}",
            us(with),
            us(without),
            us(with.saturating_sub(without)),
            with.as_secs_f64() / without.as_secs_f64()
        );
    }
}

fn script(steps: usize) -> ScriptedModel {
    let mut text = String::new();
    for step in 0..steps {
        text.push_str(&format!(
            "[[turn]]\n[[turn.call]]\ntool = \"hostile.echo\"\nargs = {{ step = {step} }}\n"
        ));
    }
    text.push_str("[[turn]]\ntext = \"done\"\n");
    ScriptedModel::parse(Path::new("bench.toml"), &text).expect("script")
}

async fn loop_overhead(plugins: &Arc<Plugins>, events: &Arc<EventLog>) {
    let agent = bench_agent();
    let mut loop_times = Vec::new();
    let mut direct_times = Vec::new();
    for round in 0..7 {
        let runtime = Runtime::new(
            Arc::new(script(STEPS)),
            plugins.clone(),
            Arc::new(MemoryCommitStore::new()),
            events.clone(),
        );
        let started = Instant::now();
        runtime
            .start(&agent, &format!("run-{round}"), 0, "go")
            .await
            .expect("run");
        loop_times.push(started.elapsed() / u32::try_from(STEPS).expect("steps"));

        direct_times.push(direct_round(plugins).await);
    }
    let per_step = median(loop_times);
    let per_call = median(direct_times);
    println!(
        "loop step (scripted model, one hostile.echo call, in-memory commits): {:.1} us; \
         the call alone {:.1} us; loop overhead {:.1} us per step; step/call = {:.2}",
        us(per_step),
        us(per_call),
        us(per_step.saturating_sub(per_call)),
        per_step.as_secs_f64() / per_call.as_secs_f64()
    );
}

async fn commit_throughput() {
    let dir = tempfile::tempdir().expect("dir");
    let store = SqliteCommitStore::open(dir.path().join("bench.db")).expect("store");
    store
        .create_run(&RunHeader {
            run_id: "r".into(),
            agent: "bench".into(),
            created: 0,
            thread: cordon_kernel::DEFAULT_THREAD.into(),
            metadata: Default::default(),
            parent: None,
        })
        .await
        .expect("run");
    let commits: Vec<StepCommit> = (1..=300)
        .map(|seq| StepCommit {
            run_id: "r".into(),
            seq,
            messages: vec![Message::User {
                text: format!("step {seq}: {}", "x".repeat(200)),
            }],
            tools: Vec::new(),
            state: Vec::new(),
            thread_state: Vec::new(),
            events: Vec::new(),
            skills: Vec::new(),
            disposition: Disposition::Running,
            continues: None,
            usage: None,
            files: Vec::new(),
        })
        .collect();
    let started = Instant::now();
    for commit in &commits {
        store
            .commit(commit, Durability::Disk)
            .await
            .expect("commit");
    }
    let store_rate = commits.len() as f64 / started.elapsed().as_secs_f64();

    let bare = rusqlite::Connection::open(dir.path().join("bare.db")).expect("bare");
    bare.pragma_update(None, "journal_mode", "WAL")
        .expect("wal");
    bare.pragma_update(None, "synchronous", "FULL")
        .expect("sync");
    bare.execute_batch(
        "CREATE TABLE steps (run_id TEXT, seq INTEGER, body TEXT, PRIMARY KEY (run_id, seq))",
    )
    .expect("table");
    let bodies: Vec<String> = commits
        .iter()
        .map(|commit| serde_json::to_string(commit).expect("json"))
        .collect();
    let started = Instant::now();
    for (index, body) in bodies.iter().enumerate() {
        bare.execute(
            "INSERT INTO steps (run_id, seq, body) VALUES ('r', ?1, ?2)",
            rusqlite::params![index as i64 + 1, body],
        )
        .expect("insert");
    }
    let bare_rate = bodies.len() as f64 / started.elapsed().as_secs_f64();
    println!(
        "SQLite step commits (WAL, synchronous=FULL): {store_rate:.0}/s; bare rusqlite insert of the same bytes: {bare_rate:.0}/s; store/bare = {:.2}",
        store_rate / bare_rate
    );
}

/// Median time of a served request calling `hostile.echo` once, committed to
/// `store` as far as `durability`, over rounds of [`STEPS`] requests.
async fn served_time(
    plugins: &Arc<Plugins>,
    events: &Arc<EventLog>,
    store: Arc<dyn CommitStore>,
    durability: Durability,
) -> Duration {
    let runtime =
        Runtime::for_requests(plugins.clone(), store, events.clone()).with_commits(durability);
    let served = ServedRun::open(runtime, &bench_agent(), "default", "served", 0)
        .await
        .expect("served run");
    let requester = Requester::default();
    let mut times = Vec::new();
    for round in 0..7 {
        let started = Instant::now();
        for step in 0..STEPS {
            let call = ToolCall {
                id: format!("call-{round}-{step}"),
                name: "hostile.echo".into(),
                args: json!({ "step": step }),
            };
            let served = served
                .call(vec![call], &DeferApprovals, Unanswered::Deny, &requester)
                .await
                .expect("served request");
            assert!(matches!(served, Served::Committed { .. }));
        }
        times.push(started.elapsed() / u32::try_from(STEPS).expect("steps"));
    }
    median(times)
}

async fn served_overhead(plugins: &Arc<Plugins>, events: &Arc<EventLog>) {
    let mut direct_times = Vec::new();
    for _ in 0..7 {
        direct_times.push(direct_round(plugins).await);
    }
    let per_call = median(direct_times);
    let dir = tempfile::tempdir().expect("dir");
    let stores: [(Arc<dyn CommitStore>, Durability, &str); 3] = [
        (
            Arc::new(MemoryCommitStore::new()),
            Durability::Process,
            "in memory",
        ),
        (
            Arc::new(SqliteCommitStore::open(dir.path().join("process.db")).expect("store")),
            Durability::Process,
            "SQLite, reaching the process",
        ),
        (
            Arc::new(SqliteCommitStore::open(dir.path().join("disk.db")).expect("store")),
            Durability::Disk,
            "SQLite, on disk",
        ),
    ];
    for (store, durability, name) in stores {
        let per_request = served_time(plugins, events, store, durability).await;
        println!(
            "served request (one hostile.echo call, commits {name}): {:.1} us; \
             the call alone {:.1} us; request/call = {:.2}",
            us(per_request),
            us(per_call),
            per_request.as_secs_f64() / per_call.as_secs_f64()
        );
    }
}

/// Time per call of [`STEPS`] direct calls of `hostile.echo`, one after another.
async fn direct_round(plugins: &Plugins) -> Duration {
    let started = Instant::now();
    for step in 0..STEPS {
        let state = Arc::new(StateSnapshot::default());
        let outcome = plugins
            .call(
                "hostile.echo",
                json!({ "step": step }),
                CallContext::outside_run(state),
            )
            .await;
        outcome.result.expect("direct call");
    }
    started.elapsed() / u32::try_from(STEPS).expect("steps")
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn us(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// Resolves every sub-agent's model to a script that answers at once.
struct Answering;

impl ModelResolver for Answering {
    fn resolve(
        &self,
        _spec: &str,
        _settings: &ModelSettings,
        _dir: &Path,
    ) -> Result<Arc<dyn ModelProvider>, String> {
        ScriptedModel::parse(Path::new("answer.toml"), "[[turn]]\ntext = \"ok\"\n")
            .map(|model| Arc::new(model) as Arc<dyn ModelProvider>)
            .map_err(|error| error.to_string())
    }
}

/// [`STEPS`] steps each calling `tool`, then an answer.
fn calling(tool: &str) -> ScriptedModel {
    let mut text = String::new();
    for step in 0..STEPS {
        text.push_str(&format!(
            "[[turn]]\n[[turn.call]]\ntool = \"{tool}\"\nargs = {{ task = \"step {step}\" }}\n"
        ));
    }
    text.push_str("[[turn]]\ntext = \"done\"\n");
    ScriptedModel::parse(Path::new("bench.toml"), &text).expect("script")
}

/// Median time per step of `agent`'s runs calling `tool` each step, with
/// commits in `store()`.
async fn delegating_step(
    plugins: &Arc<Plugins>,
    events: &Arc<EventLog>,
    agent: &AgentDef,
    tool: &str,
    store: &dyn Fn(&str, usize) -> Arc<dyn CommitStore>,
) -> Duration {
    let mut times = Vec::new();
    for round in 0..7 {
        let runtime = Runtime::new(
            Arc::new(calling(tool)),
            plugins.clone(),
            store(tool, round),
            events.clone(),
        )
        .with_models(Arc::new(Answering));
        let started = Instant::now();
        let outcome = runtime
            .start(agent, &format!("run-{round}"), 0, "go")
            .await
            .expect("run");
        assert!(
            matches!(
                outcome,
                cordon_kernel::RunOutcome::Ended {
                    cause: cordon_kernel::EndCause::FinalAnswer,
                    ..
                }
            ),
            "{outcome:?}"
        );
        times.push(started.elapsed() / u32::try_from(STEPS).expect("steps"));
    }
    median(times)
}

async fn delegation_overhead(plugins: &Arc<Plugins>, events: &Arc<EventLog>) {
    let agent = AgentDef::parse(
        "bench.toml",
        &format!(
            "name = \"bench\"\nmax-steps = {}\n[permissions]\ndefault = \"allow\"\n\
             [delegation]\nmax-child-runs = {}\n\
             [agents.echo]\ndescription = \"Answers at once.\"\nmodel = \"answer\"\n",
            STEPS + 2,
            STEPS + 1
        ),
    )
    .expect("agent");
    let dir = tempfile::tempdir().expect("dir");
    let memory =
        |_tool: &str, _round: usize| Arc::new(MemoryCommitStore::new()) as Arc<dyn CommitStore>;
    let sqlite = |tool: &str, round: usize| {
        Arc::new(
            SqliteCommitStore::open(dir.path().join(format!("{tool}-{round}.db"))).expect("store"),
        ) as Arc<dyn CommitStore>
    };
    for (name, store) in [
        (
            "in-memory commits",
            &memory as &dyn Fn(&str, usize) -> Arc<dyn CommitStore>,
        ),
        ("SQLite commits on disk", &sqlite),
    ] {
        let plain = delegating_step(plugins, events, &agent, "hostile.echo", store).await;
        let delegated = delegating_step(plugins, events, &agent, "agent.echo", store).await;
        println!(
            "delegation ({name}): a step delegating to a sub-agent that answers in one step {:.1} us; \
             a step with one hostile.echo call {:.1} us; delegation costs {:.1} us more; delegating/plain = {:.2}",
            us(delegated),
            us(plain),
            us(delegated.saturating_sub(plain)),
            delegated.as_secs_f64() / plain.as_secs_f64()
        );
    }
}
