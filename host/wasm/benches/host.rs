//! The hot path, measured: loading bundles cold (compiling) and warm (from the
//! compiled-component cache), the bundled plugins warm with their files
//! settled beside the same with every file fresh, calling a tool in a fresh instance,
//! and 512 calls at once against a pool of 64 instances (wall time and the
//! process's peak memory). Each figure is reported beside a baseline measured
//! in the same run.
//!
//! Run with `cargo bench -p cordon-wasm --bench host`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_kernel::{CallContext, EventLog, StateReader, StateSnapshot, ToolSet};
use cordon_wasm::{CacheConfig, CacheKey, HostConfig, PluginHost, Plugins};
use serde_json::json;

const MANIFEST: &str = "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n";

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

async fn run() {
    let plugins_dir = tempfile::tempdir().expect("plugins dir");
    let bundle = plugins_dir.path().join("hostile");
    std::fs::create_dir_all(&bundle).expect("bundle dir");
    std::fs::write(bundle.join("plugin.toml"), MANIFEST).expect("manifest");
    std::fs::copy(cordon_test_artifacts::HOSTILE, bundle.join("tool.wasm")).expect("component");
    let workspace = tempfile::tempdir().expect("workspace");

    let cold = median(5, || async {
        let cache = tempfile::tempdir().expect("cache");
        let host = host(Some(cache.path()));
        time(|| host.load_dir(plugins_dir.path(), workspace.path())).await
    })
    .await;
    let cache = tempfile::tempdir().expect("cache");
    let warm_host = host(Some(cache.path()));
    warm_host
        .load_dir(plugins_dir.path(), workspace.path())
        .await
        .expect("prime cache");
    let warm = median(15, || async {
        let host = host(Some(cache.path()));
        time(|| host.load_dir(plugins_dir.path(), workspace.path())).await
    })
    .await;
    println!(
        "load one bundle: cold (compile) {:.1} ms, warm (cache) {:.1} ms; warm/cold = {:.3}",
        ms(cold),
        ms(warm),
        warm.as_secs_f64() / cold.as_secs_f64()
    );

    sealed_cache(workspace.path()).await;

    let report = warm_host
        .load_dir(plugins_dir.path(), workspace.path())
        .await
        .expect("load");
    let plugins = warm_host
        .plugins(report.bundles, Arc::new(EventLog::new()))
        .unwrap_or_else(|errors| panic!("{}", errors[0]));
    let args = json!({"query": "latency", "items": [1, 2, 3], "nested": {"ok": true}});
    for _ in 0..20 {
        echo(&plugins, &args).await;
    }
    let rounds = 500;
    let started = Instant::now();
    for _ in 0..rounds {
        echo(&plugins, &args).await;
    }
    let call = started.elapsed() / rounds;

    // Baseline: the JSON work any host does for the same call (serialize the
    // arguments, parse the result), with no sandbox at all.
    let native_rounds = 100_000;
    let started = Instant::now();
    for _ in 0..native_rounds {
        let text = std::hint::black_box(args.to_string());
        let back: serde_json::Value = serde_json::from_str(&text).expect("json");
        std::hint::black_box(back);
    }
    let native = started.elapsed() / native_rounds;
    println!(
        "call hostile.echo in a fresh instance: {:.1} us per call; native JSON round trip {:.2} us; ratio {:.0}x",
        us(call),
        us(native),
        call.as_secs_f64() / native.as_secs_f64()
    );

    burst(&plugins, &args).await;

    let parallel = 8;
    let started = Instant::now();
    let handles: Vec<_> = (0..parallel)
        .map(|_| {
            let plugins = plugins.clone();
            let args = args.clone();
            tokio::spawn(async move {
                for _ in 0..rounds / parallel {
                    echo(&plugins, &args).await;
                }
            })
        })
        .collect();
    for handle in handles {
        handle.await.expect("join");
    }
    let per_call = started.elapsed() / (rounds / parallel * parallel);
    println!(
        "the same with {parallel} concurrent callers: {:.1} us per call; concurrent/sequential = {:.2}",
        us(per_call),
        per_call.as_secs_f64() / call.as_secs_f64()
    );
}

