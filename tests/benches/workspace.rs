//! The workspace tools against the programs they stand in for, on the same
//! files in the same run: `grep` through the `dir` backend over a 50 MB tree
//! against ripgrep (`rg`, from Debian's `ripgrep` package), and `read` of a
//! 10 MB file against `cat`. Both sides are timed end to end as a caller sees
//! them: the tool call (instantiate the backend, search or read, return the
//! JSON result) against spawning the program and collecting its output.
//!
//! Run with `cargo bench -p cordon-tests --bench workspace`.

mod calls;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use calls::{call, median, timed};
use cordon_kernel::EventLog;
use cordon_wasm::{HostConfig, PluginHost, WorkspaceOptions};
use serde_json::json;

const ROUNDS: usize = 7;
/// Files in the tree, and bytes in each: 500 x 100 KiB = 50 MiB (51.2 MB).
const FILES: usize = 500;
const FILE_BYTES: usize = 100 << 10;
const READ_BYTES: usize = 10 << 20;

fn main() {
    let workspace = tempfile::tempdir().expect("workspace");
    let matches = build_tree(workspace.path());
    let plugins = tempfile::tempdir().expect("plugins");
    let bundle = plugins.path().join("dir");
    std::fs::create_dir_all(&bundle).expect("bundle dir");
    std::fs::copy(
        Path::new(cordon_test_artifacts::PLUGINS_DIR).join("dir/plugin.toml"),
        bundle.join("plugin.toml"),
    )
    .expect("manifest");
    std::fs::copy(cordon_test_artifacts::DIR, bundle.join("dir.wasm")).expect("component");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let host = PluginHost::new(HostConfig::default()).expect("host");
        let report = host
            .load_dir(plugins.path(), workspace.path())
            .await
            .expect("load");
        assert!(report.errors.is_empty(), "{}", report.errors[0]);
        let plugins = host
            .plugins(report.bundles, Arc::new(EventLog::new()))
            .unwrap_or_else(|errors| panic!("{}", errors[0]));
        let options = WorkspaceOptions {
            transactional: true,
            seed: true,
        };
        let tools = plugins.workspace("dir", options).expect("bind").tools();

        let grep = json!({"pattern": "needle-[0-9]+", "path": "tree", "max_matches": 100_000});
        let found = call(tools.as_ref(), "grep", grep.clone()).await;
        assert_eq!(found["matches"].as_array().expect("matches").len(), matches);
        let mut tool = Vec::new();
        let mut rg = Vec::new();
        for _ in 0..ROUNDS {
            tool.push(timed(call(tools.as_ref(), "grep", grep.clone())).await);
            rg.push(time_program(
                workspace.path(),
                "rg",
                &["-n", "needle-[0-9]+", "tree"],
                matches,
            ));
        }
        report_pair(
            "grep over a 50 MiB tree (500 files)",
            "dir grep",
            &tool,
            "rg",
            &rg,
        );

        let read = json!({"path": "big.txt"});
        let content = call(tools.as_ref(), "read", read.clone()).await;
        assert_eq!(
            content["content"].as_str().expect("content").len(),
            READ_BYTES
        );
        let mut tool = Vec::new();
        let mut cat = Vec::new();
        for _ in 0..ROUNDS {
            tool.push(timed(call(tools.as_ref(), "read", read.clone())).await);
            cat.push(time_program(workspace.path(), "cat", &["big.txt"], 0));
        }
        report_pair("read of a 10 MiB file", "dir read", &tool, "cat", &cat);
    });
}

/// Write the 50 MiB tree under `root/tree` and the 10 MiB `root/big.txt`;
/// returns how many lines of the tree hold a needle.
fn build_tree(root: &Path) -> usize {
    let mut needles = 0;
    let mut line_number = 0usize;
    for file in 0..FILES {
        let dir = root.join(format!("tree/d{:02}", file % 25));
        std::fs::create_dir_all(&dir).expect("tree dir");
        let mut text = String::with_capacity(FILE_BYTES);
        while text.len() < FILE_BYTES - 100 {
            line_number += 1;
            if line_number.is_multiple_of(997) {
                needles += 1;
                text.push_str(&format!("let x = \"needle-{line_number}\"; // found\n"));
            } else {
                text.push_str(&format!(
                    "fn item_{line_number}(a: u32) -> u32 {{ a.wrapping_mul({}) }}\n",
                    line_number % 91
                ));
            }
        }
        std::fs::write(dir.join(format!("f{file:03}.rs")), text).expect("tree file");
    }
    let line = "The quick brown fox jumps over the lazy dog. 0123456789\n";
    let big: String = line.repeat(READ_BYTES / line.len() + 1)[..READ_BYTES].to_owned();
    std::fs::write(root.join("big.txt"), big).expect("big file");
    needles
}

/// Run `program args` in `dir`, collecting its output; at least `lines` lines
/// must come back.
fn time_program(dir: &Path, program: &str, args: &[&str], lines: usize) -> Duration {
    let started = Instant::now();
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|error| {
            panic!("cannot run {program} (install it: apt install {program}): {error}")
        });
    let elapsed = started.elapsed();
    assert!(output.status.success(), "{program} failed");
    assert!(output.stdout.iter().filter(|&&b| b == b'\n').count() >= lines);
    elapsed
}

fn report_pair(
    what: &str,
    ours: &str,
    our_times: &[Duration],
    theirs: &str,
    their_times: &[Duration],
) {
    let (a, b) = (median(our_times), median(their_times));
    println!(
        "{what}: {ours} {:.1} ms, {theirs} {:.1} ms (median of {ROUNDS}) -> {:.2}x",
        a.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3,
        a.as_secs_f64() / b.as_secs_f64()
    );
}
