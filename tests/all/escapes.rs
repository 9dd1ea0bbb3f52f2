//! The host's own guarantees, tried by an attacker who writes the components
//! and the model's output: the run store's folder is out of reach of every
//! component by every route (the built-in tools on each bundled backend, a
//! tool's own directory grant, symbolic and hard links planted by the test or
//! by a component, `..`), file rules hold for every tool alike, publishing
//! never goes through a link, staging is bounded, and no path with a control
//! character crosses the workspace boundary. Every refusal is audited and the
//! host keeps serving.

use std::path::Path;

use cordon_kernel::{Capability, FileRules, ToolErrorKind};
use cordon_tests::{Fixture, Loaded, Rig, artifacts, manifest};
use cordon_wasm::{Holds, Reserved, Safeguards, WorkspaceOptions};
use serde_json::{Value, json};

/// What the stand-in for the run store holds.
const STORE: &str = "STORE-BYTES do not leak";
/// What the denied `.env` holds.
const SECRET: &str = "API_KEY=sk-SECRET-VALUE";

/// A project with a run store, a secret and a lock file, and the links an
/// earlier run or a careless user left: `lnk -> .`, `sub/up -> ..`,
/// `config.txt -> .env`, and a hard link `hl.db` to the store.
fn project(root: &Path) {
    for (path, text) in [
        ("README.md", "# Project\nCordon runs tools.\n"),
        ("src/main.rs", "fn main() {}\n"),
        (".env", SECRET),
        ("Cargo.lock", "lock v1\n"),
        (".cordon/cordon.db", STORE),
        ("vendor/lib.rs", "// vendored\n"),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::os::unix::fs::symlink(".", root.join("lnk")).unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::os::unix::fs::symlink("..", root.join("sub/up")).unwrap();
    std::os::unix::fs::symlink(".env", root.join("config.txt")).unwrap();
    std::fs::hard_link(root.join(".cordon/cordon.db"), root.join("hl.db")).unwrap();
}

/// The run's rules: `.env` files and keys denied, the lock file and vendored
/// code read-only.
fn rules() -> Safeguards {
    Safeguards {
        files: FileRules::new()
            .with(&["**/.env", "**/*.pem"], &["Cargo.lock", "vendor"])
            .unwrap(),
        ..Safeguards::default()
    }
}

/// How a test binds the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setup {
    DirTransactional,
    DirDirect,
    Memory,
}

const SETUPS: [Setup; 3] = [Setup::DirTransactional, Setup::DirDirect, Setup::Memory];

async fn rig(setup: Setup, safeguards: Safeguards) -> Rig {
    let name = match setup {
        Setup::DirTransactional | Setup::DirDirect => "dir",
        Setup::Memory => "memory",
    };
    let options = WorkspaceOptions {
        transactional: setup == Setup::DirTransactional,
        seed: true,
    };
    Rig::bind(name, options, safeguards, |fixture, _| {
        project(fixture.workspace.path());
        fixture.bundled_plugin(name, Path::new(artifacts::DIR));
    })
    .await
}

/// A sandbox bundle named `name` of `component` granted the project in
/// `mode`, with `extra` manifest TOML after its `[plugin]` fields, bound
/// with `options` under the rules.
async fn custom(
    name: &str,
    mode: &str,
    extra: &str,
    component: &str,
    options: WorkspaceOptions,
) -> Rig {
    let manifest = format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\nkind = \"sandbox\"\ncomponent = \"tool.wasm\"\n{extra}\n[[grants.dirs]]\nhost = \".\"\nguest = \"/workspace\"\nmode = \"{mode}\"\n"
    );
    Rig::bind(name, options, rules(), |fixture, _| {
        project(fixture.workspace.path());
        fixture.bundle(name, &manifest, Path::new(component));
    })
    .await
}

fn store_intact(root: &Path) {
    let store = root.join(".cordon/cordon.db");
    assert_eq!(
        std::fs::read_to_string(store).ok().as_deref(),
        Some(STORE),
        "the store is untouched"
    );
}

/// Whether `text` shows anything of the store or the secret.
fn leaks(text: &str) -> bool {
    text.contains("STORE-BYTES") || text.contains("sk-SECRET")
}

