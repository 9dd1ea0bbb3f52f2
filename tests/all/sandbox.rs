//! Hostile components try what their bundle was not granted. Each attempt must be
//! refused with a typed error, leave an audit event naming the bundle, the
//! capability and the target, and leave the host able to serve the next call.

use std::path::Path;

use std::sync::Arc;

use cordon_kernel::{
    Capability, Denial, Event, LimitKind, MemoryStateStore, StateReader, ToolErrorKind,
    call_committed,
};
use cordon_tests::{Fixture, Loaded, artifacts, manifest};
use serde_json::{Value, json};

async fn hostile(extra: &str) -> (Fixture, Loaded) {
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest("hostile", extra),
        Path::new(artifacts::HOSTILE),
    );
    let loaded = fixture.load().await;
    (fixture, loaded)
}

async fn error_kind(loaded: &Loaded, tool: &str, args: Value) -> (ToolErrorKind, String) {
    let error = loaded
        .call(tool, args)
        .await
        .expect_err("the hostile call must fail");
    (error.kind, error.message)
}

/// After any refusal the same plugins still serve a benign call.
async fn assert_still_serves(loaded: &Loaded) {
    let output = loaded
        .call("hostile.echo", json!({"still": "alive"}))
        .await
        .expect("a benign call after a refused one");
    assert_eq!(output.content, json!({"still": "alive"}));
}

fn denials_of(loaded: &Loaded, capability: Capability) -> Vec<Denial> {
    loaded
        .events
        .denials()
        .into_iter()
        .filter(|denial| denial.capability == capability)
        .collect()
}

fn fs_denial_targets(loaded: &Loaded) -> Vec<String> {
    denials_of(loaded, Capability::Filesystem)
        .into_iter()
        .map(|denial| {
            assert_eq!(denial.bundle, "hostile");
            denial.target
        })
        .collect()
}

