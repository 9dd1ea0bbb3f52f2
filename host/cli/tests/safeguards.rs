//! What every run obeys whatever its components do, as an operator sets it
//! up: the agent's file rules for every tool, the operator's config (file
//! rules, trusted bundles, the instance pool), tools calling tools through the
//! run's gate, and diffs no file name can forge.

use cordon_test_artifacts as artifacts;

mod support;

use support::{Project, both, text};

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