#[tokio::test]
async fn the_store_is_out_of_reach_of_the_workspace_tools_on_every_backend() {
    for setup in SETUPS {
        let rig = rig(setup, Safeguards::default()).await;
        for path in [
            ".cordon/cordon.db",
            "lnk/.cordon/cordon.db",
            "sub/up/.cordon/cordon.db",
            "lnk/lnk/.cordon/cordon.db",
            "hl.db",
        ] {
            let read = rig.call("read", json!({ "path": path })).await;
            let error = read.expect_err(path);
            assert_eq!(
                error.kind,
                ToolErrorKind::Denied,
                "{setup:?} {path}: {error}"
            );
            assert!(!leaks(&error.message), "{setup:?} {path}");
        }
        for line in [
            "cat lnk/.cordon/cordon.db",
            "cat sub/up/.cordon/cordon.db",
            "cat hl.db",
            "cat lnk/.cordon/*",
            "grep -r STORE .",
            "grep -r STORE lnk/",
            "head -c 100 lnk/.cordon/cordon.db",
            "cp lnk/.cordon/cordon.db copy.db && cat copy.db",
            "ls -a lnk lnk/.cordon",
            "find . -name 'cordon*'",
        ] {
            let (_, out, err) = rig.sh(line).await;
            assert!(!leaks(&out), "{setup:?} `{line}`: {out}");
            assert!(
                !out.contains(".cordon"),
                "{setup:?} `{line}` lists it: {out}"
            );
            assert!(!leaks(&err), "{setup:?} `{line}`: {err}");
        }
        let (_, listed, _) = rig.sh("ls -a").await;
        assert!(!listed.contains(".cordon"), "{setup:?}: {listed}");
        let globbed = rig.ok("glob", json!({"pattern": "**/cordon.db"})).await;
        assert_eq!(globbed["files"], json!([]), "{setup:?}");
        let found = rig.ok("grep", json!({"pattern": "STORE"})).await;
        assert_eq!(found["matches"], json!([]), "{setup:?}");

        for (tool, args) in [
            (
                "write",
                json!({"path": "lnk/.cordon/cordon.db", "content": "gone"}),
            ),
            (
                "write",
                json!({"path": "sub/up/.cordon/cordon.db", "content": "gone"}),
            ),
            (
                "write",
                json!({"path": ".cordon/cordon.db", "content": "gone"}),
            ),
            (
                "edit",
                json!({"path": "hl.db", "old_string": "STORE", "new_string": "X"}),
            ),
        ] {
            let error = rig.call(tool, args.clone()).await.expect_err(tool);
            assert!(
                matches!(error.kind, ToolErrorKind::Denied | ToolErrorKind::Failed),
                "{setup:?} {tool} {args}: {error}"
            );
        }
        for line in [
            "rm -rf lnk/.cordon",
            "rm -rf sub/up/.cordon",
            "mv lnk/.cordon gone",
            "echo gone > lnk/.cordon/cordon.db",
            "echo gone >> hl.db",
        ] {
            let (code, _, _) = rig.sh(line).await;
            assert_ne!(code, 0, "{setup:?} `{line}` succeeded");
        }
        rig.commit();
        store_intact(rig.fixture.workspace.path());
        assert_eq!(rig.on_disk("hl.db").as_deref(), Some(STORE), "{setup:?}");
        assert!(
            rig.denials()
                .iter()
                .any(|(capability, _)| *capability == Capability::Filesystem),
            "{setup:?}: refusals are audited"
        );
        assert_eq!(
            rig.ok("read", json!({"path": "README.md"})).await["content"],
            "# Project\nCordon runs tools.\n",
            "{setup:?}: still serving"
        );
    }
}

/// Every `.cordon` folder or file under the workspace root but the root's own.
fn nested_cordon_folders(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if path == root.join(".cordon") {
                continue;
            }
            if entry.file_name() == ".cordon" {
                found.push(path.strip_prefix(root).unwrap().display().to_string());
            }
            if kind.is_dir() {
                pending.push(path);
            }
        }
    }
    found
}

#[tokio::test]
async fn no_tool_plants_changes_or_removes_operator_files_at_any_depth_on_any_backend() {
    for setup in SETUPS {
        let rig = rig(setup, Safeguards::default()).await;
        let root = rig.fixture.workspace.path().to_owned();
        // A cloned repository's own `.cordon`, which a run may read.
        std::fs::create_dir_all(root.join("repo/.cordon")).unwrap();
        std::fs::write(root.join("repo/.cordon/config.toml"), "max-instances = 4\n").unwrap();
        let approval = "[bundles.evil]\nsha256 = \"0000\"\n";
        for path in [
            "sub/.cordon/grants.toml",
            "a/b/.cordon/config.toml",
            "lnk/sub/.cordon/grants.toml",
            "sub/up/c/.cordon/plugins/evil/plugin.toml",
            "repo/.cordon/config.toml",
            "d/.cordon",
        ] {
            let error = rig
                .call("write", json!({ "path": path, "content": approval }))
                .await
                .expect_err(path);
            assert_eq!(
                error.kind,
                ToolErrorKind::Denied,
                "{setup:?} {path}: {error}"
            );
        }
        let edit = rig
            .call(
                "edit",
                json!({"path": "repo/.cordon/config.toml", "old_string": "4", "new_string": "400"}),
            )
            .await
            .expect_err("edit");
        assert_eq!(edit.kind, ToolErrorKind::Denied, "{setup:?}: {edit}");
        for line in [
            "mkdir -p a/b/.cordon",
            "mkdir -p e && echo x > e/.cordon",
            "mkdir f && mv f sub/.cordon",
            "mkdir -p g/h && mv g/h g/.cordon",
            "ln -s repo/.cordon linked && echo x > linked/grants.toml",
            "echo '[bundles.evil]' > lnk/repo/.cordon/grants.toml",
            "echo x >> repo/.cordon/config.toml",
            "rm -rf repo/.cordon",
            "mv repo moved",
            "cp -r repo/.cordon sub/.cordon",
        ] {
            let (code, _, _) = rig.sh(line).await;
            assert_ne!(code, 0, "{setup:?} `{line}` succeeded");
        }
        assert_eq!(
            rig.ok("read", json!({"path": "repo/.cordon/config.toml"}))
                .await["content"],
            "max-instances = 4\n",
            "{setup:?}: a nested `.cordon` is read, and never changed"
        );
        rig.commit();
        assert_eq!(
            nested_cordon_folders(&root),
            ["repo/.cordon"],
            "{setup:?}: nothing was planted"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("repo/.cordon/config.toml")).unwrap(),
            "max-instances = 4\n"
        );
        let denials = rig.loaded.events.denials();
        assert!(
            denials
                .iter()
                .any(|denial| denial.reason.contains("operator files")
                    && denial.target.contains(".cordon")),
            "{setup:?}: refusals are audited, naming the folder: {denials:?}"
        );
        assert_eq!(
            rig.ok("read", json!({"path": "README.md"})).await["content"],
            "# Project\nCordon runs tools.\n",
            "{setup:?}: still serving"
        );
    }
}

