//! The example tools in Python, JavaScript, Go and C beside a Rust tool, in one
//! process: component size, cold load (compiling), cached load, a call in a
//! fresh instance, and the memory 64 concurrent calls take. Each figure is
//! also given as a ratio to a minimal Rust tool's (an echo), measured in the
//! same run; the bundled `jq` is a Rust tool that does real work per call.
//!
//! Run with `cargo bench -p cordon-tests --bench languages` after the test
//! command has built the example tools (`cordon build examples/tools`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_kernel::{EventLog, MemoryStateStore, call_committed};
use cordon_test_artifacts::{EXAMPLE_TOOLS_DIR, HOSTILE, JQ, PLUGINS_DIR};
use cordon_wasm::{CacheOutcome, HostConfig, PluginHost, Plugins};
use serde_json::{Value, json};

/// One tool measured: its bundle folder, the call, and its arguments.
struct Subject {
    label: &'static str,
    bundle: PathBuf,
    tool: &'static str,
    args: Value,
}

struct Figures {
    size: u64,
    cold: Duration,
    cached: Duration,
    call: Duration,
    burst_mib: f64,
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let rust = tempfile::tempdir().expect("rust bundle");
    let jq = rust.path().join("jq");
    std::fs::create_dir_all(&jq).expect("jq folder");
    std::fs::copy(
        Path::new(PLUGINS_DIR).join("jq/plugin.toml"),
        jq.join("plugin.toml"),
    )
    .expect("jq manifest");
    std::fs::copy(JQ, jq.join("jq.wasm")).expect("jq component");
    let echo = rust.path().join("hostile");
    std::fs::create_dir_all(&echo).expect("echo folder");
    std::fs::write(
        echo.join("plugin.toml"),
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n",
    )
    .expect("echo manifest");
    std::fs::copy(HOSTILE, echo.join("tool.wasm")).expect("echo component");
    let examples = Path::new(EXAMPLE_TOOLS_DIR);
    let subjects = [
        Subject {
            label: "Rust (echo)",
            bundle: echo,
            tool: "hostile.echo",
            args: json!({"text": "a"}),
        },
        Subject {
            label: "Rust (jq)",
            bundle: jq,
            tool: "jq.query",
            args: json!({"filter": ".[0]", "input": ["a", "b"]}),
        },
        Subject {
            label: "Python (csv)",
            bundle: examples.join("csv"),
            tool: "csv.columns",
            args: json!({"text": "a,b\n1,2\n"}),
        },
        Subject {
            label: "JavaScript (markdown)",
            bundle: examples.join("markdown"),
            tool: "markdown.outline",
            args: json!({"markdown": "# a\n## b\n"}),
        },
        Subject {
            label: "JavaScript on QuickJS",
            bundle: examples.join("markdown/quickjs"),
            tool: "markdown.outline",
            args: json!({"markdown": "# a\n## b\n"}),
        },
        Subject {
            label: "Go (urls)",
            bundle: examples.join("urls"),
            tool: "urls.parse",
            args: json!({"url": "https://example.org/a?b=c"}),
        },
        Subject {
            label: "C (wc)",
            bundle: examples.join("wc"),
            tool: "wc.count",
            args: json!({"text": "one two\nthree\n"}),
        },
    ];
    let figures: Vec<Figures> = subjects
        .iter()
        .map(|subject| runtime.block_on(measure(subject)))
        .collect();
    let rust = &figures[0];
    println!("ratios are to {}", subjects[0].label);
    println!(
        "{:<22} {:>10} {:>16} {:>16} {:>16} {:>20}",
        "tool", "size", "cold load", "cached load", "fresh call", "64 calls at once"
    );
    for (subject, figure) in subjects.iter().zip(&figures) {
        println!(
            "{:<22} {:>10} {:>16} {:>16} {:>16} {:>20}",
            subject.label,
            format!("{:.2} MB", figure.size as f64 / 1e6),
            format!(
                "{:.0} ms ({:.0}x)",
                ms(figure.cold),
                figure.cold.as_secs_f64() / rust.cold.as_secs_f64()
            ),
            format!(
                "{:.1} ms ({:.1}x)",
                ms(figure.cached),
                figure.cached.as_secs_f64() / rust.cached.as_secs_f64()
            ),
            format!(
                "{:.2} ms ({:.1}x)",
                ms(figure.call),
                figure.call.as_secs_f64() / rust.call.as_secs_f64()
            ),
            format!(
                "{:.1} MiB ({:.1}x)",
                figure.burst_mib,
                figure.burst_mib / rust.burst_mib.max(0.1)
            ),
        );
    }
}