/// The bundled plugins (and the Python interpreter, when built) loaded from
/// a warm cache two ways in the same run: while every file is fresh, so a
/// start reads and hashes every component and reads and MAC-checks every
/// compiled entry, as every start did before a file's fingerprint could
/// vouch for it; and once the files have settled, when a start takes each
/// digest from its record and maps each entry's code.
async fn sealed_cache(workspace: &Path) {
    let plugins = tempfile::tempdir().expect("plugins dir");
    let repository = Path::new(cordon_test_artifacts::PLUGINS_DIR);
    let mut bundles = vec![
        ("jq", cordon_test_artifacts::JQ),
        ("files", cordon_test_artifacts::FILES),
        ("notes", cordon_test_artifacts::NOTES),
        ("redactor", cordon_test_artifacts::REDACTOR),
        ("guard", cordon_test_artifacts::GUARD),
        ("budget", cordon_test_artifacts::BUDGET),
        ("dir", cordon_test_artifacts::DIR),
        ("memory", cordon_test_artifacts::DIR),
        ("http", cordon_test_artifacts::HTTP),
    ];
    let python = repository.join("python/python.wasm");
    let python = python.to_string_lossy().into_owned();
    if Path::new(&python).is_file() {
        bundles.push(("python", python.as_str()));
    }
    for (name, component) in &bundles {
        let folder = plugins.path().join(name);
        std::fs::create_dir_all(&folder).expect("bundle dir");
        std::fs::copy(
            repository.join(name).join("plugin.toml"),
            folder.join("plugin.toml"),
        )
        .expect("manifest");
        std::fs::copy(component, folder.join(format!("{name}.wasm"))).expect("component");
    }
    let cache = tempfile::tempdir().expect("cache");
    let primed = host(Some(cache.path()))
        .load_dir(plugins.path(), workspace)
        .await
        .expect("prime the cache");
    assert!(primed.errors.is_empty(), "{}", primed.errors[0]);
    let loaded = primed.bundles.len();
    // Every component and compiled entry written again, unchanged: fresh
    // files, which no start vouches for by their fingerprints.
    let files: Vec<_> = bundles
        .iter()
        .map(|(name, _)| plugins.path().join(name).join(format!("{name}.wasm")))
        .chain(
            std::fs::read_dir(cache.path())
                .expect("cache dir")
                .map(|entry| entry.expect("entry").path())
                .filter(|path| path.is_file()),
        )
        .collect();
    let bytes: u64 = files
        .iter()
        .map(|file| file.metadata().map_or(0, |m| m.len()))
        .sum();
    for file in &files {
        let fresh = file.with_extension("fresh");
        std::fs::copy(file, &fresh).expect("copy");
        std::fs::rename(&fresh, file).expect("rename");
    }
    let read = median(5, || async {
        let host = host(Some(cache.path()));
        time(|| host.load_dir(plugins.path(), workspace)).await
    })
    .await;
    // Settled: the next start seals their fingerprints, the rest map.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    host(Some(cache.path()))
        .load_dir(plugins.path(), workspace)
        .await
        .expect("seal the fingerprints");
    let mapped = median(9, || async {
        let host = host(Some(cache.path()));
        time(|| host.load_dir(plugins.path(), workspace)).await
    })
    .await;
    println!(
        "load {loaded} bundled plugins from a warm cache: {:.1} ms with every file settled (digests remembered, code mapped); {:.1} ms with every file fresh (read, hashed and MAC-checked, {:.1} MiB); settled/fresh = {:.3}",
        ms(mapped),
        ms(read),
        bytes as f64 / f64::from(1u32 << 20),
        mapped.as_secs_f64() / read.as_secs_f64()
    );
}

/// 512 calls at once against the default pool, each waiting for a slot,
/// beside the same 512 made one after another.
async fn burst(plugins: &Plugins, args: &serde_json::Value) {
    let calls = 512;
    let before = peak_rss_kib();
    let started = Instant::now();
    for _ in 0..calls {
        echo(plugins, args).await;
    }
    let sequential = started.elapsed();
    let started = Instant::now();
    let handles: Vec<_> = (0..calls)
        .map(|_| {
            let plugins = plugins.clone();
            let args = args.clone();
            tokio::spawn(async move { echo(&plugins, &args).await })
        })
        .collect();
    for handle in handles {
        handle.await.expect("every call of the burst succeeds");
    }
    let concurrent = started.elapsed();
    let after = peak_rss_kib();
    println!(
        "{calls} calls at once on a pool of {}: {:.1} ms wall, all succeeded; one after another {:.1} ms; concurrent/sequential = {:.2}; peak memory {:.1} MiB (before the burst {:.1} MiB)",
        HostConfig::default().max_instances,
        ms(concurrent),
        ms(sequential),
        concurrent.as_secs_f64() / sequential.as_secs_f64(),
        after as f64 / 1024.0,
        before as f64 / 1024.0,
    );
}

/// The process's peak resident memory so far, in KiB (`VmHWM`).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

async fn echo(plugins: &Plugins, args: &serde_json::Value) {
    let state: Arc<dyn StateReader> = Arc::new(StateSnapshot::default());
    let outcome = plugins
        .call(
            "hostile.echo",
            args.clone(),
            CallContext::outside_run(state),
        )
        .await;
    outcome.result.expect("call");
}

fn host(cache: Option<&Path>) -> PluginHost {
    static KEY: std::sync::OnceLock<CacheKey> = std::sync::OnceLock::new();
    let key = KEY.get_or_init(CacheKey::ephemeral);
    PluginHost::new(HostConfig {
        cache: cache.map(|dir| CacheConfig {
            dir: dir.to_owned(),
            key: key.clone(),
        }),
        ..HostConfig::default()
    })
    .expect("host")
}

async fn time<F, Fut, T, E>(f: F) -> Duration
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
    E: std::fmt::Debug,
{
    let started = Instant::now();
    f().await.expect("timed operation");
    started.elapsed()
}

async fn median<F, Fut>(runs: usize, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Duration>,
{
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        times.push(f().await);
    }
    times.sort();
    times[runs / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn us(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