#[tokio::test]
async fn a_plugins_folder_in_the_workspace_is_read_only_to_every_tool_on_every_backend() {
    let guard = "[plugin]\nname = \"guard\"\n[config]\ndeny-tools = [\"rm\"]\n";
    for setup in SETUPS {
        let name = match setup {
            Setup::Memory => "memory",
            Setup::DirTransactional | Setup::DirDirect => "dir",
        };
        let options = WorkspaceOptions {
            transactional: setup == Setup::DirTransactional,
            seed: true,
        };
        let rig = Rig::bind_guarded(name, options, |fixture, _| {
            project(fixture.workspace.path());
            fixture.bundled_plugin(name, Path::new(artifacts::DIR));
            let folder = fixture.workspace.path().join("plugins");
            std::fs::create_dir_all(folder.join("guard")).unwrap();
            std::fs::write(folder.join("guard/plugin.toml"), guard).unwrap();
            Safeguards {
                plugins: vec![folder],
                ..Safeguards::default()
            }
        })
        .await;
        let root = rig.fixture.workspace.path().to_owned();
        for (tool, args) in [
            (
                "write",
                json!({"path": "plugins/guard/plugin.toml", "content": "[config]\n"}),
            ),
            (
                "write",
                json!({"path": "plugins/evil/plugin.toml", "content": "[plugin]\n"}),
            ),
            (
                "write",
                json!({"path": "lnk/plugins/guard/guard.wasm", "content": "x"}),
            ),
            (
                "edit",
                json!({"path": "plugins/guard/plugin.toml", "old_string": "\"rm\"", "new_string": ""}),
            ),
        ] {
            let error = rig.call(tool, args.clone()).await.expect_err(tool);
            assert_eq!(
                error.kind,
                ToolErrorKind::Denied,
                "{setup:?} {tool} {args}: {error}"
            );
        }
        for line in [
            "echo 'deny-tools = []' >> plugins/guard/plugin.toml",
            "rm -rf plugins/guard",
            "mv plugins/guard plugins/old",
            "mkdir plugins/evil",
            "mv plugins elsewhere",
        ] {
            let (code, _, _) = rig.sh(line).await;
            assert_ne!(code, 0, "{setup:?} `{line}` succeeded");
        }
        let (code, out, _) = rig.sh("cat plugins/guard/plugin.toml").await;
        assert_eq!((code, out.as_str()), (0, guard), "{setup:?}: it is read");
        rig.commit();
        assert_eq!(
            std::fs::read_to_string(root.join("plugins/guard/plugin.toml")).unwrap(),
            guard,
            "{setup:?}"
        );
        assert!(!root.join("plugins/evil").exists(), "{setup:?}");
        assert!(
            rig.loaded
                .events
                .denials()
                .iter()
                .any(|denial| denial.reason.contains("plugins folder")),
            "{setup:?}: refusals are audited"
        );
    }
}

