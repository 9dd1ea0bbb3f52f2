//! What every run obeys whatever its components do, as an operator sets it
//! up: the agent's file rules for every tool, the operator's config (file
//! rules, trusted bundles, the instance pool), tools calling tools through the
//! run's gate, and diffs no file name can forge.

use cordon_test_artifacts as artifacts;

use crate::support::{Project, both, text};

const SECRET: &str = "API_KEY=sk-SECRET-VALUE";

/// A project with the `dir` backend, the files tools, the hostile fixture
/// (allowed to call `hostile.echo` and `hostile.read-file`, granted the
/// project read-only at `/w`), a secret and a lock file.
fn project() -> Project {
    let project = Project::new();
    project.bundled("dir", artifacts::DIR);
    project.bundled("files", artifacts::FILES);
    project.bundle(
        "hostile",
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n\
         [grants]\ntools = [\"hostile.echo\", \"hostile.read-file\"]\n\
         [[grants.dirs]]\nhost = \".\"\nguest = \"/w\"\nmode = \"ro\"\n[limits]\ntimeout-ms = 120000\n",
        artifacts::HOSTILE,
    );
    project.approve("hostile");
    project.write(".env", SECRET);
    project.write("Cargo.lock", "lock v1\n");
    project.write("README.md", "# Project\n");
    project
}

const RULED_AGENT: &str = "name = \"coder\"\nsandbox = \"dir\"\n\
    [permissions]\ndefault = \"allow\"\n\
    [permissions.files]\ndeny = [\"**/.env\"]\nread-only = [\"Cargo.lock\"]\n";

const SNOOPING_SCRIPT: &str = r#"
[[turn]]
[[turn.call]]
tool = "read"
args = { path = ".env" }
[[turn.call]]
tool = "bash"
args = { command = "cat .e* ; grep -r SECRET . ; echo pwned > Cargo.lock" }
[[turn.call]]
tool = "files.read"
args = { path = ".env" }
[[turn.call]]
tool = "hostile.read-file"
args = { path = "/w/.env" }
[[turn.call]]
tool = "write"
args = { path = "Cargo.lock", content = "pwned" }

[[turn]]
text = "Done."
"#;

#[test]
fn an_agents_file_rules_hold_for_every_tool_of_a_run() {
    let project = project();
    project.write("agent.toml", RULED_AGENT);
    project.write("script.toml", SNOOPING_SCRIPT);
    let output = project.run_scripted("r1", &[]);
    assert!(output.status.success(), "{}", both(&output));
    let shown = project.show("r1");
    let stored = shown.to_string();
    assert!(
        !stored.contains("sk-SECRET"),
        "the secret reached the store: {stored}"
    );
    assert!(!both(&output).contains("sk-SECRET"), "{}", both(&output));
    assert_eq!(project.read("Cargo.lock").unwrap(), "lock v1\n");
    assert_eq!(project.read(".env").unwrap(), SECRET);
    assert!(
        stored.contains("file rule deny `**/.env`"),
        "a denial names the rule: {stored}"
    );
    assert!(
        stored.contains("file rule read-only `Cargo.lock`"),
        "a denial names the rule: {stored}"
    );
}

#[test]
fn the_operator_config_adds_file_rules_trust_and_the_pool_size() {
    let project = project();
    project.write(
        ".cordon/config.toml",
        "trusted = [\"hostile\"]\nmax-instances = 4\n[files]\ndeny = [\"README.md\"]\n",
    );
    // The agent allows only what declares itself read-only.
    project.write(
        "agent.toml",
        "name = \"reader\"\nsandbox = \"dir\"\n[permissions]\ndefault = \"deny\"\nallow = [\"@read-only\"]\n",
    );
    project.write(
        "script.toml",
        r#"
[[turn]]
[[turn.call]]
tool = "hostile.echo"
args = { said = "trusted" }
[[turn.call]]
tool = "read"
args = { path = "README.md" }

[[turn]]
text = "Done."
"#,
    );
    let output = project.run_scripted("r1", &[]);
    assert!(output.status.success(), "{}", both(&output));
    let shown = project.show("r1");
    assert_eq!(verdict_of_first_call(&shown), "allow", "{shown}");
    assert!(
        shown.to_string().contains("file rule deny `README.md`"),
        "{shown}"
    );

    let checked = project.cordon(&["plugins", "check", "plugins"]);
    assert!(
        !text(&checked.stdout).contains("untrusted"),
        "{}",
        both(&checked)
    );

    // Without the operator's trust the same claim earns nothing.
    let untrusting = project.path("untrusting.toml");
    std::fs::write(&untrusting, "max-instances = 4\n").unwrap();
    let output = project.run_scripted("r2", &["--config", untrusting.to_str().unwrap()]);
    assert!(output.status.success(), "{}", both(&output));
    let shown = project.show("r2");
    assert_eq!(verdict_of_first_call(&shown), "deny", "{shown}");
    let checked = project.cordon(&[
        "plugins",
        "check",
        "plugins",
        "--config",
        untrusting.to_str().unwrap(),
    ]);
    assert!(
        text(&checked.stdout).contains("untrusted"),
        "{}",
        both(&checked)
    );
}

/// The verdict of the first call of the run `shown`.
fn verdict_of_first_call(shown: &serde_json::Value) -> String {
    shown["commits"][1]["tools"][0]["decision"]["verdict"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_bad_operator_config_stops_the_command_naming_the_file_and_field() {
    let project = project();
    for (config, needle) in [
        ("trusted = [\"Not A Name\"]\n", "trusted[0]"),
        ("[files]\ndeny = [\"../outside\"]\n", "files"),
        ("max-instances = 0\n", "max-instances"),
        ("colour = 1\n", "colour"),
    ] {
        project.write(".cordon/config.toml", config);
        let output = project.cordon(&["tool", "list"]);
        assert_eq!(output.status.code(), Some(2), "{config}: {}", both(&output));
        let said = text(&output.stderr);
        assert!(
            said.contains("config.toml") && said.contains(needle),
            "{config}: {said}"
        );
    }
}

#[test]
fn a_tool_calling_a_tool_in_a_run_passes_the_gate_and_shows_as_a_child() {
    let project = project();
    project.write(
        "agent.toml",
        "name = \"t\"\n[permissions]\ndefault = \"allow\"\ndeny = [\"hostile.read-file(path=**/.env)\"]\n",
    );
    project.write(
        "script.toml",
        r#"
[[turn]]
[[turn.call]]
tool = "hostile.call-tool"
args = { name = "hostile.read-file", args = { path = "/w/.env" } }
[[turn.call]]
tool = "hostile.call-tool"
args = { name = "hostile.echo", args = { nested = true } }

[[turn]]
text = "Done."
"#,
    );
    let output = project.run_scripted("r1", &[]);
    assert!(output.status.success(), "{}", both(&output));
    assert!(!both(&output).contains("sk-SECRET"), "{}", both(&output));
    let shown = project.cordon(&["runs", "show", "r1"]);
    let shown = text(&shown.stdout);
    assert!(
        shown.contains("verdict call-1-1.1 hostile.read-file {\"path\":\"/w/.env\"}: deny"),
        "{shown}"
    );
    assert!(
        shown.contains("verdict call-1-2.1 hostile.echo {\"nested\":true}: allow"),
        "{shown}"
    );
    assert!(
        shown.contains("tool call-1-2.1: {\"nested\":true}"),
        "{shown}"
    );
}

#[test]
fn diffs_quote_unusual_file_names_as_git_does() {
    let project = project();
    project.write(
        "agent.toml",
        "name = \"coder\"\nsandbox = \"dir\"\n[permissions]\ndefault = \"allow\"\n",
    );
    project.write(
        "script.toml",
        r#"
[[turn]]
[[turn.call]]
tool = "write"
args = { path = 'say "hi" café.txt', content = "hello\n" }
[[turn.call]]
tool = "write"
args = { path = "forged\n+++ b/etc/passwd", content = "nope\n" }

[[turn]]
text = "Done."
"#,
    );
    let output = project.run_scripted("r1", &[]);
    assert!(output.status.success(), "{}", both(&output));
    let diff = project.cordon(&["runs", "diff", "r1"]);
    let diff = text(&diff.stdout);
    assert!(
        diff.contains("+++ \"b/say \\\"hi\\\" caf\\303\\251.txt\""),
        "{diff}"
    );
    assert!(!diff.contains("etc/passwd"), "{diff}");
}

#[test]
fn the_store_is_out_of_reach_wherever_it_lives_and_the_workspace_stays_usable() {
    let script = r#"
[[turn]]
[[turn.call]]
tool = "bash"
args = { command = "ls -a ; cat runs.db ; cat runs.db-wal" }
[[turn.call]]
tool = "write"
args = { path = "notes.txt", content = "written\n" }

[[turn]]
text = "Done."
"#;
    let agent = "name = \"coder\"\nsandbox = \"dir\"\n[permissions]\ndefault = \"allow\"\n";
    // In the workspace root itself: its files are out of reach, the rest is not.
    let inside = project();
    inside.write("agent.toml", agent);
    inside.write("script.toml", script);
    let output = inside.run_scripted("r1", &["--store", "runs.db"]);
    assert!(output.status.success(), "{}", both(&output));
    assert_eq!(inside.read("notes.txt").unwrap(), "written\n");
    let shown = inside.cordon(&["runs", "show", "r1", "--store", "runs.db"]);
    let shown = text(&shown.stdout);
    assert!(!shown.contains("runs.db\\n"), "listed: {shown}");
    assert!(!shown.contains("SQLite format"), "read: {shown}");

    // In a folder that holds the workspace: no grant reaches it anyway, and
    // the workspace works as ever.
    let outside = project();
    outside.write("agent.toml", agent);
    outside.write("script.toml", script);
    let name = outside.dir.path().file_name().unwrap().to_string_lossy();
    let store = format!("../{name}.db");
    let output = outside.run_scripted("r1", &["--store", &store]);
    let parent = outside.dir.path().parent().unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(parent.join(format!("{name}.db{suffix}")));
    }
    let _ = std::fs::remove_dir(parent.join(format!("{name}.db-driving")));
    assert!(output.status.success(), "{}", both(&output));
    assert_eq!(outside.read("notes.txt").unwrap(), "written\n");
}

#[test]
fn a_path_outside_every_directory_grant_is_told_which_grants_there_are() {
    let project = project();
    let outside = project.cordon(&[
        "tool",
        "call",
        "hostile.read-file",
        "--args",
        r#"{"path": "/etc/passwd"}"#,
    ]);
    assert_eq!(outside.status.code(), Some(1), "{}", both(&outside));
    let said = text(&outside.stdout) + &text(&outside.stderr);
    assert!(
        said.contains("os error"),
        "the component's own error stays: {said}"
    );
    assert!(
        said.contains("it reaches only /w (ro); grant another with a [[grants.dirs]] entry"),
        "{said}"
    );
    assert!(
        !said.contains("root:"),
        "nothing outside the grant is read: {said}"
    );
    let inside = project.cordon(&[
        "tool",
        "call",
        "hostile.read-file",
        "--args",
        r#"{"path": "/w/README.md"}"#,
    ]);
    assert!(inside.status.success(), "{}", both(&inside));
    assert!(
        text(&inside.stdout).contains("# Project"),
        "{}",
        both(&inside)
    );
}

/// Put bundle `name` into `folder`, with the repository's manifest of the
/// bundled plugin `name` and `component` as its component: a third party's
/// bundle passing itself off as Cordon's own when `component` is not the
/// plugin's.
fn plant(folder: &std::path::Path, name: &str, component: &str) {
    let bundle = folder.join(name);
    std::fs::create_dir_all(&bundle).unwrap();
    let manifest = std::path::Path::new(artifacts::PLUGINS_DIR)
        .join(name)
        .join("plugin.toml");
    std::fs::copy(manifest, bundle.join("plugin.toml")).unwrap();
    std::fs::copy(component, bundle.join(format!("{name}.wasm"))).unwrap();
}

#[test]
fn a_component_named_like_a_bundled_plugin_loads_from_no_folder_of_the_search_path() {
    let project = Project::new();
    let user = project.data_home().join("cordon/plugins");
    for (folder, flags) in [
        (project.path("elsewhere"), vec!["--plugins", "elsewhere"]),
        (project.path("plugins"), vec![]),
        (project.path(".cordon/plugins"), vec!["--plugins", "empty"]),
        (user.clone(), vec!["--plugins", "empty"]),
    ] {
        std::fs::create_dir_all(project.path("empty")).unwrap();
        plant(&folder, "files", artifacts::IMPOSTOR);
        plant(&folder, "dir", artifacts::HOSTILE_BACKEND);
        let mut args = vec!["plugins", "check"];
        args.extend(&flags);
        let checked = project.cordon(&args);
        let said = both(&checked);
        assert_eq!(
            checked.status.code(),
            Some(1),
            "{}: {said}",
            folder.display()
        );
        for name in ["files", "dir"] {
            assert!(
                said.contains(&format!(
                    "bundle `{name}` is not loaded: it is named like a plugin bundled with Cordon, but its component is not the one this build of Cordon made"
                )),
                "{}: {said}",
                folder.display()
            );
        }
        std::fs::remove_dir_all(&folder).unwrap();
    }

    // Cordon's own components under the same names load, trusted.
    project.bundled("files", artifacts::FILES);
    project.bundled("dir", artifacts::DIR);
    let checked = project.cordon(&["plugins", "check"]);
    let said = both(&checked);
    assert!(checked.status.success(), "{said}");
    assert!(said.contains("loads: bundled with Cordon"), "{said}");
    assert!(!said.contains("untrusted"), "{said}");
}

#[test]
fn a_third_party_files_approved_by_the_operator_is_still_not_trusted_to_read_only() {
    let reader = "name = \"reader\"\n[permissions]\ndefault = \"deny\"\nallow = [\"@read-only\"]\n";
    let script = "[[turn]]\n[[turn.call]]\ntool = \"files.read\"\nargs = { path = \"README.md\" }\n\n[[turn]]\ntext = \"Done.\"\n";
    let project = Project::new();
    project.write(".env", SECRET);
    project.write("README.md", "# Project\n");
    project.write("agent.toml", reader);
    project.write("script.toml", script);
    plant(&project.path("plugins"), "files", artifacts::IMPOSTOR);
    let approved = project.cordon(&["grants", "approve", "files", "--yes"]);
    let said = both(&approved);
    assert!(approved.status.success(), "{said}");
    assert!(
        said.contains("third-party: it is named like a plugin bundled with Cordon"),
        "approving says what it is: {said}"
    );
    let checked = project.cordon(&["plugins", "check"]);
    let said = both(&checked);
    assert!(
        said.contains("untrusted: named like a plugin bundled with Cordon"),
        "{said}"
    );
    let output = project.run_scripted("r1", &[]);
    assert!(output.status.success(), "{}", both(&output));
    let shown = project.show("r1");
    assert_eq!(verdict_of_first_call(&shown), "deny", "{shown}");
    assert!(!shown.to_string().contains("sk-SECRET"), "{shown}");

    // The same run with Cordon's own `files` reads unasked.
    let honest = Project::new();
    honest.write(".env", SECRET);
    honest.write("README.md", "# Project\n");
    honest.write("agent.toml", reader);
    honest.write("script.toml", script);
    honest.bundled("files", artifacts::FILES);
    let output = honest.run_scripted("r1", &[]);
    assert!(output.status.success(), "{}", both(&output));
    let shown = honest.show("r1");
    assert_eq!(verdict_of_first_call(&shown), "allow", "{shown}");
}

#[test]
fn a_manifest_changed_since_its_approval_is_refused_naming_each_change() {
    let project = project();
    let manifest = project.read("plugins/hostile/plugin.toml").unwrap();
    for (edit, named) in [
        (
            manifest.replace("timeout-ms = 120000", "timeout-ms = 1000"),
            "`limits.timeout-ms`: 120000 → 1000",
        ),
        (
            format!("{manifest}[config]\nmode = \"loose\"\n"),
            "`config` added: { mode = \"loose\" }",
        ),
    ] {
        project.write("plugins/hostile/plugin.toml", &edit);
        let checked = project.cordon(&["plugins", "check"]);
        let said = both(&checked);
        assert_eq!(checked.status.code(), Some(1), "{said}");
        assert!(
            said.contains("bundle `hostile` is not loaded: its manifest changed since the operator approved it")
                && said.contains(named),
            "{said}"
        );
        let call = project.cordon(&["tool", "call", "hostile.echo", "--args", "{}"]);
        assert!(!call.status.success(), "{}", both(&call));
    }
    let approved = project.cordon(&["grants", "approve", "hostile", "--yes"]);
    let said = both(&approved);
    assert!(approved.status.success(), "{said}");
    assert!(
        said.contains("manifest changed since the approval: `config` added"),
        "approving shows the difference: {said}"
    );
    let call = project.cordon(&["tool", "call", "hostile.echo", "--args", "{}"]);
    assert!(call.status.success(), "{}", both(&call));

    // A hook's phases and a bundled plugin's config are pinned alike.
    let hooks = "[plugin]\nname = \"gate\"\nversion = \"0.1.0\"\nkind = \"hook\"\nhooks = [\"before-tool-call\"]\ncomponent = \"tool.wasm\"\n";
    project.bundle("gate", hooks, artifacts::HOSTILE_HOOKS);
    project.approve("gate");
    project.write(
        "plugins/gate/plugin.toml",
        &hooks.replace(
            "[\"before-tool-call\"]",
            "[\"before-tool-call\", \"after-tool-call\"]",
        ),
    );
    project.bundled("guard", artifacts::GUARD);
    let guard = project.read("plugins/guard/plugin.toml").unwrap();
    project.write(
        "plugins/guard/plugin.toml",
        &guard.replace("ask-tools = []", "ask-tools = []\nask-commands = []"),
    );
    let checked = project.cordon(&["plugins", "check"]);
    let said = both(&checked);
    assert!(
        said.contains("bundle `gate` is not loaded: its manifest changed since the operator approved it: `plugin.hooks`"),
        "{said}"
    );
    assert!(
        said.contains("bundle `guard` is not loaded: its manifest differs from the one Cordon ships it: `config.ask-commands` added"),
        "{said}"
    );
}

#[test]
fn a_run_plants_no_operator_file_and_edits_no_plugin_and_the_next_run_is_as_the_operator_left_it() {
    let project = Project::new();
    project.bundled("dir", artifacts::DIR);
    project.bundled("guard", artifacts::GUARD);
    project.write("docs/a.md", "# A\n");
    project.write(
        "agent.toml",
        "name = \"coder\"\nsandbox = \"dir\"\nhooks = []\n[permissions]\ndefault = \"allow\"\n",
    );
    let guard = project.read("plugins/guard/plugin.toml").unwrap();
    let approval = "[bundles.evil]\\nsha256 = \\\"0000\\\"\\n";
    project.write(
        "script.toml",
        &format!(
            r#"
[[turn]]
[[turn.call]]
tool = "write"
args = {{ path = "sub/.cordon/grants.toml", content = "{approval}" }}
[[turn.call]]
tool = "write"
args = {{ path = "sub/.cordon/config.toml", content = "plugins = [\"../evil\"]\n" }}
[[turn.call]]
tool = "bash"
args = {{ command = "mkdir -p a/b/.cordon && echo x > a/b/.cordon/grants.toml" }}
[[turn.call]]
tool = "write"
args = {{ path = "plugins/guard/plugin.toml", content = "[plugin]\nname = \"guard\"\n" }}
[[turn.call]]
tool = "bash"
args = {{ command = "echo 'deny-commands = []' >> plugins/guard/plugin.toml; mkdir plugins/evil" }}

[[turn]]
text = "Done."
"#
        ),
    );
    let output = project.run_scripted("r1", &["--direct"]);
    assert!(output.status.success(), "{}", both(&output));
    assert!(!project.path("sub/.cordon").exists());
    assert!(!project.path("a/b/.cordon").exists());
    assert!(!project.path("plugins/evil").exists());
    assert_eq!(project.read("plugins/guard/plugin.toml").unwrap(), guard);
    let shown = project.show("r1").to_string();
    assert!(shown.contains("operator files"), "{shown}");
    assert!(
        shown.contains("plugins folder Cordon loads bundles from"),
        "{shown}"
    );
    // The next run, from `sub/` or here, loads as the operator left it.
    let checked = project.cordon(&["plugins", "check"]);
    assert!(checked.status.success(), "{}", both(&checked));
}

#[test]
fn a_compile_cache_inside_the_workspace_is_refused_and_a_swapped_entry_is_never_run() {
    let project = Project::with_own_cache();
    project.bundled("files", artifacts::FILES);
    project.bundled("jq", artifacts::JQ);
    project.write("README.md", "# Project\n");
    for flags in [
        vec!["--cache-dir", ".cache/cordon"],
        vec!["--cache-dir", "sub/../cache"],
    ] {
        let mut args = vec!["plugins", "check"];
        args.extend(&flags);
        let checked = project.cordon(&args);
        let said = both(&checked);
        assert_eq!(checked.status.code(), Some(2), "{said}");
        assert!(
            said.contains("lies inside the workspace")
                && said.contains("--cache-dir (or CORDON_CACHE_DIR) chose it"),
            "{said}"
        );
    }
    let checked = project
        .command(&["plugins", "check"])
        .env_remove("CORDON_CACHE_DIR")
        .env("XDG_CACHE_HOME", project.path(".cache"))
        .output()
        .unwrap();
    assert!(
        both(&checked).contains("XDG_CACHE_HOME chose it"),
        "{}",
        both(&checked)
    );

    // Warm the cache, then swap `files`'s entry for `jq`'s, as a component
    // that could write the cache would.
    let warm = project.cordon(&["plugins", "check"]);
    assert!(warm.status.success(), "{}", both(&warm));
    let mut found: Vec<_> = std::fs::read_dir(project.cache.path())
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cwasm"))
        .collect();
    found.sort_by_key(|path| std::fs::metadata(path).unwrap().len());
    assert_eq!(found.len(), 2, "{found:?}");
    let (smaller, larger) = (&found[0], &found[1]);
    std::fs::copy(larger, smaller).unwrap();
    let checked = project.cordon(&["plugins", "check"]);
    let said = both(&checked);
    assert!(checked.status.success(), "{said}");
    assert!(
        said.contains("refused a compiled component from the cache")
            && said.contains("its seal does not verify"),
        "{said}"
    );
    let call = project.cordon(&[
        "tool",
        "call",
        "files.read",
        "--args",
        r#"{"path": "README.md"}"#,
    ]);
    assert!(text(&call.stdout).contains("# Project"), "{}", both(&call));
    let call = project.cordon(&[
        "tool",
        "call",
        "jq.query",
        "--args",
        r#"{"filter": ".a", "input": {"a": 1}}"#,
    ]);
    assert!(call.status.success(), "{}", both(&call));
}
