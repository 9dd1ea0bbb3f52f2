//! The neutral built-in tools through each bundled sandbox backend, with real
//! components: the same calls give the same answers on `dir` (direct and
//! transactional) and `memory`; writes land where the write mode says; escapes
//! by `..`, absolute paths and planted symlinks are refused; a hostile backend
//! is stopped while the host keeps running.

use std::path::Path;

use cordon_kernel::{Capability, Event, FileState, LimitKind, ToolErrorKind};
use cordon_tests::{Fixture, Rig, artifacts};
use cordon_wasm::{Safeguards, WorkspaceOptions, WriteMode};
use serde_json::json;

/// How a test binds its workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setup {
    DirDirect,
    DirTransactional,
    Memory,
    MemoryEmpty,
}

/// Every setup whose workspace starts from the seeded folder.
const SEEDED: [Setup; 3] = [Setup::DirDirect, Setup::DirTransactional, Setup::Memory];

const SECRET: &str = "TOP SECRET outside the workspace";

fn seed(root: &Path, outside: &Path) {
    let files = [
        ("README.md", "# Demo\nCordon runs tools.\n"),
        ("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n"),
        (
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        ),
        ("docs/guide.md", "Step one.\nStep two.\n"),
    ];
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("planted")).unwrap();
    std::os::unix::fs::symlink(outside, root.join("outside-dir")).unwrap();
}

/// A seeded workspace bound to a bundled backend as `setup` says.
async fn rig(setup: Setup) -> Rig {
    let name = match setup {
        Setup::DirDirect | Setup::DirTransactional => "dir",
        Setup::Memory | Setup::MemoryEmpty => "memory",
    };
    let options = WorkspaceOptions {
        transactional: setup == Setup::DirTransactional,
        seed: setup != Setup::MemoryEmpty,
    };
    bind(name, options, |fixture| {
        fixture.bundled_plugin(name, Path::new(artifacts::DIR));
    })
    .await
}

/// A sandbox bundle named `name` granted the workspace folder in `mode`, with
/// `limits` (TOML) and `component`, bound with `options`.
async fn custom(
    name: &str,
    mode: &str,
    limits: &str,
    component: &str,
    options: WorkspaceOptions,
) -> Rig {
    let manifest = format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\nkind = \"sandbox\"\ncomponent = \"tool.wasm\"\n[[grants.dirs]]\nhost = \".\"\nguest = \"/workspace\"\nmode = \"{mode}\"\n[limits]\n{limits}"
    );
    bind(name, options, |fixture| {
        fixture.bundle(name, &manifest, Path::new(component));
    })
    .await
}

/// A seeded workspace with the bundles `add` puts in, bound to `name`.
async fn bind(name: &str, options: WorkspaceOptions, add: impl FnOnce(&Fixture)) -> Rig {
    Rig::bind(name, options, Safeguards::default(), |fixture, outside| {
        seed(fixture.workspace.path(), outside);
        add(fixture);
    })
    .await
}

