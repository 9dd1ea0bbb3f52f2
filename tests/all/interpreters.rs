//! Scripts in the sandbox: a backend's `bash` runs `python3` in the bundled
//! Python interpreter, a component of its own that sees the command's
//! workspace (writable through the command's layer), the active skills'
//! folders read-only and a `/tmp` of its own, and nothing else, with
//! its own limits; a language without an interpreter fails the call, and
//! nothing ever runs on the host.

use std::path::Path;

use cordon_kernel::{Capability, LimitKind, ToolErrorKind};
use cordon_tests::{Fixture, Rig, artifacts, built_bundle};
use cordon_wasm::{Safeguards, WorkspaceOptions};
use serde_json::json;

/// Copy the built bundle in `dir` into the fixture's plugins.
fn copy_bundle(fixture: &Fixture, dir: &Path) {
    let to = fixture.plugins.path().join(dir.file_name().unwrap());
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// The dir backend over a workspace `seed` fills, with the Python interpreter.
async fn rig(transactional: bool, seed: impl FnOnce(&Path)) -> Rig {
    let options = WorkspaceOptions {
        transactional,
        seed: true,
    };
    Rig::bind("dir", options, Safeguards::default(), |fixture, _| {
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
        copy_bundle(fixture, &built_bundle(artifacts::PLUGINS_DIR, "python"));
        seed(fixture.workspace.path());
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn python_runs_a_script_of_the_workspace_in_its_own_sandbox() {
    let rig = rig(true, |root| {
        std::fs::write(root.join("data.csv"), "a,b\n1,2\n3,4\n").unwrap();
        std::fs::write(
            root.join("sum.py"),
            "import csv, sys\nrows = list(csv.DictReader(open(sys.argv[1])))\nprint(sum(int(r['b']) for r in rows))\n",
        )
        .unwrap();
    })
    .await;
    let (code, out, err) = rig.sh("python3 -c 'print(6 * 7)'").await;
    assert_eq!((code, out.as_str()), (0, "42\n"), "{err}");
    let (code, out, err) = rig.sh("python3 sum.py data.csv").await;
    assert_eq!((code, out.as_str()), (0, "6\n"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_whole_standard_library_imports_and_modules_run_as_python3_finds_them() {
    let rig = rig(true, |root| {
        std::fs::create_dir_all(root.join("tools/scripts")).unwrap();
        std::fs::write(root.join("tools/scripts/__init__.py"), "").unwrap();
        std::fs::write(
            root.join("tools/scripts/package.py"),
            "from tools.scripts.helpers import shout\nimport sys\nprint(shout(sys.argv[1]))\n",
        )
        .unwrap();
        std::fs::write(
            root.join("tools/scripts/helpers.py"),
            "def shout(text):\n    return text.upper() + '!'\n",
        )
        .unwrap();
        std::fs::write(
            root.join("tools/scripts/direct.py"),
            "from helpers import shout\nprint(shout('sibling'))\n",
        )
        .unwrap();
    })
    .await;
    // Modules no import of the interpreter's own pulled in before: the
    // DOM builder defusedxml needs, email's MIME classes, asyncio, the
    // json command line, concurrent futures, the `wave` and `mailbox`
    // formats.
    let (code, out, err) = rig
        .sh("python3 -c 'import xml.dom.minidom as m, xml.dom.expatbuilder, email.mime.text, asyncio, json.tool, concurrent.futures, wave, mailbox, zoneinfo; print(m.parseString(\"<a><b/></a>\").documentElement.firstChild.tagName)'")
        .await;
    assert_eq!((code, out.as_str()), (0, "b\n"), "{err}");
    // `-m` finds a package in the working directory; a script imports the
    // modules beside it.
    let (code, out, err) = rig.sh("python3 -m tools.scripts.package hello").await;
    assert_eq!((code, out.as_str()), (0, "HELLO!\n"), "{err}");
    let (code, out, err) = rig.sh("cd tools && python3 scripts/direct.py").await;
    assert_eq!((code, out.as_str()), (0, "SIBLING!\n"), "{err}");
    // What the WASI build cannot hold says so when imported.
    let (code, _, err) = rig.sh("python3 -c 'import ctypes'").await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("ModuleNotFoundError") || err.contains("ImportError"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_sees_the_changes_its_command_and_the_step_staged() {
    for transactional in [true, false] {
        let rig = rig(transactional, |root| {
            std::fs::write(root.join("base.txt"), "committed\n").unwrap();
        })
        .await;
        rig.ok(
            "write",
            json!({"path": "earlier.txt", "content": "staged by an earlier call\n"}),
        )
        .await;
        let (code, out, err) = rig
            .sh("echo written by this line > now.txt && python3 -c \"import os; print(open('base.txt').read() + open('earlier.txt').read() + open('now.txt').read()); print(sorted(os.listdir('.')))\"")
            .await;
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            out,
            "committed\nstaged by an earlier call\nwritten by this line\n\n['base.txt', 'earlier.txt', 'now.txt']\n"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_writes_the_workspace_through_its_commands_layer_and_has_a_tmp_of_its_own() {
    for transactional in [true, false] {
        let rig = rig(transactional, |root| {
            std::fs::write(root.join("keep.txt"), "original\n").unwrap();
            std::fs::write(root.join("old.txt"), "to remove\n").unwrap();
        })
        .await;
        let script = "import os, tempfile\n\
open('out.txt', 'w').write('written\\n')\n\
open('keep.txt', 'a').write('appended\\n')\n\
os.makedirs('reports/2024', exist_ok=True)\n\
with open('reports/2024/summary.md', 'w') as f:\n    f.write('# Summary\\n')\n\
os.rename('out.txt', 'moved.txt')\n\
os.remove('old.txt')\n\
with tempfile.NamedTemporaryFile('w', delete=False, suffix='.tmp') as t:\n    t.write('scratch')\n\
print(open(t.name).read(), t.name.startswith('/tmp/'), sorted(os.listdir('.')))\n";
        rig.ok("write", json!({"path": "produce.py", "content": script}))
            .await;
        let (code, out, err) = rig
            .sh("python3 produce.py && cat moved.txt keep.txt reports/2024/summary.md && { [ -e old.txt ] || echo removed; }")
            .await;
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            out,
            "scratch True ['keep.txt', 'moved.txt', 'produce.py', 'reports']\n\
             written\noriginal\nappended\n# Summary\nremoved\n",
            "transactional: {transactional}"
        );
        let (code, out, err) = rig
            .sh("python3 -c \"import os; print(os.listdir('/tmp'))\"")
            .await;
        assert_eq!((code, out.as_str()), (0, "[]\n"), "{err}");
        if transactional {
            assert_eq!(
                rig.on_disk("moved.txt"),
                None,
                "staged until the step commits"
            );
            rig.commit();
        }
        assert_eq!(rig.on_disk("moved.txt").as_deref(), Some("written\n"));
        assert_eq!(
            rig.on_disk("keep.txt").as_deref(),
            Some("original\nappended\n")
        );
        assert_eq!(
            rig.on_disk("reports/2024/summary.md").as_deref(),
            Some("# Summary\n")
        );
        assert_eq!(rig.on_disk("old.txt"), None);
        let refused = rig.refused_paths("python");
        assert!(refused.is_empty(), "{refused:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_writing_where_no_program_may_is_refused_and_audited() {
    let outside = tempfile::tempdir().unwrap();
    let outside_path = outside.path().to_owned();
    let rig = rig(true, |root| {
        std::fs::create_dir_all(root.join(".cordon")).unwrap();
        std::os::unix::fs::symlink(&outside_path, root.join("linked")).unwrap();
        // Sparse: it costs the disk nothing, and the host must not read it.
        std::fs::File::create(root.join("huge.bin"))
            .unwrap()
            .set_len(300 << 20)
            .unwrap();
    })
    .await;
    let script = [
        "import os",
        "attempts = {",
        "    'store': lambda: open('.cordon/planted', 'w').write('x'),",
        "    'etc': lambda: open('/etc/cron.d/x', 'w').write('x'),",
        "    'root': lambda: open('/planted', 'w').write('x'),",
        "    'skills': lambda: os.mkdir('/skills/x'),",
        "    'link': lambda: os.symlink('/etc/passwd', 'passwd'),",
        "    'through-link': lambda: open('linked/escaped', 'w').write('x'),",
        "}",
        "for name, attempt in attempts.items():",
        "    try:",
        "        attempt()",
        "        print('CHANGED', name)",
        "    except OSError:",
        "        print('refused', name)",
        "try:",
        "    with open('/tmp/fill', 'wb') as f:",
        "        for _ in range(80):",
        "            f.write(b'x' * (1 << 20))",
        "    print('FILLED')",
        "except OSError as error:",
        "    print('full')",
        "try:",
        "    open('huge.bin', 'a').write('x')",
        "    print('APPENDED')",
        "except OSError:",
        "    print('too big')",
    ]
    .join("\n");
    rig.ok("write", json!({"path": "hostile.py", "content": script}))
        .await;
    let (code, out, err) = rig.sh("python3 hostile.py").await;
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("CHANGED") && !out.contains("FILLED") && !out.contains("APPENDED"),
        "{out}"
    );
    assert_eq!(out.matches("refused").count(), 6, "{out}");
    assert!(out.contains("full") && out.contains("too big"), "{out}");
    assert!(
        err.contains(
            "python3: no space left: the files a command writes in the workspace hold at most 256 MiB"
        ),
        "{err}"
    );
    assert!(
        err.contains("python3: no space left: /tmp holds at most 64 MiB"),
        "{err}"
    );
    rig.commit();
    assert!(
        !rig.fixture
            .workspace
            .path()
            .join(".cordon/planted")
            .exists()
    );
    assert!(!rig.fixture.workspace.path().join("passwd").exists());
    assert!(!outside.path().join("escaped").exists());
    let refused = rig.refused_paths("python");
    for target in [
        "/workspace/.cordon/planted",
        "/etc/cron.d/x",
        "/planted",
        "/skills/x",
        "/workspace/passwd",
        "/workspace/linked/escaped",
    ] {
        assert!(
            refused.iter().any(|denied| denied == target),
            "{target}: {refused:?}"
        );
    }
    assert_eq!(rig.sh("echo alive").await.1, "alive\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_reaching_outside_finds_nothing_is_refused_what_exists_and_sees_no_host_secrets() {
    let rig = rig(true, |root| {
        std::fs::write(root.join(".env"), "TOKEN=hunter2\n").unwrap();
        std::fs::create_dir_all(root.join(".cordon")).unwrap();
        std::fs::write(root.join(".cordon/cordon.db"), "store").unwrap();
        std::fs::write(root.join("ok.txt"), "fine\n").unwrap();
    })
    .await;
    let probe = "import os\nfor path in ('/etc/passwd', '/root/.ssh/id_rsa', '../../../etc/passwd', '/workspace/../etc/hostname', '.cordon/cordon.db', '/skills/other/SKILL.md'):\n    try:\n        open(path).read()\n        print('READ', path)\n    except OSError as error:\n        print('refused', path, type(error).__name__)\nprint(sorted(os.listdir('/')), sorted(os.listdir('.')))\nprint(dict(os.environ))\n";
    rig.ok("write", json!({"path": "probe.py", "content": probe}))
        .await;
    let (code, out, err) = rig.sh("HOME=/root python3 probe.py").await;
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("READ"), "{out}");
    assert!(
        out.contains("['skills', 'tmp', 'workspace'] ['.env', 'ok.txt', 'probe.py']")
            || out.contains("['skills', 'tmp', 'workspace'] ['ok.txt', 'probe.py']"),
        "{out}"
    );
    assert!(
        out.contains("{'HOME': '/root'}"),
        "only the command's own variables: {out}"
    );
    for outside in ["/etc/passwd", "/root/.ssh/id_rsa"] {
        assert!(
            out.contains(&format!("refused {outside} FileNotFoundError")),
            "nothing outside the sandbox exists in it: {out}"
        );
    }
    let refused = rig.refused_paths("python");
    assert!(
        !refused
            .iter()
            .any(|denied| denied == "/etc/passwd" || denied == "/root/.ssh/id_rsa"),
        "a path the sandbox does not hold is no denial: {refused:?}"
    );
    assert!(
        refused.iter().any(|denied| denied.contains("../")),
        "climbing out is refused and audited: {refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_traceback_and_an_interpreters_own_probes_record_no_denial() {
    let rig = rig(true, |_| {}).await;
    rig.ok(
        "write",
        json!({"path": "report.py", "content": "import json, csv, pathlib\nprint(json.dumps({'ok': True}))\n"}),
    )
    .await;
    for line in ["python3 -c 'print(1)'", "python3 report.py"] {
        let (code, out, err) = rig.sh(line).await;
        assert_eq!(code, 0, "{line}: {err}");
        assert!(!out.is_empty(), "{line}");
    }
    // A traceback reads the source of every frame it prints, wherever the
    // interpreter says its modules are.
    let (code, _, err) = rig.sh("python3 -c 'import json; json.loads(\"{\")'").await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("JSONDecodeError"), "{err}");
    let refused = rig.refused_paths("python");
    assert!(
        refused.is_empty(),
        "a run that touches nothing refused records no denial: {refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_opening_a_socket_is_refused_and_audited() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let rig = rig(true, |_| {}).await;
    let line = format!(
        "python3 -c \"import socket\ntry:\n    socket.socket().connect(('127.0.0.1', {port}))\n    print('CONNECTED')\nexcept OSError as error:\n    print('refused', type(error).__name__)\ntry:\n    socket.getaddrinfo('example.com', 80)\n    print('RESOLVED')\nexcept OSError as error:\n    print('no lookup', type(error).__name__)\""
    );
    let (code, out, err) = rig.sh(&line).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("refused") && out.contains("no lookup"),
        "{out}"
    );
    assert!(
        !out.contains("CONNECTED") && !out.contains("RESOLVED"),
        "{out}"
    );
    assert!(
        matches!(listener.accept(), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock),
        "the listener saw nothing"
    );
    assert!(
        rig.loaded
            .events
            .denials()
            .iter()
            .any(|denial| denial.bundle == "python"
                && denial.capability == Capability::Network
                && denial.target == format!("127.0.0.1:{port}")),
        "{:?}",
        rig.loaded.events.denials()
    );
    assert!(
        rig.loaded
            .events
            .denials()
            .iter()
            .any(|denial| denial.bundle == "python"
                && denial.capability == Capability::Network
                && denial.target == "example.com"
                && denial.reason.contains("looking up a name")),
        "the lookup is refused and audited: {:?}",
        rig.loaded.events.denials()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_looping_or_flooding_or_hoarding_script_is_stopped_and_the_next_command_runs() {
    let rig = rig(true, |_| {}).await;
    for (script, status, limit) in [
        ("while True: pass", 137, LimitKind::Fuel),
        ("while True: print('x' * 4096)", 137, LimitKind::Output),
        ("data = bytearray(1 << 30)", 137, LimitKind::Memory),
    ] {
        let line = format!("python3 -c \"{script}\" > /dev/null; echo after $?");
        let (code, out, err) = rig.sh(&line).await;
        assert_eq!(code, 0, "{script}: {err}");
        assert_eq!(out, format!("after {status}\n"), "{script}");
        assert!(err.contains("python3: stopped:"), "{script}: {err}");
        assert!(
            rig.limits()
                .iter()
                .any(|(bundle, kind)| bundle == "python" && *kind == limit),
            "{script}: {:?}",
            rig.limits()
        );
    }
    let (code, out, _) = rig.sh("python3 -c 'print(1)'").await;
    assert_eq!((code, out.as_str()), (0, "1\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_ends_within_the_commands_time_limit() {
    let rig = rig(true, |_| {}).await;
    let started = std::time::Instant::now();
    let done = rig
        .ok("bash", json!({"command": "python3 -c 'import time\nwhile True: time.sleep(0.01)'", "timeout_ms": 1500}))
        .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(done["exit_code"], 124, "{done}");
    let err = done["stderr"].as_str().unwrap();
    assert!(
        err.contains("python3: stopped: did not finish within"),
        "{err}"
    );
    assert!(
        rig.limits()
            .iter()
            .any(|(bundle, kind)| bundle == "python" && *kind == LimitKind::Timeout)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_language_without_an_interpreter_fails_the_call_saying_so() {
    let rig = rig(true, |root| {
        std::fs::write(root.join("x.rb"), "puts 1\n").unwrap();
    })
    .await;
    for line in ["ruby x.rb", "./x.rb", "node -e 1"] {
        let error = rig
            .call("bash", json!({ "command": line }))
            .await
            .expect_err("no interpreter, no run");
        assert_eq!(error.kind, ToolErrorKind::Failed, "{line}");
        assert!(
            error.message.starts_with("no sandboxed interpreter for ."),
            "{line}: {}",
            error.message
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_reads_an_active_skills_folder_and_nothing_of_an_inactive_one() {
    let skills = tempfile::tempdir().unwrap();
    let folder = skills.path().join("report");
    std::fs::create_dir_all(folder.join("scripts")).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: report\ndescription: d\n---\n",
    )
    .unwrap();
    std::fs::write(folder.join("format.md"), "columns: a, b\n").unwrap();
    std::fs::write(
        folder.join("scripts/show.py"),
        "import sys\nprint(open('/skills/report/format.md').read().strip(), sys.argv[1:])\n",
    )
    .unwrap();
    let folder = folder.canonicalize().unwrap();
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
        copy_bundle(fixture, &built_bundle(artifacts::PLUGINS_DIR, "python"));
    })
    .await;
    rig.mount_skill("report", &folder);
    let inactive = rig
        .call(
            "bash",
            json!({"command": "python3 /skills/report/scripts/show.py"}),
        )
        .await;
    let output = inactive.expect("the shell runs");
    assert_ne!(output["exit_code"], 0, "{output}");
    rig.activate_skill("report");
    let (code, out, err) = rig.sh("python3 /skills/report/scripts/show.py one").await;
    assert_eq!(
        (code, out.as_str()),
        (0, "columns: a, b ['one']\n"),
        "{err}"
    );
    let (code, out, err) = rig
        .sh("cd /skills/report && python3 scripts/show.py two && python3 -c \"open('/skills/report/x', 'w')\"")
        .await;
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, "columns: a, b ['two']\n");
    assert!(err.contains("Error"), "{err}");
    assert!(!folder.join("x").exists());
}
