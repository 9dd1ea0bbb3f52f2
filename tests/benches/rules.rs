//! What the run's file rules cost: the same workspace operations through the
//! `dir` backend, on the same 1,000-file tree in the same run, bound once with
//! no file rules and once with deny and read-only rules (which every open,
//! stat and listing of the backend then passes): a `read` of one file, a
//! `grep` over the whole tree, and a `bash` pipeline over a folder of it.
//!
//! Run with `cargo bench -p cordon-tests --bench rules`.

mod calls;

use std::path::Path;
use std::sync::Arc;

use calls::{call, median, timed};
use cordon_kernel::{EventLog, FileRules};
use cordon_wasm::{HostConfig, PluginHost, Safeguards, WorkspaceOptions};
use serde_json::json;

const ROUNDS: usize = 15;
/// The tree: 20 folders of 50 files, 4 KiB each.
const DIRS: usize = 20;
const FILES_PER_DIR: usize = 50;

fn main() {
    let workspace = tempfile::tempdir().expect("workspace");
    build_tree(workspace.path());
    let plugins = tempfile::tempdir().expect("plugins");
    let bundle = plugins.path().join("dir");
    std::fs::create_dir_all(&bundle).expect("bundle dir");
    std::fs::copy(
        Path::new(cordon_test_artifacts::PLUGINS_DIR).join("dir/plugin.toml"),
        bundle.join("plugin.toml"),
    )
    .expect("manifest");
    std::fs::copy(cordon_test_artifacts::DIR, bundle.join("dir.wasm")).expect("component");
    let rules = FileRules::new()
        .with(
            &["**/.env", "**/*.pem", "secrets/**", "**/id_rsa*"],
            &["Cargo.lock", "vendor/**", "**/*.min.js"],
        )
        .expect("rules");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let host = PluginHost::new(HostConfig::default()).expect("host");
        let bind = |files: FileRules| {
            let host = &host;
            let (plugins, workspace) = (plugins.path(), workspace.path());
            async move {
                let report = host.load_dir(plugins, workspace).await.expect("load");
                let safeguards = Safeguards {
                    files,
                    ..Safeguards::default()
                };
                let plugins = host
                    .plugins_with(report.bundles, Arc::new(EventLog::new()), safeguards)
                    .unwrap_or_else(|errors| panic!("{}", errors[0]));
                let options = WorkspaceOptions {
                    transactional: true,
                    seed: true,
                };
                plugins.workspace("dir", options).expect("bind").tools()
            }
        };
        let open = bind(FileRules::new()).await;
        let ruled = bind(rules).await;

        let operations = [
            (
                "read one file",
                "read",
                json!({"path": "tree/d02/f0123.rs"}),
            ),
            (
                "grep over 1,000 files",
                "grep",
                json!({"pattern": "needle-[0-9]+", "max_matches": 100_000}),
            ),
            (
                "bash pipeline over 50 files",
                "bash",
                json!({"command": "cat tree/d03/*.rs | grep -c item_ | sort | uniq"}),
            ),
        ];
        for (what, tool, args) in operations {
            let expected = call(open.as_ref(), tool, args.clone()).await;
            assert_eq!(call(ruled.as_ref(), tool, args.clone()).await, expected);
            let mut without = Vec::new();
            let mut with = Vec::new();
            for _ in 0..ROUNDS {
                without.push(timed(call(open.as_ref(), tool, args.clone())).await);
                with.push(timed(call(ruled.as_ref(), tool, args.clone())).await);
            }
            let (a, b) = (median(&with), median(&without));
            println!(
                "{what}: with file rules {:.2} ms, without {:.2} ms (median of {ROUNDS}) -> {:.2}x",
                a.as_secs_f64() * 1e3,
                b.as_secs_f64() * 1e3,
                a.as_secs_f64() / b.as_secs_f64()
            );
        }
    });
}

/// 1,000 files of 4 KiB under `root/tree`, a needle every 97th line.
fn build_tree(root: &Path) {
    let mut line_number = 0usize;
    for dir in 0..DIRS {
        let folder = root.join(format!("tree/d{dir:02}"));
        std::fs::create_dir_all(&folder).expect("tree dir");
        for file in 0..FILES_PER_DIR {
            let mut text = String::with_capacity(4096);
            while text.len() < 4000 {
                line_number += 1;
                if line_number.is_multiple_of(97) {
                    text.push_str(&format!("let x = \"needle-{line_number}\";\n"));
                } else {
                    text.push_str(&format!("fn item_{line_number}() {{}}\n"));
                }
            }
            let index = dir * FILES_PER_DIR + file;
            std::fs::write(folder.join(format!("f{index:04}.rs")), text).expect("tree file");
        }
    }
}
