//! The sandbox's `bash` measured against GNU bash: every entry of
//! `tests/corpus/commands.sh` runs, in order, through the `dir` backend's
//! `bash` (with the bundled commands and Python beside it) on one copy of
//! a fixture project and through `bash -c` on another, and the two are
//! compared on exit status and standard output. The test fails when the
//! share that match falls below what the sandbox reaches today, and prints
//! each category's rate and every entry that differs.

use std::path::Path;
use std::process::Command;

use cordon_tests::{Rig, artifacts, built_bundle};
use cordon_wasm::{Safeguards, WorkspaceOptions};
use serde_json::json;

/// The share of entries that must match, in percent; raise it as the
/// sandbox grows.
const MATCH_RATE_FLOOR: f64 = 95.8;

/// One entry of the corpus.
struct Entry {
    category: String,
    line: String,
}

fn corpus() -> Vec<Entry> {
    let text = include_str!("../corpus/commands.sh");
    let mut entries = Vec::new();
    let mut category = String::from("uncategorized");
    let mut current = String::new();
    let flush = |category: &str, current: &mut String, entries: &mut Vec<Entry>| {
        let line = current.trim_end_matches('\n').to_owned();
        if !line.trim().is_empty() {
            entries.push(Entry {
                category: category.to_owned(),
                line,
            });
        }
        current.clear();
    };
    for line in text.lines() {
        if line == "---" {
            flush(&category, &mut current, &mut entries);
        } else if let Some(name) = line.strip_prefix("# category: ") {
            flush(&category, &mut current, &mut entries);
            category = name.trim().to_owned();
        } else if line.starts_with("# ") && current.is_empty() {
            continue;
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    flush(&category, &mut current, &mut entries);
    entries
}

/// The fixture project: a little of everything agents look at.
fn fixture(root: &Path) {
    let files: &[(&str, &str)] = &[
        (
            "README.md",
            "# Demo project\n\nA small project for testing.\n\n## Usage\n\nRun `make`.\n",
        ),
        (
            "src/app.py",
            "import sys\nfrom util import helper\n\n\ndef main():\n    # TODO: parse arguments\n    print(helper())\n\n\nif __name__ == \"__main__\":\n    main()\n",
        ),
        (
            "src/util.py",
            "import os\n\n\ndef helper():\n    return os.getcwd()\n",
        ),
        (
            "src/lib/helpers.js",
            "export function add(a, b) {\n  return a + b; // TODO: check types\n}\n",
        ),
        (
            "data/users.csv",
            "id,name,age,city\n1,alice,34,paris\n2,bob,27,berlin\n3,carol,45,paris\n4,dave,31,rome\n",
        ),
        (
            "data/config.json",
            "{\"name\": \"demo\", \"version\": \"1.2.3\", \"debug\": false}\n",
        ),
        (
            "logs/app.log",
            "2024-01-01 INFO started in 120ms\n2024-01-01 WARN slow query 900ms\n2024-01-01 ERROR failed to connect\n2024-01-02 INFO request ok 15ms\n2024-01-02 ERROR timeout after 3000ms\n",
        ),
        ("notes.txt", "banana\napple\ncherry\napple\n"),
        ("numbers.txt", "10\n5\n27\n3\n"),
        ("scripts/build.sh", "#!/bin/sh\necho building\n"),
        ("docs/guide.md", "# Guide\n"),
        ("docs/api/reference.md", "# Reference\n"),
    ];
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

/// The variables both shells start with.
const ENV: &[(&str, &str)] = &[("PATH", "/usr/bin:/bin"), ("LC_ALL", "C"), ("TZ", "UTC")];

fn gnu_bash(root: &Path, line: &str) -> (i64, String) {
    let output = Command::new("bash")
        .arg("-c")
        .arg(line)
        .current_dir(root)
        .env_clear()
        .envs(ENV.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("GNU bash runs: the corpus compares the sandbox's bash with it");
    (
        i64::from(output.status.code().unwrap_or(128)),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// Copy the built bundle `name` into the fixture's plugins.
fn copy_bundle(plugins: &Path, name: &str, component: &str) {
    let bundle = built_bundle(artifacts::PLUGINS_DIR, name);
    let to = plugins.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for file in ["plugin.toml", component] {
        std::fs::copy(bundle.join(file), to.join(file)).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sandboxs_bash_matches_gnu_bash_on_the_corpus() {
    let options = WorkspaceOptions {
        transactional: false,
        seed: true,
    };
    let rig = Rig::bind("dir", options, Safeguards::default(), |fixture, _| {
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
        copy_bundle(fixture.plugins.path(), "commands", "commands.wasm");
        copy_bundle(fixture.plugins.path(), "python", "python.wasm");
        self::fixture(fixture.workspace.path());
    })
    .await;
    let theirs = tempfile::tempdir().unwrap();
    fixture(theirs.path());
    let env: serde_json::Map<String, serde_json::Value> = ENV
        .iter()
        .map(|(name, value)| ((*name).to_owned(), json!(value)))
        .collect();
    let entries = corpus();
    assert!(entries.len() >= 200, "the corpus holds {}", entries.len());
    let mut by_category: Vec<(String, usize, usize)> = Vec::new();
    let mut differences = Vec::new();
    for entry in &entries {
        let expected = gnu_bash(theirs.path(), &entry.line);
        let got = match rig
            .call(
                "bash",
                json!({"command": entry.line, "env": env, "timeout_ms": 10_000}),
            )
            .await
        {
            Ok(done) => (
                done["exit_code"].as_i64().unwrap_or(-1),
                done["stdout"].as_str().unwrap_or_default().to_owned(),
            ),
            Err(error) => (-1, error.to_string()),
        };
        let same = expected == got;
        match by_category
            .iter_mut()
            .find(|(name, ..)| *name == entry.category)
        {
            Some((_, matched, total)) => {
                *matched += usize::from(same);
                *total += 1;
            }
            None => by_category.push((entry.category.clone(), usize::from(same), 1)),
        }
        if !same {
            differences.push(format!(
                "--- {}\n    bash: {} {:?}\n    ours: {} {:?}",
                entry.line, expected.0, expected.1, got.0, got.1
            ));
        }
    }
    let matched: usize = by_category.iter().map(|(_, matched, _)| matched).sum();
    let rate = 100.0 * matched as f64 / entries.len() as f64;
    eprintln!("{}", differences.join("\n"));
    for (name, matched, total) in &by_category {
        eprintln!(
            "{name}: {matched}/{total} ({:.1}%)",
            100.0 * *matched as f64 / *total as f64
        );
    }
    eprintln!("all: {matched}/{} ({rate:.1}%)", entries.len());
    assert!(
        rate >= MATCH_RATE_FLOOR,
        "{matched} of {} entries match GNU bash ({rate:.1}%), below the floor of {MATCH_RATE_FLOOR}%",
        entries.len()
    );
}
