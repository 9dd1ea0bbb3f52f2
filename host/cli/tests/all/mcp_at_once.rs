//! `cordon mcp --http` serving many clients at once: a long call holds up
//! no other, each client hears only its own call's progress, and a server
//! killed in the middle of a burst keeps every call it answered, once. The
//! kill leaves the machine's page cache, so that test shows the commits are
//! whole and made once; that each reached the disk before its answer is the
//! store's own tests' to show (`host/store/src/sqlite.rs`).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cordon_test_artifacts as artifacts;
use serde_json::{Value, json};

use crate::support::mcp::{FIXTURES_MANIFEST, HttpServer, answer, messages};
use crate::support::{Project, text};

/// A project serving jq and the MCP fixtures, every call allowed.
fn project() -> Project {
    let project = Project::new();
    project.bundled("jq", artifacts::JQ);
    project.bundle("test", FIXTURES_MANIFEST, artifacts::MCP_FIXTURES);
    project.write(
        "permissions.toml",
        "default = \"deny\"\nallow = [\"jq.*\", \"test.*\"]\n",
    );
    project
}

/// A `tools/call` of `name` with `arguments` and, beside the era's own,
/// `meta` in its `_meta`.
fn call(name: &str, arguments: Value, meta: Value) -> Value {
    json!({"name": name, "arguments": arguments, "_meta": meta})
}

/// `cordon runs show --json` of every run the server served.
fn served_runs(project: &Project) -> Vec<Value> {
    let listed = text(&project.cordon(&["runs", "list"]).stdout);
    listed
        .split_whitespace()
        .filter(|word| word.starts_with("mcp-"))
        .map(|run_id| {
            let shown = project.cordon(&["runs", "show", run_id, "--json"]);
            assert!(shown.status.success(), "{}", text(&shown.stderr));
            serde_json::from_slice(&shown.stdout).unwrap()
        })
        .collect()
}

/// Every object in `value` that holds each of `keys`.
fn objects_with<'v>(value: &'v Value, keys: &[&str], found: &mut Vec<&'v Value>) {
    match value {
        Value::Object(map) => {
            if keys.iter().all(|key| map.contains_key(*key)) {
                found.push(value);
            }
            map.values()
                .for_each(|inner| objects_with(inner, keys, found));
        }
        Value::Array(items) => items
            .iter()
            .for_each(|inner| objects_with(inner, keys, found)),
        _ => {}
    }
}

#[test]
fn clients_calling_at_once_are_served_at_once_and_each_hears_only_its_own_progress() {
    let project = project();
    let server = HttpServer::start(&project, &[]);
    let quick = || {
        let answered = server.stateless(
            "tools/call",
            call(
                "jq_query",
                json!({"filter": ".n", "input": {"n": 1}}),
                json!({}),
            ),
            json!({}),
        );
        assert_eq!(answered["result"]["isError"], false, "{answered}");
    };
    quick();
    let (long_ended, quick_ended) = std::thread::scope(|scope| {
        let long = scope.spawn(|| {
            let answered = server.stateless(
                "tools/call",
                call("test_wait", json!({"ms": 3000}), json!({})),
                json!({}),
            );
            assert_eq!(answered["result"]["isError"], false, "{answered}");
            Instant::now()
        });
        // The long call is running; calls made now would have waited for
        // it while one request ran at a time.
        std::thread::sleep(Duration::from_millis(300));
        for _ in 0..10 {
            quick();
        }
        let quick_ended = Instant::now();
        (long.join().unwrap(), quick_ended)
    });
    assert!(
        quick_ended < long_ended,
        "the quick calls were answered only after the long call"
    );

    // Two calls at once, each reporting progress: each client hears its own.
    let heard: Vec<Vec<Value>> = std::thread::scope(|scope| {
        let waits: Vec<_> = ["left", "right"]
            .into_iter()
            .map(|token| {
                let server = &server;
                scope.spawn(move || {
                    let (_, response) = server
                        .try_stateless(
                            "tools/call",
                            call(
                                "test_wait",
                                json!({"ms": 600}),
                                json!({"progressToken": token}),
                            ),
                            json!({}),
                        )
                        .unwrap();
                    let answered = answer(&response).expect("answered");
                    assert_eq!(answered["result"]["isError"], false, "{answered}");
                    messages(&response)
                        .into_iter()
                        .filter(|message| message["method"] == "notifications/progress")
                        .map(|message| message["params"]["progressToken"].clone())
                        .collect()
                })
            })
            .collect();
        waits.into_iter().map(|wait| wait.join().unwrap()).collect()
    });
    for (tokens, own) in heard.iter().zip(["left", "right"]) {
        assert!(tokens.len() >= 3, "{own} heard {tokens:?}");
        assert!(
            tokens.iter().all(|token| token == own),
            "{own} heard another call's progress: {tokens:?}"
        );
    }
    assert!(
        served_runs(&project).len() >= 2,
        "calls made while one ran were steps of another run"
    );
}

#[test]
fn a_server_killed_while_sixteen_clients_call_keeps_each_answered_call_once() {
    let project = project();
    let server = HttpServer::start(&project, &[]);
    let answered = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for client in 0..16_u64 {
            let (server, answered) = (&server, &answered);
            scope.spawn(move || {
                for n in (client * 1_000_000).. {
                    let asked = call(
                        "jq_query",
                        json!({"filter": ".n", "input": {"n": n}}),
                        json!({}),
                    );
                    let Ok((_, response)) = server.try_stateless("tools/call", asked, json!({}))
                    else {
                        return;
                    };
                    let Some(message) = answer(&response) else {
                        return;
                    };
                    assert_eq!(message["result"]["isError"], false, "{message}");
                    answered.lock().unwrap().push(n);
                }
            });
        }
        // Let the burst build, then kill the server in its middle.
        let start = Instant::now();
        while answered.lock().unwrap().len() < 200 {
            assert!(start.elapsed() < Duration::from_secs(60), "no burst");
            std::thread::sleep(Duration::from_millis(5));
        }
        server.kill();
    });
    let answered = answered.into_inner().unwrap();
    let runs = served_runs(&project);
    let mut committed: BTreeMap<u64, usize> = BTreeMap::new();
    for run in &runs {
        let mut records = Vec::new();
        objects_with(run, &["call", "result", "decision"], &mut records);
        for record in records {
            let n = record["call"]["args"]["input"]["n"]
                .as_u64()
                .unwrap_or_else(|| panic!("a record of another call: {record}"));
            *committed.entry(n).or_default() += 1;
        }
    }
    for n in &answered {
        assert!(
            committed.contains_key(n),
            "call {n} was answered and its step is gone"
        );
    }
    let twice: Vec<_> = committed.iter().filter(|(_, times)| **times > 1).collect();
    assert!(twice.is_empty(), "steps committed twice: {twice:?}");
    assert!(
        runs.len() > 1,
        "sixteen clients at once were served by one run"
    );
}