#[tokio::test]
async fn reads_globs_and_greps_answer_alike_on_every_backend() {
    for setup in SEEDED {
        let rig = rig(setup).await;
        let read = rig.ok("read", json!({"path": "README.md"})).await;
        assert_eq!(read["content"], "# Demo\nCordon runs tools.\n", "{setup:?}");
        let part = rig
            .ok(
                "read",
                json!({"path": "src/main.rs", "offset": 2, "limit": 1}),
            )
            .await;
        assert_eq!(part["content"], "    println!(\"hi\");\n", "{setup:?}");
        assert_eq!(part["total_lines"], 3, "{setup:?}");

        let globbed = rig.ok("glob", json!({"pattern": "**/*.rs"})).await;
        assert_eq!(
            globbed["files"],
            json!(["src/lib.rs", "src/main.rs"]),
            "{setup:?}"
        );

        let found = rig.ok("grep", json!({"pattern": r"fn \w+\("})).await;
        let lines: Vec<(String, u64)> = found["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| {
                (
                    hit["path"].as_str().unwrap().to_owned(),
                    hit["line"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            lines,
            [("src/lib.rs".to_owned(), 1), ("src/main.rs".to_owned(), 1)],
            "{setup:?}"
        );
        let docs = rig
            .ok(
                "grep",
                json!({"pattern": "step", "glob": "**/*.md", "case_insensitive": true}),
            )
            .await;
        assert_eq!(docs["matches"].as_array().unwrap().len(), 2, "{setup:?}");
        let capped = rig
            .ok("grep", json!({"pattern": "Step", "max_matches": 1}))
            .await;
        assert_eq!(capped["truncated"], true, "{setup:?}");

        let missing = rig
            .call("read", json!({"path": "nope.txt"}))
            .await
            .unwrap_err();
        assert_eq!(missing.kind, ToolErrorKind::Failed, "{setup:?}: {missing}");
        let bad = rig
            .call("read", json!({"file": "README.md"}))
            .await
            .unwrap_err();
        assert_eq!(bad.kind, ToolErrorKind::InvalidInput, "{setup:?}");
        let regex = rig.call("grep", json!({"pattern": "("})).await.unwrap_err();
        assert_eq!(
            regex.kind,
            ToolErrorKind::InvalidInput,
            "{setup:?}: {regex}"
        );
    }
}

#[tokio::test]
async fn an_unseeded_memory_workspace_starts_empty() {
    let rig = rig(Setup::MemoryEmpty).await;
    assert_eq!(
        rig.ok("glob", json!({"pattern": "**/*"})).await["files"],
        json!([])
    );
    assert!(
        rig.call("read", json!({"path": "README.md"}))
            .await
            .is_err()
    );
    rig.ok("write", json!({"path": "a.txt", "content": "made here"}))
        .await;
    assert_eq!(
        rig.ok("read", json!({"path": "a.txt"})).await["content"],
        "made here"
    );
    assert_eq!(rig.workspace.mode(), WriteMode::Staged { publishes: false });
}

#[tokio::test]
async fn writes_and_edits_land_where_the_write_mode_says() {
    for setup in SEEDED {
        let rig = rig(setup).await;
        rig.ok(
            "write",
            json!({"path": "notes/todo.txt", "content": "ship it\n"}),
        )
        .await;
        rig.ok(
            "edit",
            json!({"path": "src/lib.rs", "old_string": "a + b", "new_string": "a.wrapping_add(b)"}),
        )
        .await;
        let seen = rig.ok("read", json!({"path": "src/lib.rs"})).await;
        assert!(
            seen["content"]
                .as_str()
                .unwrap()
                .contains("a.wrapping_add(b)"),
            "{setup:?}"
        );
        assert_eq!(
            rig.ok("read", json!({"path": "notes/todo.txt"})).await["content"],
            "ship it\n",
            "{setup:?}"
        );

        let before_commit = rig.on_disk("notes/todo.txt");
        let changes = rig.commit();
        let after_commit = rig.on_disk("notes/todo.txt");
        match setup {
            Setup::DirDirect => {
                assert_eq!(rig.workspace.mode(), WriteMode::Direct);
                assert_eq!(before_commit.as_deref(), Some("ship it\n"));
                assert!(changes.is_empty(), "direct writes stage nothing");
            }
            Setup::DirTransactional => {
                assert_eq!(rig.workspace.mode(), WriteMode::Staged { publishes: true });
                assert_eq!(
                    before_commit, None,
                    "nothing reaches the folder before the commit"
                );
                assert_eq!(after_commit.as_deref(), Some("ship it\n"));
            }
            Setup::Memory | Setup::MemoryEmpty => {
                assert_eq!(before_commit, None);
                assert_eq!(
                    after_commit, None,
                    "a memory workspace never writes the folder"
                );
                assert!(rig.on_disk("src/lib.rs").unwrap().contains("a + b"));
            }
        }
        if setup != Setup::DirDirect {
            let lib = changes
                .iter()
                .find(|change| change.path == "src/lib.rs")
                .unwrap_or_else(|| panic!("{setup:?}: {changes:?}"));
            assert!(matches!(&lib.before, FileState::File(old) if old.ends_with(b"a + b\n}\n")));
            assert!(
                matches!(&lib.after, FileState::File(new) if new.ends_with(b"a.wrapping_add(b)\n}\n"))
            );
            let todo = changes
                .iter()
                .find(|change| change.path == "notes/todo.txt")
                .unwrap();
            assert_eq!(todo.before, FileState::Absent);
            // Committed changes stay visible after the commit.
            assert_eq!(
                rig.ok("read", json!({"path": "notes/todo.txt"})).await["content"],
                "ship it\n"
            );
        }
    }
}

#[tokio::test]
async fn an_edit_needs_exactly_one_occurrence() {
    for setup in SEEDED {
        let rig = rig(setup).await;
        let twice = rig
            .call(
                "edit",
                json!({"path": "docs/guide.md", "old_string": "Step", "new_string": "Stage"}),
            )
            .await
            .unwrap_err();
        assert_eq!(
            twice.kind,
            ToolErrorKind::InvalidInput,
            "{setup:?}: {twice}"
        );
        let never = rig
            .call(
                "edit",
                json!({"path": "docs/guide.md", "old_string": "Leap", "new_string": "x"}),
            )
            .await
            .unwrap_err();
        assert_eq!(
            never.kind,
            ToolErrorKind::InvalidInput,
            "{setup:?}: {never}"
        );
        assert_eq!(
            rig.on_disk("docs/guide.md").unwrap(),
            "Step one.\nStep two.\n"
        );
    }
}

#[tokio::test]
async fn bash_runs_its_command_language_inside_every_backend() {
    for setup in SEEDED {
        let rig = rig(setup).await;
        assert_eq!(
            rig.sh("ls src").await,
            (0, "lib.rs\nmain.rs\n".into(), String::new()),
            "{setup:?}"
        );
        assert_eq!(
            rig.sh("cat README.md | grep -c Cordon").await.1,
            "1\n",
            "{setup:?}"
        );
        assert_eq!(
            rig.sh("echo 'hello  world' > out.txt && cat out.txt; echo done")
                .await
                .1,
            "hello  world\ndone\n",
            "{setup:?}"
        );
        assert_eq!(
            rig.sh("find . -name '*.rs' | sort | head -n 1").await.1,
            "./src/lib.rs\n",
            "{setup:?}"
        );
        assert_eq!(
            rig.sh("cd src && grep -n wrapping lib.rs || echo absent")
                .await
                .1,
            "absent\n",
            "{setup:?}"
        );
        let (code, _, stderr) = rig.sh("curl https://example.com").await;
        assert_eq!(code, 127, "{setup:?}");
        assert!(
            stderr.contains("curl: command not found"),
            "{setup:?}: {stderr}"
        );
        let piped = rig
            .ok(
                "bash",
                json!({"command": "sort | uniq -c", "stdin": "b\na\nb\n"}),
            )
            .await;
        assert!(
            piped["stdout"].as_str().unwrap().contains("2 b"),
            "{setup:?}: {piped}"
        );
        let in_dir = rig
            .ok("bash", json!({"command": "pwd", "cwd": "src"}))
            .await;
        assert_eq!(in_dir["stdout"], "/src\n", "{setup:?}");

        let on_disk = rig.on_disk("out.txt");
        rig.commit();
        match setup {
            Setup::DirDirect => assert_eq!(on_disk.as_deref(), Some("hello  world\n")),
            Setup::DirTransactional => {
                assert_eq!(on_disk, None);
                assert_eq!(rig.on_disk("out.txt").as_deref(), Some("hello  world\n"));
            }
            Setup::Memory | Setup::MemoryEmpty => assert_eq!(rig.on_disk("out.txt"), None),
        }
    }
}

#[tokio::test]
async fn the_shell_language_runs_inside_the_backend_and_a_runaway_line_stops_at_a_limit() {
    let rig = rig(Setup::DirTransactional).await;
    let line = "count() { local n=0; for f in \"$@\"; do n=$((n + 1)); done; echo $n; }\n\
                cat > notes.md <<'EOF'\n# Notes\nEOF\n\
                echo \"files: $(count src/*.rs) $(wc -l < notes.md)\"\n\
                [[ -f notes.md ]] && case notes.md in *.md) echo markdown ;; esac";
    let (code, stdout, stderr) = rig.sh(line).await;
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (0, "files: 2 1\nmarkdown\n", "")
    );
    for runaway in [":(){ :|:& };:", "f() { f; }; f", "while true; do :; done"] {
        let (code, _, stderr) = rig.sh(runaway).await;
        assert_eq!(code, 137, "{runaway}: {stderr}");
        assert!(stderr.contains("limit exceeded"), "{runaway}: {stderr}");
    }
    let (code, stderr) = rig
        .call(
            "bash",
            json!({"command": "while :; do :; done", "timeout_ms": 300}),
        )
        .await
        .map(|result| {
            (
                result["exit_code"].as_i64().unwrap(),
                result["stderr"].as_str().unwrap().to_owned(),
            )
        })
        .unwrap();
    assert_eq!(code, 124, "{stderr}");
    let limits: Vec<(String, LimitKind, String)> = rig
        .loaded
        .events
        .snapshot()
        .into_iter()
        .filter_map(|event| match event {
            Event::LimitExceeded {
                bundle,
                limit,
                detail,
                ..
            } => Some((bundle, limit, detail)),
            _ => None,
        })
        .collect();
    let shell = |limit: LimitKind, needle: &str| {
        limits.iter().any(|(bundle, kind, detail)| {
            bundle == "dir" && *kind == limit && detail.contains(needle)
        })
    };
    assert!(
        shell(LimitKind::Shell, "nest more than 200 deep"),
        "{limits:?}"
    );
    assert!(shell(LimitKind::Shell, "commands run"), "{limits:?}");
    assert!(shell(LimitKind::Timeout, "timed out after"), "{limits:?}");
    assert_eq!(rig.sh("echo alive").await.1, "alive\n");
}

#[tokio::test]
async fn escapes_are_refused_and_audited_on_every_backend() {
    for setup in SEEDED {
        let rig = rig(setup).await;
        for (tool, args) in [
            ("read", json!({"path": "../outside.txt"})),
            ("read", json!({"path": "/etc/passwd"})),
            ("write", json!({"path": "../escaped.txt", "content": "x"})),
            (
                "edit",
                json!({"path": "src/../../x", "old_string": "a", "new_string": "b"}),
            ),
            ("grep", json!({"pattern": "root", "path": "/etc"})),
            ("glob", json!({"pattern": "../*"})),
            ("bash", json!({"command": "ls", "cwd": "../.."})),
        ] {
            let error = rig.call(tool, args.clone()).await.unwrap_err();
            assert_eq!(
                error.kind,
                ToolErrorKind::Denied,
                "{setup:?} {tool} {args}: {error}"
            );
        }
        let denials = rig.denials();
        assert!(
            denials.contains(&(Capability::Filesystem, "../outside.txt".to_owned())),
            "{setup:?}: {denials:?}"
        );
        assert!(
            !rig.fixture
                .workspace
                .path()
                .parent()
                .unwrap()
                .join("escaped.txt")
                .exists()
        );

        for line in [
            "cat /etc/passwd",
            "cat ../../../../etc/passwd",
            "cat planted",
            "cat outside-dir/secret.txt",
            "ls outside-dir",
            "cp planted copy.txt && cat copy.txt",
        ] {
            let (code, stdout, _) = rig.sh(line).await;
            assert_ne!(code, 0, "{setup:?} `{line}` succeeded");
            assert!(
                !stdout.contains(SECRET),
                "{setup:?} `{line}` leaked the secret"
            );
        }
        for args in [
            json!({"path": "planted"}),
            json!({"path": "outside-dir/secret.txt"}),
        ] {
            let error = rig.call("read", args.clone()).await.unwrap_err();
            assert!(!error.message.contains(SECRET), "{setup:?} {args}");
        }
        let swept = rig.ok("grep", json!({"pattern": "TOP SECRET"})).await;
        assert_eq!(
            swept["matches"],
            json!([]),
            "{setup:?}: grep followed a symlink out"
        );
        let (_, found, _) = rig.sh("grep -r SECRET . ; find . -name secret.txt").await;
        assert!(!found.contains("secret"), "{setup:?}: {found}");

        // Overwriting a planted symlink replaces the link, never its target.
        rig.ok("write", json!({"path": "planted", "content": "replaced"}))
            .await;
        rig.commit();
        assert_eq!(
            std::fs::read_to_string(rig.outside.path().join("secret.txt")).unwrap(),
            SECRET,
            "{setup:?}"
        );
    }
}

#[tokio::test]
async fn a_read_only_grant_refuses_direct_writes() {
    let options = WorkspaceOptions {
        transactional: false,
        seed: true,
    };
    let rig = custom("viewer", "ro", "", artifacts::DIR, options).await;
    assert_eq!(rig.workspace.mode(), WriteMode::Direct);
    let error = rig
        .call("write", json!({"path": "new.txt", "content": "x"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Denied, "{error}");
    let (code, _, _) = rig.sh("echo x > new.txt").await;
    assert_ne!(code, 0);
    assert_eq!(rig.on_disk("new.txt"), None);
    assert_eq!(
        rig.ok("read", json!({"path": "README.md"})).await["content"],
        "# Demo\nCordon runs tools.\n"
    );
}

#[tokio::test]
async fn binding_names_a_missing_or_wrong_backend() {
    let fixture = Fixture::new();
    fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
    fixture.bundled_plugin("jq", Path::new(artifacts::JQ));
    let loaded = fixture.load().await;
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    let unknown = loaded.plugins.workspace("nfs", options).err().unwrap();
    assert!(unknown.to_string().contains("[dir]"), "{unknown}");
    let wrong = loaded.plugins.workspace("jq", options).err().unwrap();
    assert!(wrong.to_string().contains("tool bundle"), "{wrong}");
}

#[tokio::test]
async fn a_hostile_backend_is_refused_and_the_host_keeps_running() {
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    let limits = "memory-mib = 64\ntimeout-ms = 2000\nlog-kib = 4\n";
    let rig = custom("hostile", "rw", limits, artifacts::HOSTILE_BACKEND, options).await;
    let attempt = |name: &'static str| {
        let rig = &rig;
        async move { rig.call("read", json!({ "path": name })).await }
    };
    for name in ["stage-escape", "stage-absolute", "stage-store"] {
        let error = attempt(name).await.unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::Denied, "{name}: {error}");
    }
    assert!(rig.staged().is_empty(), "nothing escaped into staging");
    let denials = rig.denials();
    assert!(
        denials.contains(&(Capability::Filesystem, "../outside.txt".to_owned())),
        "{denials:?}"
    );
    assert!(
        denials.contains(&(Capability::Filesystem, "/etc/cordon-test".to_owned())),
        "{denials:?}"
    );
    assert!(
        denials.contains(&(
            Capability::Filesystem,
            "src/../.cordon/cordon.db".to_owned()
        )),
        "{denials:?}"
    );

    for name in ["host-file", "climb", "symlink", "write-folder"] {
        let error = attempt(name).await.unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::Denied, "{name}: {error}");
        assert!(!error.message.contains(SECRET));
    }
    assert_eq!(
        rig.on_disk("written-directly.txt"),
        None,
        "a transactional backend cannot write its folder"
    );
    assert_eq!(
        attempt("socket").await.unwrap_err().kind,
        ToolErrorKind::Denied
    );
    assert!(
        rig.denials()
            .iter()
            .any(|(capability, _)| *capability == Capability::Network)
    );
    let env = attempt("env").await.unwrap();
    assert_eq!(env["content"], "", "no environment variable is granted");

    assert_eq!(
        attempt("loop").await.unwrap_err().kind,
        ToolErrorKind::Timeout
    );
    assert_eq!(
        attempt("alloc").await.unwrap_err().kind,
        ToolErrorKind::Limit
    );
    assert_eq!(
        attempt("print").await.unwrap_err().kind,
        ToolErrorKind::Limit
    );

    // A FIFO blocks the backend's thread in a system call no interrupt
    // reaches: the call still ends soon after its deadline, and the thread is
    // left behind.
    let pipe = rig.fixture.workspace.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status();
    assert!(made.unwrap().success());
    let started = std::time::Instant::now();
    let stuck = attempt("fifo").await.unwrap_err();
    assert_eq!(stuck.kind, ToolErrorKind::Timeout, "{stuck}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // Let the abandoned thread finish, so the test's runtime can shut down.
    drop(std::fs::OpenOptions::new().write(true).open(&pipe).unwrap());
    // Still serving after every attempt.
    assert_eq!(attempt("env").await.unwrap()["content"], "");
}

#[tokio::test]
async fn a_fifo_in_the_folder_never_blocks_a_read_or_a_search() {
    for setup in [Setup::DirDirect, Setup::DirTransactional, Setup::Memory] {
        let rig = rig(setup).await;
        let made = std::process::Command::new("mkfifo")
            .arg(rig.fixture.workspace.path().join("pipe"))
            .status()
            .unwrap();
        assert!(made.success());
        let error = rig.call("read", json!({"path": "pipe"})).await.unwrap_err();
        assert_eq!(
            error.kind,
            ToolErrorKind::InvalidInput,
            "{setup:?}: {error}"
        );
        let found = rig.ok("grep", json!({"pattern": "Cordon"})).await;
        assert_eq!(found["matches"].as_array().unwrap().len(), 1, "{setup:?}");
        let (code, _, _) = rig.sh("cat pipe").await;
        assert_ne!(code, 0, "{setup:?}");
        let (_, listed, _) = rig.sh("grep -r Cordon .").await;
        assert!(listed.contains("README.md"), "{setup:?}: {listed}");
        let written = rig
            .call("write", json!({"path": "pipe", "content": "a file now"}))
            .await;
        if setup == Setup::DirDirect {
            let error = written.unwrap_err();
            assert_eq!(error.kind, ToolErrorKind::InvalidInput, "{error}");
        } else {
            written.unwrap();
            rig.commit();
        }
        let replaced = setup == Setup::DirTransactional;
        let pipe = rig.fixture.workspace.path().join("pipe");
        assert_eq!(pipe.metadata().unwrap().is_file(), replaced, "{setup:?}");
    }
}

#[tokio::test]
async fn a_backend_of_a_direct_run_holds_no_staging_and_cannot_stage() {
    let options = WorkspaceOptions {
        transactional: false,
        seed: true,
    };
    let limits = "timeout-ms = 2000\n";
    let rig = custom("hostile", "rw", limits, artifacts::HOSTILE_BACKEND, options).await;
    assert_eq!(rig.workspace.mode(), WriteMode::Direct);
    assert!(rig.workspace.ledger().is_none());
    let error = rig
        .call("read", json!({"path": "stage-escape"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Denied, "{error}");
    let denials = rig.loaded.events.denials();
    let refusal = denials
        .iter()
        .find(|denial| denial.target == "../outside.txt")
        .unwrap_or_else(|| panic!("{denials:?}"));
    assert!(
        refusal.reason.contains("no staged workspace"),
        "{refusal:?}"
    );
    assert!(
        !rig.fixture
            .workspace
            .path()
            .parent()
            .unwrap()
            .join("outside.txt")
            .exists()
    );
    // Still serving.
    assert!(rig.call("read", json!({"path": "env"})).await.is_ok());
}