fn limit_events(loaded: &Loaded) -> Vec<LimitKind> {
    loaded
        .events
        .snapshot()
        .into_iter()
        .filter_map(|event| match event {
            Event::LimitExceeded { limit, bundle, .. } => {
                assert_eq!(bundle, "hostile");
                Some(limit)
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_file_outside_every_grant_cannot_be_read() {
    let (_fixture, loaded) = hostile("").await;
    let (kind, message) =
        error_kind(&loaded, "hostile.read-file", json!({"path": "/etc/passwd"})).await;
    assert_eq!(kind, ToolErrorKind::Failed);
    assert!(!message.contains("root:"), "{message}");
    let (kind, _) = error_kind(&loaded, "hostile.list-dir", json!({"path": "/"})).await;
    assert_eq!(kind, ToolErrorKind::Failed);
    assert_still_serves(&loaded).await;
}

const DATA_RO: &str = "[[grants.dirs]]\nhost = \"inner\"\nguest = \"/data\"\nmode = \"ro\"\n";
const DATA_RW: &str = "[[grants.dirs]]\nhost = \"inner\"\nguest = \"/data\"\nmode = \"rw\"\n";

fn workspace_with_secret(fixture: &Fixture) {
    let root = fixture.workspace.path();
    std::fs::create_dir_all(root.join("inner")).unwrap();
    std::fs::write(root.join("inner/ok.txt"), "granted content").unwrap();
    std::fs::write(root.join("secret.txt"), "top secret").unwrap();
}

async fn hostile_with_data(grant: &str) -> (Fixture, Loaded) {
    let fixture = Fixture::new();
    workspace_with_secret(&fixture);
    fixture.bundle(
        "hostile",
        &manifest("hostile", grant),
        Path::new(artifacts::HOSTILE),
    );
    let loaded = fixture.load().await;
    (fixture, loaded)
}

#[tokio::test]
async fn a_granted_directory_is_readable_and_nothing_beside_it() {
    let (_fixture, loaded) = hostile_with_data(DATA_RO).await;
    let output = loaded
        .call("hostile.read-file", json!({"path": "/data/ok.txt"}))
        .await
        .expect("granted file is readable");
    assert_eq!(output.content["content"], "granted content");
    for path in [
        "/data/../secret.txt",
        "/data/../../secret.txt",
        "/secret.txt",
    ] {
        let (kind, message) =
            error_kind(&loaded, "hostile.read-file", json!({ "path": path })).await;
        assert_eq!(kind, ToolErrorKind::Failed, "{path}");
        assert!(!message.contains("top secret"), "{path}: {message}");
    }
    // The two escapes through the grant reach the host and are audited; the
    // absolute path matches no grant and fails inside the guest.
    assert_eq!(
        fs_denial_targets(&loaded),
        ["../secret.txt", "../../secret.txt"]
    );
    assert_still_serves(&loaded).await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_planted_in_a_granted_directory_does_not_lead_out() {
    let fixture = Fixture::new();
    workspace_with_secret(&fixture);
    let root = fixture.workspace.path();
    std::os::unix::fs::symlink(root.join("secret.txt"), root.join("inner/abs-link")).unwrap();
    std::os::unix::fs::symlink("../secret.txt", root.join("inner/rel-link")).unwrap();
    std::os::unix::fs::symlink("/etc", root.join("inner/etc")).unwrap();
    fixture.bundle(
        "hostile",
        &manifest("hostile", DATA_RW),
        Path::new(artifacts::HOSTILE),
    );
    let loaded = fixture.load().await;
    for path in ["/data/abs-link", "/data/rel-link", "/data/etc/passwd"] {
        let (kind, message) =
            error_kind(&loaded, "hostile.read-file", json!({ "path": path })).await;
        assert_eq!(kind, ToolErrorKind::Failed, "{path}");
        assert!(
            !message.contains("top secret") && !message.contains("root:"),
            "{message}"
        );
    }
    let (kind, _) = error_kind(
        &loaded,
        "hostile.write-file",
        json!({"path": "/data/rel-link", "content": "overwritten"}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Failed);
    assert_eq!(
        std::fs::read_to_string(root.join("secret.txt")).unwrap(),
        "top secret"
    );
    let targets = fs_denial_targets(&loaded);
    for link in ["abs-link", "rel-link", "etc/passwd"] {
        assert!(
            targets.iter().any(|target| target == link),
            "{link} audited: {targets:?}"
        );
    }
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn a_read_only_directory_refuses_writes_and_a_read_write_one_accepts_them() {
    let (fixture, loaded) = hostile_with_data(DATA_RO).await;
    let (kind, _) = error_kind(
        &loaded,
        "hostile.write-file",
        json!({"path": "/data/new.txt", "content": "x"}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Failed);
    let (kind, _) = error_kind(
        &loaded,
        "hostile.write-file",
        json!({"path": "/data/ok.txt", "content": "changed"}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Failed);
    assert_eq!(fs_denial_targets(&loaded), ["new.txt", "ok.txt"]);
    let inner = fixture.workspace.path().join("inner");
    assert!(!inner.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(inner.join("ok.txt")).unwrap(),
        "granted content"
    );

    let (fixture, loaded) = hostile_with_data(DATA_RW).await;
    loaded
        .call(
            "hostile.write-file",
            json!({"path": "/data/new.txt", "content": "x"}),
        )
        .await
        .expect("a read-write grant allows writing");
    let written = fixture.workspace.path().join("inner/new.txt");
    assert_eq!(std::fs::read_to_string(written).unwrap(), "x");
}

#[tokio::test]
async fn environment_variables_are_invisible_unless_granted() {
    // SAFETY: the variables are unique to this test and only ever set, never
    // removed, so concurrent readers see either nothing or the final value.
    unsafe {
        std::env::set_var("CORDON_TEST_HIDDEN_SECRET", "hidden");
        std::env::set_var("CORDON_TEST_GRANTED_VALUE", "granted");
    }
    let (_fixture, loaded) = hostile("").await;
    let output = loaded
        .call("hostile.env", json!({"name": "CORDON_TEST_HIDDEN_SECRET"}))
        .await
        .unwrap();
    assert_eq!(output.content["value"], Value::Null);
    assert_eq!(output.content["all"], json!([]), "no variable at all leaks");

    let (_fixture, loaded) = hostile("[grants]\nenv = [\"CORDON_TEST_GRANTED_VALUE\"]\n").await;
    let output = loaded
        .call("hostile.env", json!({"name": "CORDON_TEST_HIDDEN_SECRET"}))
        .await
        .unwrap();
    assert_eq!(output.content["value"], Value::Null);
    assert_eq!(
        output.content["all"],
        json!([["CORDON_TEST_GRANTED_VALUE", "granted"]])
    );
}

#[tokio::test]
async fn opening_a_socket_is_refused_and_audited() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (_fixture, loaded) = hostile("").await;
    let (kind, _) = error_kind(&loaded, "hostile.connect", json!({ "addr": addr })).await;
    assert_eq!(kind, ToolErrorKind::Failed);
    let denials = denials_of(&loaded, Capability::Network);
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert_eq!(denials[0].bundle, "hostile");
    assert_eq!(denials[0].target, addr);
    assert_eq!(
        listener.accept().map_err(|error| error.kind()).err(),
        Some(std::io::ErrorKind::WouldBlock),
        "no connection may reach the listener"
    );
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn an_undeclared_state_key_can_be_neither_written_nor_read() {
    let (_fixture, loaded) =
        hostile("[grants.state]\nread = [\"visible\"]\nwrite = [\"mine\"]\n").await;
    let (kind, message) = error_kind(
        &loaded,
        "hostile.state-write",
        json!({"key": "other", "value": 1}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Denied, "{message}");
    let (kind, _) = error_kind(
        &loaded,
        "hostile.state-write",
        json!({"key": "visible", "value": 1}),
    )
    .await;
    assert_eq!(
        kind,
        ToolErrorKind::Denied,
        "a read grant does not allow writing"
    );
    let (kind, _) = error_kind(&loaded, "hostile.state-read", json!({"key": "mine"})).await;
    assert_eq!(
        kind,
        ToolErrorKind::Denied,
        "a write grant does not allow reading"
    );
    let (kind, _) = error_kind(&loaded, "hostile.state-read", json!({"key": "secret"})).await;
    assert_eq!(kind, ToolErrorKind::Denied);

    let writes: Vec<String> = denials_of(&loaded, Capability::StateWrite)
        .into_iter()
        .map(|denial| denial.target)
        .collect();
    assert_eq!(writes, ["other", "visible"]);
    let reads: Vec<String> = denials_of(&loaded, Capability::StateRead)
        .into_iter()
        .map(|denial| denial.target)
        .collect();
    assert_eq!(reads, ["mine", "secret"]);
    assert!(loaded.state.snapshot().is_empty(), "nothing was committed");

    loaded
        .call(
            "hostile.state-write",
            json!({"key": "mine", "value": {"ok": true}}),
        )
        .await
        .expect("a declared key is writable");
    assert_eq!(loaded.state.get("mine").unwrap(), Some(json!({"ok": true})));
}

#[tokio::test]
async fn calling_an_undeclared_tool_is_refused_and_a_declared_one_works() {
    let (_fixture, loaded) = hostile("[grants]\ntools = [\"hostile.echo\"]\n").await;
    let (kind, _) = error_kind(
        &loaded,
        "hostile.call-tool",
        json!({"name": "hostile.read-file", "args": {"path": "/etc/passwd"}}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Denied);
    let denials = denials_of(&loaded, Capability::ToolCall);
    assert_eq!(denials.len(), 1);
    assert_eq!(denials[0].target, "hostile.read-file");

    let output = loaded
        .call(
            "hostile.call-tool",
            json!({"name": "hostile.echo", "args": {"via": "host"}}),
        )
        .await
        .expect("a declared tool is callable");
    assert_eq!(output.content, json!({"via": "host"}));
}

#[tokio::test]
async fn a_tool_calling_itself_stops_at_the_depth_limit() {
    let (_fixture, loaded) = hostile("[grants]\ntools = [\"hostile.recurse\"]\n").await;
    let (kind, message) = error_kind(&loaded, "hostile.recurse", json!({})).await;
    assert_eq!(kind, ToolErrorKind::Failed);
    assert!(message.contains("nest deeper"), "{message}");
    assert_eq!(limit_events(&loaded), [LimitKind::CallDepth]);
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn an_endless_loop_is_stopped_by_the_timeout() {
    let (_fixture, loaded) = hostile("[limits]\ntimeout-ms = 300\nfuel = 1000000000000\n").await;
    let (kind, _) = error_kind(&loaded, "hostile.loop", json!({})).await;
    assert_eq!(kind, ToolErrorKind::Timeout);
    assert_eq!(limit_events(&loaded), [LimitKind::Timeout]);
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn an_endless_loop_is_stopped_by_fuel() {
    let (_fixture, loaded) = hostile("[limits]\nfuel = 50000000\ntimeout-ms = 60000\n").await;
    let (kind, message) = error_kind(&loaded, "hostile.loop", json!({})).await;
    assert_eq!(kind, ToolErrorKind::Limit, "{message}");
    assert_eq!(limit_events(&loaded), [LimitKind::Fuel]);
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn waiting_on_the_host_is_stopped_by_the_wall_clock() {
    let (_fixture, loaded) = hostile("[limits]\ntimeout-ms = 200\n").await;
    let (kind, _) = error_kind(&loaded, "hostile.sleep", json!({"ms": 600000})).await;
    assert_eq!(kind, ToolErrorKind::Timeout);
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn unbounded_allocation_hits_the_memory_limit() {
    let (_fixture, loaded) = hostile("[limits]\nmemory-mib = 16\n").await;
    let (kind, message) = error_kind(&loaded, "hostile.alloc", json!({})).await;
    assert_eq!(kind, ToolErrorKind::Limit, "{message}");
    assert!(message.contains("memory"), "{message}");
    assert_eq!(limit_events(&loaded), [LimitKind::Memory]);
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn printing_without_end_hits_the_log_limit() {
    let (_fixture, loaded) = hostile("[limits]\nlog-kib = 4\n").await;
    let (kind, message) = error_kind(&loaded, "hostile.print", json!({})).await;
    assert_eq!(kind, ToolErrorKind::Limit, "{message}");
    assert_eq!(limit_events(&loaded), [LimitKind::Log]);
    let printed: usize = loaded
        .events
        .snapshot()
        .iter()
        .filter_map(|event| match event {
            Event::Log { message, .. } => Some(message.len()),
            _ => None,
        })
        .sum();
    assert!(
        printed <= 8 << 10,
        "captured output stays bounded: {printed}"
    );
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn logging_without_end_hits_the_log_limit() {
    let (_fixture, loaded) = hostile("[limits]\nlog-kib = 4\n").await;
    let (kind, message) = error_kind(&loaded, "hostile.log-flood", json!({})).await;
    assert_eq!(kind, ToolErrorKind::Limit, "{message}");
    assert_eq!(limit_events(&loaded), [LimitKind::Log]);
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn a_trap_and_a_panic_are_crashes_with_their_cause() {
    let (_fixture, loaded) = hostile("").await;
    let (kind, _) = error_kind(&loaded, "hostile.trap", json!({})).await;
    assert_eq!(kind, ToolErrorKind::Crashed);
    let (kind, message) = error_kind(&loaded, "hostile.panic", json!({})).await;
    assert_eq!(kind, ToolErrorKind::Crashed);
    assert!(message.contains("hostile panic"), "{message}");
    assert_still_serves(&loaded).await;
}

#[tokio::test]
async fn output_larger_than_the_limit_is_refused() {
    let (_fixture, loaded) = hostile("[limits]\noutput-kib = 1\n").await;
    let output = loaded
        .call("hostile.big-output", json!({"bytes": 100}))
        .await
        .expect("small output passes");
    assert_eq!(output.content.as_str().map(str::len), Some(100));
    let (kind, _) = error_kind(&loaded, "hostile.big-output", json!({"bytes": 4096})).await;
    assert_eq!(kind, ToolErrorKind::Limit);
    assert_eq!(limit_events(&loaded), [LimitKind::Output]);
}

#[tokio::test]
async fn arguments_that_violate_the_schema_never_reach_the_component() {
    let (_fixture, loaded) = hostile("").await;
    let (kind, message) = error_kind(&loaded, "hostile.sleep", json!({"ms": "forever"})).await;
    assert_eq!(kind, ToolErrorKind::InvalidInput);
    assert!(message.contains("/ms"), "{message}");
    let (kind, _) = error_kind(&loaded, "hostile.sleep", json!({})).await;
    assert_eq!(kind, ToolErrorKind::InvalidInput);
    let (kind, _) = error_kind(&loaded, "hostile.nonexistent", json!({})).await;
    assert_eq!(kind, ToolErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_each_get_their_own_instance() {
    let (_fixture, loaded) = hostile("").await;
    let handles: Vec<_> = (0..12)
        .map(|n| {
            let plugins = loaded.plugins.clone();
            tokio::spawn(async move {
                let state = Arc::new(MemoryStateStore::new());
                call_committed(&plugins, state, "hostile.echo", json!({ "n": n })).await
            })
        })
        .collect();
    for (n, handle) in handles.into_iter().enumerate() {
        let output = handle.await.expect("join").expect("concurrent call");
        assert_eq!(output.content, json!({ "n": n }));
    }
}

#[tokio::test]
async fn no_memory_survives_from_one_call_to_the_next() {
    let (_fixture, loaded) = hostile("").await;
    for _ in 0..3 {
        let output = loaded.call("hostile.counter", json!({})).await.unwrap();
        assert_eq!(output.content, json!({"calls": 1}));
    }
    // The slot an instance leaves is reused, its first MiB kept resident:
    // every page the last call marked, inside that MiB and beyond it, reads
    // as zero again.
    for _ in 0..3 {
        let output = loaded.call("hostile.scratch", json!({})).await.unwrap();
        assert_eq!(output.content, json!({"left": 0}));
    }
}

#[tokio::test]
async fn a_call_that_fails_or_traps_after_writing_state_commits_nothing() {
    let (_fixture, loaded) = hostile("[grants.state]\nread = [\"k\"]\nwrite = [\"k\"]\n").await;
    let (kind, _) = error_kind(
        &loaded,
        "hostile.write-then-fail",
        json!({"key": "k", "value": 1}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Failed);
    let (kind, message) = error_kind(
        &loaded,
        "hostile.write-then-trap",
        json!({"key": "k", "value": 2}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Crashed);
    assert!(message.contains("trapped after writing"), "{message}");
    assert_eq!(loaded.state.get("k").unwrap(), None);
    loaded
        .call("hostile.state-write", json!({"key": "k", "value": 3}))
        .await
        .unwrap();
    assert_eq!(loaded.state.get("k").unwrap(), Some(json!(3)));
}

#[tokio::test]
async fn a_nested_call_commits_its_writes_with_its_caller() {
    let (_fixture, loaded) = hostile(
        "[grants]\ntools = [\"hostile.state-write\", \"hostile.write-then-fail\"]\n[grants.state]\nread = [\"k\"]\nwrite = [\"k\"]\n",
    )
    .await;
    loaded
        .call(
            "hostile.call-tool",
            json!({"name": "hostile.state-write", "args": {"key": "k", "value": "nested"}}),
        )
        .await
        .unwrap();
    assert_eq!(loaded.state.get("k").unwrap(), Some(json!("nested")));
    let (kind, _) = error_kind(
        &loaded,
        "hostile.call-tool",
        json!({"name": "hostile.write-then-fail", "args": {"key": "k", "value": "lost"}}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Failed);
    assert_eq!(loaded.state.get("k").unwrap(), Some(json!("nested")));
}

#[tokio::test]
async fn incrementing_reveals_the_count_so_it_needs_both_grants() {
    let (_fixture, loaded) =
        hostile("[grants.state]\nread = [\"both\", \"seen\"]\nwrite = [\"both\", \"blind\"]\n")
            .await;
    for key in ["blind", "seen"] {
        let (kind, _) = error_kind(&loaded, "hostile.state-increment", json!({ "key": key })).await;
        assert_eq!(kind, ToolErrorKind::Denied, "{key}");
    }
    let output = loaded
        .call("hostile.state-increment", json!({"key": "both"}))
        .await
        .unwrap();
    assert_eq!(output.content, json!({"value": 1}));
    assert_eq!(loaded.state.get("both").unwrap(), Some(json!(1)));
    assert_eq!(loaded.state.get("blind").unwrap(), None);
    let refused: Vec<(Capability, String)> = loaded
        .events
        .denials()
        .into_iter()
        .map(|denial| (denial.capability, denial.target))
        .collect();
    assert_eq!(
        refused,
        [
            (Capability::StateRead, "blind".to_owned()),
            (Capability::StateWrite, "seen".to_owned())
        ]
    );
}

#[tokio::test]
async fn many_more_concurrent_calls_than_instance_slots_all_succeed() {
    // The test host's pool holds 16 instances.
    let (_fixture, loaded) = hostile("").await;
    let calls = (0..512).map(|index| loaded.call("hostile.echo", json!({ "n": index })));
    let outcomes = futures_util::future::join_all(calls).await;
    for (index, outcome) in outcomes.into_iter().enumerate() {
        let output = outcome.unwrap_or_else(|error| panic!("call {index}: {error}"));
        assert_eq!(output.content, json!({ "n": index }));
    }
    assert!(limit_events(&loaded).is_empty());
}

#[tokio::test]
async fn on_one_thread_finished_instances_free_their_slots_once_it_yields() {
    // `#[tokio::test]` runs on a current-thread runtime, as `cordon mcp`
    // does: a finished call's instance is parked, and dropped by the next
    // call to start or by the task that runs once the thread yields.
    let host = cordon_wasm::PluginHost::new(cordon_wasm::HostConfig {
        max_instances: 4,
        ..cordon_wasm::HostConfig::default()
    })
    .unwrap();
    let pool = host.pool();
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest("hostile", ""),
        Path::new(artifacts::HOSTILE),
    );
    let loaded = fixture
        .load_on(host, cordon_wasm::Safeguards::default())
        .await;
    let freed = || async {
        for _ in 0..10 {
            if pool.held() == 0 {
                return true;
            }
            tokio::task::yield_now().await;
        }
        false
    };
    let burst = (0..64).map(|index| loaded.call("hostile.echo", json!({ "n": index })));
    for (index, outcome) in futures_util::future::join_all(burst)
        .await
        .into_iter()
        .enumerate()
    {
        assert_eq!(outcome.unwrap().content, json!({ "n": index }));
    }
    assert!(
        freed().await,
        "{} slots still held after the burst",
        pool.held()
    );
    for index in 0..20 {
        loaded
            .call("hostile.echo", json!({ "n": index }))
            .await
            .unwrap();
        assert!(pool.held() <= 1, "call {index}: {} slots held", pool.held());
    }
    assert!(
        freed().await,
        "{} slots still held after the calls",
        pool.held()
    );
}

/// `fixture`'s bundles loaded on a host whose instance pool has one slot.
async fn on_one_slot(fixture: &Fixture) -> Loaded {
    let host = cordon_wasm::PluginHost::new(cordon_wasm::HostConfig {
        max_instances: 1,
        ..cordon_wasm::HostConfig::default()
    })
    .unwrap();
    fixture
        .load_on(host, cordon_wasm::Safeguards::default())
        .await
}

#[tokio::test]
async fn a_call_waits_for_a_free_slot_and_fails_as_a_limit_naming_the_pool_when_none_frees() {
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest("hostile", "[limits]\ntimeout-ms = 3000\n"),
        Path::new(artifacts::HOSTILE),
    );
    fixture.bundle(
        "jq",
        &manifest("jq", "[limits]\ntimeout-ms = 200\n"),
        Path::new(artifacts::JQ),
    );
    let loaded = on_one_slot(&fixture).await;
    // One call holds the only slot for a second and a half. A call of the
    // same bundle (3 s to spare) waits for it and runs; a `jq` call, whose
    // bundle allows 200 ms, gives up waiting.
    let holder = loaded.call("hostile.sleep", json!({"ms": 1500}));
    let later = |tool: &'static str, args: Value| {
        let loaded = &loaded;
        async move {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            loaded.call(tool, args).await
        }
    };
    let (held, waited, refused) = tokio::join!(
        holder,
        later("hostile.echo", json!({"waited": true})),
        later("jq.query", json!({"filter": ".", "input": 1})),
    );
    assert!(held.is_ok(), "{held:?}");
    assert_eq!(waited.unwrap().content, json!({"waited": true}));
    let refused = refused.unwrap_err();
    assert_eq!(refused.kind, ToolErrorKind::Limit, "{refused}");
    assert!(
        refused.message.contains("all 1 slots") && refused.message.contains("--max-instances"),
        "{refused}"
    );
    let pool_limits: Vec<Event> = loaded
        .events
        .snapshot()
        .into_iter()
        .filter(|event| matches!(event, Event::LimitExceeded { limit: LimitKind::Instances, bundle, .. } if bundle == "jq"))
        .collect();
    assert_eq!(pool_limits.len(), 1, "{pool_limits:?}");
    let again = loaded
        .call("jq.query", json!({"filter": ".", "input": 2}))
        .await
        .expect("the pool serves again once free");
    assert_eq!(again.content, json!([2]));
}

/// An instance is taken down after its call has answered; the slot it held
/// is free again before the next call needs it.
#[tokio::test]
async fn a_pool_of_one_slot_serves_calls_one_after_another() {
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile",
        &manifest("hostile", "[limits]\ntimeout-ms = 200\n"),
        Path::new(artifacts::HOSTILE),
    );
    let loaded = on_one_slot(&fixture).await;
    for n in 0..20 {
        let answer = loaded
            .call("hostile.echo", json!({ "n": n }))
            .await
            .unwrap_or_else(|error| panic!("call {n}: {error}"));
        assert_eq!(answer.content, json!({ "n": n }));
    }
}

#[tokio::test]
async fn a_call_cancelled_before_it_starts_never_runs_and_one_cancelled_while_it_runs_stops() {
    use cordon_kernel::{CallContext, StateSnapshot, ToolSet};
    let (_fixture, loaded) = hostile("").await;
    let context = || CallContext::outside_run(Arc::new(StateSnapshot::default()));
    let kind =
        |outcome: cordon_kernel::ToolCallOutcome| outcome.result.err().map(|error| error.kind);

    // An echo ends at once: cancelled first, it is refused all the same.
    let cancelled = context();
    cancelled.cancel.cancel();
    let outcome = loaded
        .plugins
        .call("hostile.echo", json!({"said": "never"}), cancelled)
        .await;
    assert!(outcome.writes.is_empty() && outcome.files.is_empty());
    assert_eq!(kind(outcome), Some(ToolErrorKind::Cancelled));

    let running = context();
    let cancel = running.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let started = std::time::Instant::now();
    let outcome = loaded
        .plugins
        .call("hostile.sleep", json!({"ms": 4000}), running)
        .await;
    assert_eq!(kind(outcome), Some(ToolErrorKind::Cancelled));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "stopped at once, not when it ended: {:?}",
        started.elapsed()
    );
    assert_still_serves(&loaded).await;
}