async fn measure(subject: &Subject) -> Figures {
    let manifest = std::fs::read_to_string(subject.bundle.join("plugin.toml")).expect("manifest");
    let component = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("component = "))
        .map(|value| subject.bundle.join(value.trim_matches('"')))
        .expect("the manifest names its component");
    let size = std::fs::metadata(&component)
        .unwrap_or_else(|error| {
            panic!(
                "{}: {error}; build it with `cordon build {}`",
                component.display(),
                subject.bundle.display()
            )
        })
        .len();
    let cache = tempfile::tempdir().expect("cache");
    let workspace = tempfile::tempdir().expect("workspace");
    let host = || {
        PluginHost::new(HostConfig {
            cache: Some(cordon_tests::cache_in(cache.path())),
            ..HostConfig::default()
        })
        .expect("host")
    };
    let started = Instant::now();
    let cold = host()
        .load_bundle(&subject.bundle, workspace.path())
        .await
        .expect("cold load");
    let cold_time = started.elapsed();
    assert_eq!(cold.cache, CacheOutcome::Compiled);
    let mut cached = Vec::new();
    let mut loaded = None;
    for _ in 0..5 {
        let warm = host();
        let started = Instant::now();
        let bundle = warm
            .load_bundle(&subject.bundle, workspace.path())
            .await
            .expect("cached load");
        cached.push(started.elapsed());
        assert_eq!(bundle.cache, CacheOutcome::Hit);
        loaded = Some((warm, bundle));
    }
    let (warm, bundle) = loaded.expect("loaded");
    let plugins = warm
        .plugins(vec![bundle], Arc::new(EventLog::new()))
        .unwrap_or_else(|errors| panic!("{}", errors[0]));
    let state = Arc::new(MemoryStateStore::new());
    for _ in 0..10 {
        call(&plugins, &state, subject).await;
    }
    let mut calls = Vec::new();
    for _ in 0..50 {
        let started = Instant::now();
        call(&plugins, &state, subject).await;
        calls.push(started.elapsed());
    }
    let burst_mib = burst(&plugins, &state, subject).await;
    Figures {
        size,
        cold: cold_time,
        cached: median(cached),
        call: median(calls),
        burst_mib,
    }
}

async fn call(plugins: &Plugins, state: &Arc<MemoryStateStore>, subject: &Subject) {
    call_committed(plugins, state.clone(), subject.tool, subject.args.clone())
        .await
        .unwrap_or_else(|error| panic!("{}: {error}", subject.tool));
}

/// The resident memory 64 concurrent calls add at their peak, in MiB: the
/// peak is reset first (`/proc/self/clear_refs`), then read after the burst.
async fn burst(plugins: &Plugins, state: &Arc<MemoryStateStore>, subject: &Subject) -> f64 {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the peak resident memory");
    let before = status_kib("VmRSS:");
    let calls: Vec<_> = (0..64)
        .map(|_| {
            let plugins = plugins.clone();
            let state = state.clone();
            let (tool, args) = (subject.tool, subject.args.clone());
            tokio::spawn(async move { call_committed(&plugins, state, tool, args).await })
        })
        .collect();
    for handle in calls {
        handle
            .await
            .expect("join")
            .expect("every call of the burst succeeds");
    }
    status_kib("VmHWM:").saturating_sub(before) as f64 / 1024.0
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(field))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
