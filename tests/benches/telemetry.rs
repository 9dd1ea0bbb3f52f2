//! What exporting traces and metrics costs the loop: a loop step (scripted
//! model, one `hostile.echo` call, commits in memory) and a served tool call
//! (judged, run and committed as one step, as `cordon mcp` serves it), each
//! with the OpenTelemetry layer exporting over OTLP/HTTP to a receiver on
//! loopback that answers at once, against the same with no subscriber. The
//! two alternate, round by round, in one process on one thread (the layer is
//! that thread's default subscriber while it is on); the bytes the receiver
//! got show the spans were exported.
//!
//! Run with `cargo bench -p cordon-tests --bench telemetry`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cordon_kernel::{
    AgentDef, DeferApprovals, EventLog, MemoryCommitStore, PermissionPolicy, Requester, Runtime,
    Served, ServedRun, ToolCall, Unanswered, Verdict,
};
use cordon_providers::ScriptedModel;
use cordon_telemetry::Telemetry;
use cordon_wasm::{HostConfig, PluginHost, Plugins};
use serde_json::json;
use tracing::Dispatch;
use tracing_subscriber::layer::SubscriberExt;

const MANIFEST: &str = "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n";
const STEPS: usize = 200;
const ROUNDS: usize = 9;

fn main() {
    let received = Arc::new(AtomicUsize::new(0));
    let endpoint = discarding_receiver(Arc::clone(&received));
    // SAFETY: no other thread exists yet to read the environment.
    unsafe { std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint) };
    let telemetry = Telemetry::from_env().expect("telemetry");
    let dispatch = Dispatch::new(tracing_subscriber::registry().with(telemetry.layer()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let host = PluginHost::new(HostConfig::default()).expect("host");
        let (_dir, plugins) = load(&host).await;
        let events = Arc::new(EventLog::new());
        let (mut steps_off, mut steps_on) = (Vec::new(), Vec::new());
        let (mut calls_off, mut calls_on) = (Vec::new(), Vec::new());
        let served_off = served(&plugins, &events, "off").await;
        let served_on = served(&plugins, &events, "on").await;
        for round in 0..ROUNDS {
            // Exported first: a callsite first reached with no subscriber on
            // the thread is cached as never enabled, and would stay so.
            {
                let _on = tracing::dispatcher::set_default(&dispatch);
                steps_on.push(step_time(&plugins, &events, round).await);
                calls_on.push(call_time(&served_on, round).await);
            }
            steps_off.push(step_time(&plugins, &events, round).await);
            calls_off.push(call_time(&served_off, round).await);
        }
        report(
            "loop step (one hostile.echo call, commits in memory)",
            steps_on,
            steps_off,
        );
        report(
            "served tool call (judged, run, committed in memory)",
            calls_on,
            calls_off,
        );
    });
    telemetry.shutdown();
    // The layer was on: what it exported reached the receiver.
    let bytes = received.load(Ordering::SeqCst);
    assert!(bytes > 0, "nothing was exported");
    println!("exported {bytes} bytes of spans and metrics");
}

fn report(what: &str, on: Vec<Duration>, off: Vec<Duration>) {
    let (on, off) = (median(on), median(off));
    println!(
        "{what}: {:.1} us exported vs {:.1} us without; overhead {:.1} us; exported/without = {:.2}",
        us(on),
        us(off),
        us(on.saturating_sub(off)),
        on.as_secs_f64() / off.as_secs_f64()
    );
}

/// A receiver on loopback that reads each export and answers 200 at once.
fn discarding_receiver(received: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let endpoint = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let received = Arc::clone(&received);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("stream"));
                let mut stream = stream;
                loop {
                    let mut length = 0;
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    loop {
                        line.clear();
                        reader.read_line(&mut line).expect("header");
                        let header = line.trim_end().to_ascii_lowercase();
                        if header.is_empty() {
                            break;
                        }
                        if let Some(value) = header.strip_prefix("content-length:") {
                            length = value.trim().parse().expect("length");
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).expect("body");
                    received.fetch_add(body.len(), Ordering::SeqCst);
                    if stream
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    endpoint
}

async fn load(host: &PluginHost) -> (tempfile::TempDir, Arc<Plugins>) {
    let dir = tempfile::tempdir().expect("plugins dir");
    let bundle = dir.path().join("hostile");
    std::fs::create_dir_all(&bundle).expect("bundle dir");
    std::fs::write(bundle.join("plugin.toml"), MANIFEST).expect("manifest");
    std::fs::copy(cordon_test_artifacts::HOSTILE, bundle.join("tool.wasm")).expect("component");
    let report = host.load_dir(dir.path(), dir.path()).await.expect("load");
    assert!(report.errors.is_empty(), "{}", report.errors[0]);
    let plugins = Arc::new(
        host.plugins(report.bundles, Arc::new(EventLog::new()))
            .unwrap_or_else(|errors| panic!("{}", errors[0])),
    );
    (dir, plugins)
}

fn agent() -> AgentDef {
    AgentDef::new(
        "bench",
        "",
        &["*"],
        u32::try_from(STEPS + 2).expect("steps"),
        PermissionPolicy::new(Verdict::Allow),
    )
    .expect("agent")
}

/// Time per step of a run of [`STEPS`] steps, each calling `hostile.echo`.
async fn step_time(plugins: &Arc<Plugins>, events: &Arc<EventLog>, round: usize) -> Duration {
    let mut text = String::new();
    for step in 0..STEPS {
        text.push_str(&format!(
            "[[turn]]\n[[turn.call]]\ntool = \"hostile.echo\"\nargs = {{ step = {step} }}\n"
        ));
    }
    text.push_str("[[turn]]\ntext = \"done\"\n");
    let model = ScriptedModel::parse(Path::new("bench.toml"), &text).expect("script");
    let runtime = Runtime::new(
        Arc::new(model),
        plugins.clone(),
        Arc::new(MemoryCommitStore::new()),
        events.clone(),
    );
    let started = Instant::now();
    runtime
        .start(&agent(), &format!("run-{round}"), 0, "go")
        .await
        .expect("run");
    started.elapsed() / u32::try_from(STEPS).expect("steps")
}

async fn served(plugins: &Arc<Plugins>, events: &Arc<EventLog>, name: &str) -> ServedRun {
    let runtime = Runtime::for_requests(
        plugins.clone(),
        Arc::new(MemoryCommitStore::new()),
        events.clone(),
    );
    ServedRun::open(runtime, &agent(), "default", name, 0)
        .await
        .expect("served run")
}

/// Time per served request of [`STEPS`] requests, each one call.
async fn call_time(served: &ServedRun, round: usize) -> Duration {
    let requester = Requester::default();
    let started = Instant::now();
    for step in 0..STEPS {
        let call = ToolCall {
            id: format!("call-{round}-{step}"),
            name: "hostile.echo".into(),
            args: json!({ "step": step }),
        };
        let outcome = served
            .call(vec![call], &DeferApprovals, Unanswered::Deny, &requester)
            .await
            .expect("served request");
        assert!(matches!(outcome, Served::Committed { .. }));
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