#[tokio::test]
async fn a_backend_plants_no_operator_files_and_loosens_no_plugin_by_its_own_grant() {
    for transactional in [true, false] {
        let manifest = "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"sandbox\"\ncomponent = \"tool.wasm\"\n[limits]\ntimeout-ms = 5000\n[[grants.dirs]]\nhost = \".\"\nguest = \"/workspace\"\nmode = \"rw\"\n";
        let workspace = tempfile::tempdir().unwrap();
        let plugins = workspace.path().join("plugins");
        std::fs::create_dir_all(plugins.join("guard")).unwrap();
        std::fs::write(
            plugins.join("guard/plugin.toml"),
            "[plugin]\nname = \"guard\"\n",
        )
        .unwrap();
        let fixture = Fixture {
            workspace,
            plugins: tempfile::tempdir().unwrap(),
        };
        fixture.bundle("hostile", manifest, Path::new(artifacts::HOSTILE_BACKEND));
        let loaded = fixture
            .load_with(Safeguards {
                plugins: vec![plugins.clone()],
                ..Safeguards::default()
            })
            .await;
        let workspace = loaded
            .plugins
            .workspace(
                "hostile",
                WorkspaceOptions {
                    transactional,
                    seed: true,
                },
            )
            .unwrap();
        let attempts: &[&str] = if transactional {
            &["stage-operator-files", "stage-plugins"]
        } else {
            &["plant-operator-files", "edit-plugins"]
        };
        for attempt in attempts {
            let outcome = workspace
                .tools()
                .call(
                    "read",
                    json!({ "path": attempt }),
                    cordon_kernel::CallContext::outside_run(std::sync::Arc::new(
                        cordon_kernel::StateSnapshot::default(),
                    )),
                )
                .await;
            let error = outcome.result.expect_err(attempt);
            assert_eq!(error.kind, ToolErrorKind::Denied, "{attempt}: {error}");
            assert!(outcome.files.is_empty(), "{attempt}: nothing staged");
        }
        let root = fixture.workspace.path();
        assert!(nested_cordon_folders(root).is_empty(), "{transactional}");
        assert_eq!(
            std::fs::read_to_string(plugins.join("guard/plugin.toml")).unwrap(),
            "[plugin]\nname = \"guard\"\n"
        );
        let denials = loaded.events.denials();
        assert!(
            denials
                .iter()
                .any(|denial| denial.reason.contains("operator files"))
                && denials
                    .iter()
                    .any(|denial| denial.reason.contains("plugins folder")),
            "{denials:?}"
        );
    }
}

#[tokio::test]
async fn a_direct_run_clears_its_folder_but_never_the_store() {
    let rig = rig(Setup::DirDirect, Safeguards::default()).await;
    let (code, _, err) = rig.sh("rm -rf * .env lnk sub").await;
    assert_eq!(code, 0, "{err}");
    store_intact(rig.fixture.workspace.path());
}

/// A tool granted the whole workspace read-write at `/w`, under the rules.
async fn tool_over_workspace() -> (Fixture, Loaded) {
    let fixture = Fixture::new();
    project(fixture.workspace.path());
    fixture.bundle(
        "hostile",
        &manifest(
            "hostile",
            "[[grants.dirs]]\nhost = \".\"\nguest = \"/w\"\nmode = \"rw\"\n",
        ),
        Path::new(artifacts::HOSTILE),
    );
    let loaded = fixture.load_with(rules()).await;
    (fixture, loaded)
}

async fn refused(loaded: &Loaded, tool: &str, args: Value) {
    let shown = format!("{tool} {args}");
    let error = loaded.call(tool, args).await.expect_err(&shown);
    assert!(!leaks(&error.message), "{shown}: {}", error.message);
}

#[tokio::test]
async fn a_tool_with_a_directory_grant_cannot_reach_the_store_by_any_route() {
    let (fixture, loaded) = tool_over_workspace().await;
    for path in [
        "/w/.cordon/cordon.db",
        "/w/lnk/.cordon/cordon.db",
        "/w/sub/up/.cordon/cordon.db",
        "/w/hl.db",
    ] {
        refused(&loaded, "hostile.read-file", json!({ "path": path })).await;
        refused(&loaded, "hostile.truncate", json!({ "path": path })).await;
        refused(&loaded, "hostile.stat", json!({ "path": path })).await;
    }
    for path in ["/w/.cordon", "/w/lnk/.cordon"] {
        refused(&loaded, "hostile.list-dir", json!({ "path": path })).await;
        refused(&loaded, "hostile.remove", json!({ "path": path })).await;
        refused(
            &loaded,
            "hostile.rename",
            json!({"from": path, "to": "/w/moved"}),
        )
        .await;
    }
    for (from, to) in [
        (".cordon", "/w/to-store"),
        ("lnk/.cordon", "/w/to-store"),
        ("./.cordon/cordon.db", "/w/x"),
    ] {
        refused(
            &loaded,
            "hostile.symlink",
            json!({ "from": from, "to": to }),
        )
        .await;
    }
    for from in [
        "/w/.cordon/cordon.db",
        "/w/hl.db",
        "/w/lnk/.cordon/cordon.db",
    ] {
        refused(
            &loaded,
            "hostile.hard-link",
            json!({"from": from, "to": "/w/copy.db"}),
        )
        .await;
    }
    let listed = loaded
        .call("hostile.list-dir", json!({"path": "/w/lnk"}))
        .await
        .unwrap();
    assert!(
        !listed.content.to_string().contains(".cordon"),
        "{}",
        listed.content
    );
    let walked = loaded
        .call("hostile.walk", json!({"path": "/w"}))
        .await
        .unwrap();
    assert!(
        !walked.content.to_string().contains(".cordon"),
        "{}",
        walked.content
    );

    // A link someone planted that leads nowhere yet creates nothing in the
    // store's folder.
    std::os::unix::fs::symlink(".cordon/new.db", fixture.workspace.path().join("dangling"))
        .unwrap();
    refused(
        &loaded,
        "hostile.write-file",
        json!({"path": "/w/dangling", "content": "x"}),
    )
    .await;
    assert!(!fixture.workspace.path().join(".cordon/new.db").exists());

    // A component may plant a link to the root, but reaching the store
    // through it later still fails.
    loaded
        .call("hostile.symlink", json!({"from": ".", "to": "/w/planted"}))
        .await
        .expect("a link to the root itself is harmless");
    refused(
        &loaded,
        "hostile.read-file",
        json!({"path": "/w/planted/.cordon/cordon.db"}),
    )
    .await;

    store_intact(fixture.workspace.path());
    let root = fixture.workspace.path();
    for gone in ["to-store", "copy.db", "moved"] {
        assert!(
            root.join(gone).symlink_metadata().is_err(),
            "{gone} was created"
        );
    }
    let denials = loaded.events.denials();
    assert!(
        denials
            .iter()
            .any(|denial| denial.reason.contains("run store") && denial.bundle == "hostile"),
        "{denials:#?}"
    );
    let echoed = loaded.call("hostile.echo", json!({"still": "alive"})).await;
    assert_eq!(echoed.unwrap().content, json!({"still": "alive"}));
}

