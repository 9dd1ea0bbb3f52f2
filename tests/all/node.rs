//! JavaScript in the sandbox: a backend's `bash` runs `node` (and `.js`,
//! `.mjs` and `.cjs` scripts, by extension or `#!/usr/bin/env node`) in the
//! bundled interpreter, QuickJS with Node's API, a component of its own that
//! sees the command's workspace (writable through the command's layer), the
//! active skills' folders read-only and a `/tmp` of its own, and nothing
//! else. A project's scripts print, exit and write exactly as Node.js on the
//! host does; what a script may not do is refused, audited and survived.

use std::path::Path;
use std::process::Command;

use cordon_kernel::LimitKind;
use cordon_tests::{Rig, artifacts, built_bundle};
use cordon_wasm::{Safeguards, WorkspaceOptions};
use serde_json::json;

/// The project `tests/node/project` whose scripts both run.
const PROJECT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/node/project");

/// Copies the folder `from` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().filter_map(Result::ok) {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Every file under `root`, by its path relative to it, with its contents.
fn files(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let relative = path.strip_prefix(root).unwrap().display().to_string();
                out.push((relative, std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

/// The dir backend over a workspace `seed` fills, with the JavaScript
/// interpreter.
async fn rig(seed: impl FnOnce(&Path)) -> Rig {
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    Rig::bind("dir", options, Safeguards::default(), |fixture, _| {
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
        fixture.bundled_plugin(
            "node",
            &built_bundle(artifacts::PLUGINS_DIR, "node").join("node.wasm"),
        );
        seed(fixture.workspace.path());
    })
    .await
}

/// The command lines both run, in order, in the project's root.
const LINES: &[&str] = &[
    "node scripts/report.js input.csv out",
    "node scripts/build.mjs",
    "cat summary.json",
    "node scripts/fail.js",
    "node scripts/reject.mjs",
    "node scripts/exit.js",
    "printf 'a\\nb\\n' | ./scripts/tool.js",
    "node -p 'require(\"./lib\").money(2, \"X\")'",
    "cd lib && node --input-type=module -e 'import parse from \"./sum.mjs\"; console.log(parse(\"a,b\\n1,2\"))'",
    "echo 'console.log(typeof require, process.argv.length)' | node - x y",
    "node -e 'console.log([1, 2, 3].map(n => n * 2), JSON.stringify({ a: [1] }))'",
    "node -e 'queueMicrotask(() => console.log(\"micro\")); console.log(\"sync\")'",
    "node -e 'import(\"./lib/sum.mjs\").then((m) => console.log(m.total([{ u: 2 }, { u: 3 }], \"u\")))'",
    "node -e 'const { createRequire } = require(\"module\"); console.log(createRequire(process.cwd() + \"/x.js\")(\"./data.json\").title)'",
    "node scripts/compat.js && cat decoded.txt",
    "node scripts/imports.mjs",
    "node scripts/events.js",
    "node missing.js",
];

#[tokio::test(flavor = "multi_thread")]
async fn a_projects_scripts_print_exit_and_write_as_node_on_the_host_does() {
    let host = tempfile::tempdir().unwrap();
    copy_tree(Path::new(PROJECT), host.path());
    let rig = rig(|root| copy_tree(Path::new(PROJECT), root)).await;
    for line in LINES {
        let (code, out, err) = rig.sh(line).await;
        let expected = Command::new("bash")
            .args(["-c", line])
            .current_dir(host.path())
            .output()
            .expect("node on the host (Node.js 20 or newer) runs the same line");
        let expected_out = String::from_utf8_lossy(&expected.stdout).into_owned();
        assert_eq!(
            (code, out),
            (i64::from(expected.status.code().unwrap()), expected_out),
            "{line}\nsandbox stderr:\n{err}\nhost stderr:\n{}",
            String::from_utf8_lossy(&expected.stderr)
        );
        // An uncaught error names itself and where it was thrown, as Node's
        // report does.
        if *line == "node scripts/fail.js" {
            assert!(
                err.contains("Error: boom at depth\n    at deep (/workspace/scripts/fail.js:3"),
                "{err}"
            );
        }
        if *line == "node scripts/reject.mjs" {
            assert!(err.contains("TypeError: nobody handled this"), "{err}");
        }
    }
    rig.commit();
    assert_eq!(files(rig.fixture.workspace.path()), files(host.path()));
    let refused: Vec<_> = rig
        .loaded
        .events
        .denials()
        .into_iter()
        .filter(|denial| denial.bundle == "node")
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skills_script_runs_from_its_folder_and_a_hostile_one_is_refused_audited_and_survived() {
    let skills = tempfile::tempdir().unwrap();
    let folder = skills.path().join("gen");
    std::fs::create_dir_all(folder.join("scripts")).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: gen\ndescription: d\n---\n",
    )
    .unwrap();
    std::fs::write(folder.join("template.txt"), "Hello, {name}!\n").unwrap();
    std::fs::write(
        folder.join("scripts/helpers.mjs"),
        "export const fill = (template, values) => template.replace(/\\{(\\w+)\\}/g, (_, key) => values[key]);\n",
    )
    .unwrap();
    std::fs::write(
        folder.join("scripts/generate.mjs"),
        "import { readFileSync, writeFileSync } from 'node:fs';\n\
         import { fill } from './helpers.mjs';\n\
         const template = readFileSync(new URL('../template.txt', import.meta.url), 'utf8');\n\
         const [out = 'greeting.txt', name = 'world'] = process.argv.slice(2);\n\
         writeFileSync(out, fill(template, { name }));\n\
         console.log(`wrote ${out} in ${process.cwd()}`);\n",
    )
    .unwrap();
    let folder = folder.canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let outside_path = outside.path().to_owned();
    let safeguards = Safeguards {
        skills: vec![folder.clone()],
        ..Safeguards::default()
    };
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    let mut rig = Rig::bind("dir", options, safeguards, |fixture, _| {
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
        fixture.bundled_plugin(
            "node",
            &built_bundle(artifacts::PLUGINS_DIR, "node").join("node.wasm"),
        );
        let root = fixture.workspace.path();
        std::fs::create_dir_all(root.join(".cordon")).unwrap();
        std::os::unix::fs::symlink(&outside_path, root.join("linked")).unwrap();
        std::fs::write(root.join(".env"), "TOKEN=hunter2\n").unwrap();
    })
    .await;
    rig.mount_skill("gen", &folder);
    rig.activate_skill("gen");

    // The skill's script, by `node` and by its extension, from anywhere.
    let (code, out, err) = rig
        .sh("node /skills/gen/scripts/generate.mjs hello.txt Ada && mkdir -p out && cd out && /skills/gen/scripts/generate.mjs")
        .await;
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "wrote hello.txt in /workspace\nwrote greeting.txt in /workspace/out\n"
        ),
        "{err}"
    );
    rig.commit();
    assert_eq!(rig.on_disk("hello.txt").as_deref(), Some("Hello, Ada!\n"));
    assert_eq!(
        rig.on_disk("out/greeting.txt").as_deref(),
        Some("Hello, world!\n")
    );

    // A script trying what no program may.
    let attack = r#"
const fs = require("fs");
const attempts = {
  skill: () => fs.writeFileSync("/skills/gen/template.txt", "owned"),
  store: () => fs.writeFileSync(".cordon/planted", "x"),
  etc: () => fs.writeFileSync("/etc/cron.d/x", "x"),
  root: () => fs.writeFileSync("/planted", "x"),
  skills: () => fs.mkdirSync("/skills/x"),
  "through-link": () => fs.writeFileSync("linked/escaped", "x"),
  passwd: () => fs.readFileSync("/etc/passwd", "utf8"),
  climb: () => fs.readFileSync("../../../etc/passwd", "utf8"),
  process: () => require("child_process").execSync("id"),
  socket: () => require("net").connect(80, "example.com"),
  fill: () => { for (let i = 0; i < 80; i++) fs.appendFileSync("/tmp/fill", Buffer.alloc(1 << 20)); },
};
for (const [name, attempt] of Object.entries(attempts)) {
  try {
    attempt();
    console.log("DONE", name);
  } catch (error) {
    console.log("refused", name, error.code);
  }
}
console.log(Object.keys(process.env).join(","), fs.readdirSync("/").join(","));
"#;
    rig.ok("write", json!({"path": "attack.js", "content": attack}))
        .await;
    let (code, out, err) = rig.sh("HOME=/root node attack.js").await;
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("DONE"), "{out}");
    for expected in [
        "refused skill E",
        "refused store E",
        "refused etc E",
        "refused root E",
        "refused skills E",
        "refused through-link E",
        "refused passwd ENOENT",
        "refused climb E",
        "refused process ERR_SANDBOX",
        "refused socket MODULE_NOT_FOUND",
        "refused fill E",
        "HOME skills,tmp,workspace\n",
    ] {
        assert!(out.contains(expected), "{expected}: {out}");
    }
    assert!(
        err.contains("node: no space left: /tmp holds at most 64 MiB"),
        "{err}"
    );
    rig.commit();
    assert_eq!(
        std::fs::read_to_string(folder.join("template.txt")).unwrap(),
        "Hello, {name}!\n"
    );
    assert!(
        !rig.fixture
            .workspace
            .path()
            .join(".cordon/planted")
            .exists()
    );
    assert!(!outside.path().join("escaped").exists());
    let refused = rig.refused_paths("node");
    for target in [
        "/skills/gen/template.txt",
        "/workspace/.cordon/planted",
        "/etc/cron.d/x",
        "/planted",
        "/skills/x",
        "/workspace/linked/escaped",
    ] {
        assert!(
            refused.iter().any(|denied| denied == target),
            "{target}: {refused:?}"
        );
    }

    // Loops, floods and hoards are stopped; the next command runs.
    for (script, limit) in [
        ("for (;;) {}", LimitKind::Fuel),
        ("for (;;) console.log('x'.repeat(4096))", LimitKind::Output),
        (
            "const kept = []; for (;;) kept.push(new Uint8Array(1 << 24).fill(1))",
            LimitKind::Memory,
        ),
    ] {
        let line = format!("node -e \"{script}\" > /dev/null; echo after $?");
        let (code, out, err) = rig.sh(&line).await;
        assert_eq!((code, out.as_str()), (0, "after 137\n"), "{script}: {err}");
        assert!(err.contains("node: stopped:"), "{script}: {err}");
        assert!(
            rig.limits()
                .iter()
                .any(|(bundle, kind)| bundle == "node" && *kind == limit),
            "{script}: {:?}",
            rig.limits()
        );
    }
    // A recursion without end is stopped by the instance's stack limit
    // (QuickJS keeps none of its own on WASI).
    let (code, out, err) = rig
        .sh("node -e 'function f(n) { return f(n + 1) } f(0)'; echo after $?")
        .await;
    assert_eq!((code, out.as_str()), (0, "after 137\n"), "{err}");
    assert!(err.contains("node: stopped:"), "{err}");
    assert_eq!(rig.sh("node -p '6 * 7'").await.1, "42\n");
}