#[tokio::test]
async fn a_grant_naming_the_store_folder_is_refused_at_load() {
    for host in [".cordon", "./.cordon", "via-link"] {
        let fixture = Fixture::new();
        let root = fixture.workspace.path();
        std::fs::create_dir_all(root.join(".cordon")).unwrap();
        std::os::unix::fs::symlink(".cordon", root.join("via-link")).unwrap();
        fixture.bundle(
            "hostile",
            &manifest(
                "hostile",
                &format!("[[grants.dirs]]\nhost = \"{host}\"\nguest = \"/store\"\nmode = \"ro\"\n"),
            ),
            Path::new(artifacts::HOSTILE),
        );
        let report = fixture.report(&cordon_tests::host()).await;
        let errors: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 1, "{host}: {errors:?}");
        assert!(errors[0].contains("grants.dirs[0].host"), "{}", errors[0]);
        assert!(errors[0].contains("run store"), "{}", errors[0]);
    }
}

#[tokio::test]
async fn a_store_kept_elsewhere_under_a_grant_is_out_of_reach_too() {
    let fixture = Fixture::new();
    let root = fixture.workspace.path();
    std::fs::create_dir_all(root.join("data/runs")).unwrap();
    std::fs::write(root.join("data/runs/cordon.db"), STORE).unwrap();
    std::fs::write(root.join("data/notes.txt"), "notes").unwrap();
    fixture.bundle(
        "hostile",
        &manifest(
            "hostile",
            "[[grants.dirs]]\nhost = \"data\"\nguest = \"/data\"\nmode = \"rw\"\n",
        ),
        Path::new(artifacts::HOSTILE),
    );
    let loaded = fixture
        .load_with(Safeguards {
            reserved: vec![Reserved::new(root.join("data/runs"), Holds::RunStore)],
            ..Safeguards::default()
        })
        .await;
    refused(
        &loaded,
        "hostile.read-file",
        json!({"path": "/data/runs/cordon.db"}),
    )
    .await;
    refused(
        &loaded,
        "hostile.rename",
        json!({"from": "/data/runs", "to": "/data/x"}),
    )
    .await;
    let listed = loaded
        .call("hostile.list-dir", json!({"path": "/data"}))
        .await
        .unwrap();
    assert_eq!(listed.content, json!({"entries": ["notes.txt"]}));
    assert_eq!(
        std::fs::read_to_string(root.join("data/runs/cordon.db")).unwrap(),
        STORE
    );
}

#[tokio::test]
async fn publishing_never_goes_through_a_link() {
    let rig = rig(Setup::DirTransactional, Safeguards::default()).await;
    rig.ok("write", json!({"path": "src/new.rs", "content": "staged"}))
        .await;
    // Between the staging and the publishing, the folder changes under the
    // run: `src` becomes a link to a folder outside the workspace.
    let root = rig.fixture.workspace.path();
    std::fs::remove_dir_all(root.join("src")).unwrap();
    std::os::unix::fs::symlink(rig.outside.path(), root.join("src")).unwrap();
    rig.confirm();
    let error = rig.workspace.ledger().unwrap().publish().unwrap_err();
    assert!(error.message.contains("symbolic link"), "{error}");
    assert!(
        rig.denials()
            .contains(&(Capability::Filesystem, "src/new.rs".to_owned())),
        "the refusal is audited: {:?}",
        rig.denials()
    );
    assert!(
        !rig.outside.path().join("new.rs").exists(),
        "nothing was written through the link"
    );

    // A link at the path itself is replaced, never written through.
    let rig = rig_with_link_to_outside().await;
    rig.ok("write", json!({"path": "exit", "content": "replaced"}))
        .await;
    rig.commit();
    assert_eq!(
        std::fs::read_to_string(rig.outside.path().join("target.txt")).unwrap(),
        "outside"
    );
    let exit = rig.fixture.workspace.path().join("exit");
    assert!(exit.symlink_metadata().unwrap().is_file());
}

async fn rig_with_link_to_outside() -> Rig {
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    Rig::bind("dir", options, Safeguards::default(), |fixture, outside| {
        let root = fixture.workspace.path();
        std::fs::write(outside.join("target.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(outside.join("target.txt"), root.join("exit")).unwrap();
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
    })
    .await
}

#[tokio::test]
async fn file_rules_hold_for_every_workspace_tool_on_every_backend() {
    for setup in SETUPS {
        let rig = rig(setup, rules()).await;
        for path in [".env", "config.txt", "lnk/.env", "sub/up/.env", "key.pem"] {
            let error = rig
                .call("read", json!({ "path": path }))
                .await
                .expect_err(path);
            assert_eq!(
                error.kind,
                ToolErrorKind::Denied,
                "{setup:?} {path}: {error}"
            );
            assert!(!leaks(&error.message), "{setup:?} {path}");
        }
        let named = rig.call("read", json!({"path": ".env"})).await.unwrap_err();
        assert!(named.message.contains("**/.env"), "{setup:?}: {named}");
        for line in [
            "cat .env",
            "cat .e*",
            "cat config.txt",
            "cat lnk/.env",
            "grep -r SECRET .",
            "grep -r API_KEY lnk/",
            "cat * .* 2>&1",
            "ls -a",
            "find . -name '.env'",
        ] {
            let (_, out, err) = rig.sh(line).await;
            assert!(!leaks(&out), "{setup:?} `{line}`: {out}");
            assert!(!leaks(&err), "{setup:?} `{line}`: {err}");
        }
        let (_, listed, _) = rig.sh("ls -a").await;
        assert!(
            !listed.lines().any(|name| name == ".env"),
            "{setup:?}: {listed}"
        );
        let found = rig.ok("grep", json!({"pattern": "SECRET"})).await;
        assert_eq!(found["matches"], json!([]), "{setup:?}");
        let globbed = rig.ok("glob", json!({"pattern": "**/.env"})).await;
        assert_eq!(globbed["files"], json!([]), "{setup:?}");

        // Read-only: readable, never changed, by any tool.
        assert_eq!(
            rig.ok("read", json!({"path": "Cargo.lock"})).await["content"],
            "lock v1\n"
        );
        let (code, out, err) = rig.sh("ls vendor && cat vendor/lib.rs Cargo.lock").await;
        assert_eq!(code, 0, "{setup:?}: {err}");
        assert_eq!(out, "lib.rs\n// vendored\nlock v1\n", "{setup:?}");
        for (tool, args) in [
            ("write", json!({"path": "Cargo.lock", "content": "x"})),
            (
                "edit",
                json!({"path": "Cargo.lock", "old_string": "v1", "new_string": "v2"}),
            ),
            ("write", json!({"path": "vendor/lib.rs", "content": "x"})),
            ("write", json!({"path": ".env", "content": "API_KEY=mine"})),
        ] {
            let error = rig.call(tool, args.clone()).await.expect_err(tool);
            assert_eq!(
                error.kind,
                ToolErrorKind::Denied,
                "{setup:?} {tool} {args}: {error}"
            );
        }
        for line in [
            "echo x > Cargo.lock",
            "echo x >> Cargo.lock",
            "rm Cargo.lock",
            "mv Cargo.lock elsewhere",
            "rm -rf vendor",
            "mv vendor elsewhere",
            "echo API_KEY=mine > .env",
        ] {
            let (code, _, _) = rig.sh(line).await;
            assert_ne!(code, 0, "{setup:?} `{line}` succeeded");
        }
        rig.commit();
        assert_eq!(rig.on_disk("Cargo.lock").as_deref(), Some("lock v1\n"));
        assert_eq!(
            rig.on_disk("vendor/lib.rs").as_deref(),
            Some("// vendored\n")
        );
        assert_eq!(rig.on_disk(".env").as_deref(), Some(SECRET));
        let denials = rig.loaded.events.denials();
        assert!(
            denials
                .iter()
                .any(|denial| denial.reason.contains("`**/.env`")),
            "{setup:?}: {denials:#?}"
        );
        assert!(
            denials
                .iter()
                .any(|denial| denial.reason.contains("read-only `Cargo.lock`")),
            "{setup:?}: {denials:#?}"
        );
    }
}

#[tokio::test]
async fn file_rules_hold_for_tools_with_their_own_grants() {
    let (fixture, loaded) = tool_over_workspace().await;
    for path in ["/w/.env", "/w/config.txt", "/w/lnk/.env"] {
        refused(&loaded, "hostile.read-file", json!({ "path": path })).await;
        refused(&loaded, "hostile.stat", json!({ "path": path })).await;
    }
    for (from, to) in [(".env", "/w/alias"), ("../.env", "/w/sub/alias")] {
        refused(
            &loaded,
            "hostile.symlink",
            json!({ "from": from, "to": to }),
        )
        .await;
    }
    refused(
        &loaded,
        "hostile.hard-link",
        json!({"from": "/w/.env", "to": "/w/alias"}),
    )
    .await;
    refused(
        &loaded,
        "hostile.hard-link",
        json!({"from": "/w/Cargo.lock", "to": "/w/alias"}),
    )
    .await;
    refused(
        &loaded,
        "hostile.write-file",
        json!({"path": "/w/Cargo.lock", "content": "x"}),
    )
    .await;
    refused(
        &loaded,
        "hostile.truncate",
        json!({"path": "/w/Cargo.lock"}),
    )
    .await;
    refused(
        &loaded,
        "hostile.rename",
        json!({"from": "/w/Cargo.lock", "to": "/w/moved"}),
    )
    .await;
    refused(
        &loaded,
        "hostile.rename",
        json!({"from": "/w/vendor", "to": "/w/moved"}),
    )
    .await;
    refused(&loaded, "hostile.remove", json!({"path": "/w/vendor"})).await;
    refused(
        &loaded,
        "hostile.write-file",
        json!({"path": "/w/.env", "content": "mine"}),
    )
    .await;
    let listed = loaded
        .call("hostile.list-dir", json!({"path": "/w"}))
        .await
        .unwrap();
    assert!(
        !listed.content.to_string().contains("\".env\""),
        "{}",
        listed.content
    );

    let root = fixture.workspace.path();
    assert_eq!(
        std::fs::read_to_string(root.join("Cargo.lock")).unwrap(),
        "lock v1\n"
    );
    assert_eq!(std::fs::read_to_string(root.join(".env")).unwrap(), SECRET);
    assert!(root.join("vendor/lib.rs").exists());
    assert!(root.join("alias").symlink_metadata().is_err());
    loaded
        .call(
            "hostile.write-file",
            json!({"path": "/w/notes.txt", "content": "fine"}),
        )
        .await
        .expect("an unprotected path is writable");
}

#[tokio::test]
async fn file_rules_hold_for_the_bundled_files_tools() {
    let fixture = Fixture::new();
    project(fixture.workspace.path());
    fixture.bundled_plugin("files", Path::new(artifacts::FILES));
    let loaded = fixture.load_with(rules()).await;
    for path in [
        ".env",
        "config.txt",
        "lnk/.env",
        ".cordon/cordon.db",
        "hl.db",
    ] {
        refused(&loaded, "files.read", json!({ "path": path })).await;
    }
    for pattern in ["SECRET", "STORE"] {
        let found = loaded
            .call("files.search", json!({ "pattern": pattern }))
            .await
            .unwrap();
        assert!(!leaks(&found.content.to_string()), "{}", found.content);
    }
    let listed = loaded
        .call("files.list", json!({"pattern": "**/*"}))
        .await
        .unwrap();
    let text = listed.content.to_string();
    assert!(
        !text.contains(".env\"") && !text.contains(".cordon"),
        "{text}"
    );
}

#[tokio::test]
async fn a_backend_staging_what_the_rules_refuse_is_denied_and_stages_nothing() {
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    let rig = custom(
        "hostile",
        "rw",
        "[limits]\ntimeout-ms = 5000",
        artifacts::HOSTILE_BACKEND,
        options,
    )
    .await;
    for name in [
        "stage-through-link",
        "stage-control",
        "stage-denied",
        "get-denied",
    ] {
        let error = rig
            .call("read", json!({ "path": name }))
            .await
            .expect_err(name);
        assert_eq!(error.kind, ToolErrorKind::Denied, "{name}: {error}");
    }
    assert!(rig.staged().is_empty());
    let targets: Vec<String> = rig
        .denials()
        .into_iter()
        .map(|(_, target)| target)
        .collect();
    for target in ["lnk/.cordon/cordon.db", "a\nb", ".env"] {
        assert!(
            targets.iter().any(|seen| seen == target),
            "{target:?}: {targets:?}"
        );
    }
}

#[tokio::test]
async fn staging_past_a_calls_quota_stops_the_call_and_keeps_nothing_of_it() {
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    let rig = custom(
        "hostile",
        "rw",
        "[limits]\ntimeout-ms = 20000\nmemory-mib = 512",
        artifacts::HOSTILE_BACKEND,
        options,
    )
    .await;
    let error = rig
        .call("read", json!({"path": "stage-bomb"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Limit, "{error}");
    assert!(error.message.contains("staged-mib"), "{error}");
    assert!(rig.staged().is_empty());
    let limits: Vec<_> = rig
        .loaded
        .events
        .snapshot()
        .into_iter()
        .filter(|event| {
            matches!(
                event,
                cordon_kernel::Event::LimitExceeded {
                    limit: cordon_kernel::LimitKind::Staging,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(limits.len(), 1, "{limits:?}");
    rig.call("read", json!({"path": "stage-some"}))
        .await
        .expect("still serving, within the quota");
    assert_eq!(rig.staged().len(), 1);
}

fn big(bytes: usize) -> String {
    "x".repeat(bytes)
}

#[tokio::test]
async fn a_step_and_a_never_publishing_run_have_staging_quotas_too() {
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    let rig = custom(
        "quota",
        "rw",
        "[limits]\nstaged-mib = 1\nstep-staged-mib = 1",
        artifacts::DIR,
        options,
    )
    .await;
    rig.ok("write", json!({"path": "a.txt", "content": big(600 << 10)}))
        .await;
    let error = rig
        .call("write", json!({"path": "b.txt", "content": big(600 << 10)}))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Limit, "{error}");
    assert!(error.message.contains("step-staged-mib"), "{error}");
    let staged: Vec<String> = rig.staged().into_iter().map(|change| change.path).collect();
    assert_eq!(staged, ["a.txt"]);

    // Like `memory`: seeded read-only, staged always, never published.
    let always = custom(
        "kept",
        "ro",
        "staging = \"always\"\n[limits]\nrun-staged-mib = 1",
        artifacts::DIR,
        options,
    )
    .await;
    always
        .ok("write", json!({"path": "a.txt", "content": big(600 << 10)}))
        .await;
    always.commit();
    let error = always
        .call("write", json!({"path": "b.txt", "content": big(600 << 10)}))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Limit, "{error}");
    assert!(error.message.contains("run-staged-mib"), "{error}");
}

#[tokio::test]
async fn paths_with_control_characters_never_cross_the_workspace_boundary() {
    for setup in SETUPS {
        let rig = rig(setup, Safeguards::default()).await;
        for path in ["a\nb", "x\r", "esc\u{1b}[2J", "nul\0"] {
            let error = rig
                .call("write", json!({ "path": path, "content": "forged" }))
                .await
                .expect_err(path);
            assert_eq!(
                error.kind,
                ToolErrorKind::Denied,
                "{setup:?} {path:?}: {error}"
            );
        }
        let (code, _, _) = rig.sh("echo forged > 'a\nb'").await;
        assert_ne!(code, 0, "{setup:?}");
        rig.commit();
        let names: Vec<String> = std::fs::read_dir(rig.fixture.workspace.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names.iter().any(|name| name.chars().any(char::is_control)),
            "{setup:?}: {names:?}"
        );
    }
}

/// The book's own words, each with its page, which the test below holds the
/// code to.
const DOCUMENTED_CLAIMS: [(&str, &str); 3] = [
    (
        "docs/agents/workspace.md",
        "is neither reached nor listed by any component, through any route",
    ),
    (
        "docs/agents/permissions.md",
        "A denied path cannot be read, stat'ed, written, removed, renamed or\n  linked to, and listings, globs and searches leave it out; a read-only path can\n  be read and nothing else.",
    ),
    (
        "docs/agents/workspace.md",
        "even `--direct` (a `rm -rf *`\nleaves it alone)",
    ),
];

#[tokio::test]
async fn the_books_statements_about_the_store_and_file_rules_hold() {
    for (page, claim) in DOCUMENTED_CLAIMS {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(page))
                .unwrap();
        assert!(text.contains(claim), "{page} no longer says: {claim}");
    }
    let rig = rig(Setup::DirDirect, rules()).await;
    // Neither reached nor listed, even --direct, and `rm -rf *` leaves it.
    let (_, listed, _) = rig.sh("ls -a . lnk sub/up").await;
    assert!(!listed.contains(".cordon"), "{listed}");
    // A denied path: not read, stat'ed, written, removed, renamed, linked to
    // or listed; a read-only path: read, and nothing else.
    for line in [
        "cat .env",
        "test -e .env",
        "echo x > .env",
        "rm .env",
        "mv .env moved",
        "cp .env copied",
        "echo x > Cargo.lock",
        "rm Cargo.lock",
        "mv Cargo.lock moved",
    ] {
        let (code, out, _) = rig.sh(line).await;
        assert_ne!(code, 0, "`{line}` succeeded: {out}");
    }
    let (code, out, _) = rig.sh("cat Cargo.lock").await;
    assert_eq!((code, out.as_str()), (0, "lock v1\n"));
    for pattern in [".*", "**/.env"] {
        let globbed = rig.ok("glob", json!({ "pattern": pattern })).await;
        assert!(!globbed.to_string().contains(".env\""), "{globbed}");
    }
    let found = rig.ok("grep", json!({"pattern": "API_KEY"})).await;
    assert_eq!(found["matches"], json!([]));
    // `rm -rf *` removes what is not protected and says which it could not.
    let (_, _, err) = rig.sh("rm -rf *").await;
    assert!(err.contains("Cargo.lock"), "{err}");
    assert_eq!(rig.on_disk("README.md"), None);
    store_intact(rig.fixture.workspace.path());
    assert_eq!(rig.on_disk(".env").as_deref(), Some(SECRET));
    assert_eq!(rig.on_disk("Cargo.lock").as_deref(), Some("lock v1\n"));
}
