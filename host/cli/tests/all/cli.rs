//! The `cordon` binary as an operator runs it: exit codes, text and JSON output.

use std::process::Output;

use cordon_test_artifacts as artifacts;
use serde_json::Value;

use crate::support::{Project, text};

/// A working directory with a `plugins/` folder holding the bundled tools and
/// hooks, and a file to read.
fn project() -> Project {
    let project = Project::new();
    for (name, component) in [
        ("jq", artifacts::JQ),
        ("files", artifacts::FILES),
        ("notes", artifacts::NOTES),
        ("redactor", artifacts::REDACTOR),
        ("guard", artifacts::GUARD),
        ("budget", artifacts::BUDGET),
    ] {
        project.bundled(name, component);
    }
    project.write("notes.txt", "alpha\nbeta\n");
    project
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("stdout is not JSON ({error}): {}", stdout(output)))
}

#[test]
fn plugins_check_lists_each_bundle_with_tools_and_grants() {
    let project = project();
    let output = project.cordon(&["plugins", "check", "plugins"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("ok     jq 0.1.0 (tool)"), "{text}");
    assert!(text.contains("jq.query"), "{text}");
    assert!(text.contains("dir . -> /workspace (ro)"), "{text}");
    assert!(text.contains("state read [notes, notes.next-id]"), "{text}");
    assert!(text.contains("ok     budget 0.1.0 (hook)"), "{text}");
    assert!(text.contains("hooks:  after-tool-call"), "{text}");
    assert!(text.contains("config: {\"max-calls\":20}"), "{text}");
    assert!(text.contains("6 bundle(s) valid, 0 error(s)"), "{text}");

    let output = project.cordon(&["plugins", "check", "--json"]);
    assert!(output.status.success());
    let report = json(&output);
    assert_eq!(report["ok"], true);
    assert_eq!(report["bundles"].as_array().unwrap().len(), 6);
    assert_eq!(
        report["bundles"][0]["hooks"],
        serde_json::json!(["before-tool-call"])
    );
    assert_eq!(
        report["bundles"][0]["cache"], "cached",
        "the second run uses the cache"
    );
}

#[test]
fn a_bad_bundle_is_named_and_left_out_while_the_others_serve() {
    let project = project();
    let bad = project.path("plugins").join("broken");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("plugin.toml"),
        "[plugin]\nname = \"broken\"\nversion = \"1\"\nkind = \"tool\"\ncomponent = \"x.wasm\"\n",
    )
    .unwrap();
    let output = project.cordon(&["plugins", "check"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains("broken/plugin.toml") && text.contains("plugin.version"),
        "{text}"
    );
    assert!(text.contains("6 bundle(s) valid, 1 error(s)"), "{text}");

    let output = project.cordon(&["tool", "list"]);
    assert!(
        output.status.success(),
        "the other bundles serve: {}",
        stderr(&output)
    );
    let said = stderr(&output);
    assert!(
        said.contains("broken/plugin.toml")
            && said.contains("those bundles are left out")
            && said.contains("the other 6 bundle(s) serve"),
        "{said}"
    );
    assert!(stdout(&output).contains("jq.query"), "{}", stdout(&output));
    let output = project.cordon(&["tool", "list", "--strict"]);
    assert_eq!(output.status.code(), Some(2), "--strict stops");
    assert!(
        stderr(&output).contains("and --strict"),
        "{}",
        stderr(&output)
    );

    // A second bundle taking a name is an error, never also `ok`.
    std::fs::remove_dir_all(&bad).unwrap();
    let copy = project.path("plugins").join("zz-jq");
    std::fs::create_dir_all(&copy).unwrap();
    for file in ["plugin.toml", "jq.wasm"] {
        std::fs::copy(project.path("plugins/jq").join(file), copy.join(file)).unwrap();
    }
    let output = project.cordon(&["plugins", "check"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        !text
            .lines()
            .any(|line| line.starts_with("ok") && line.contains("zz-jq")),
        "{text}"
    );
    assert!(text.contains("zz-jq"), "the duplicate is named: {text}");
}

#[test]
fn tool_list_shows_every_tool() {
    let project = project();
    let output = project.cordon(&["tool", "list"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for tool in ["files.read", "files.search", "jq.query", "notes.add"] {
        assert!(text.contains(tool), "{tool}: {text}");
    }
    // The columns line up under the header, however long a cell is.
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let description = header.find("DESCRIPTION").expect(header);
    for line in lines {
        let (before, after) = line.split_at(description);
        assert!(
            before.ends_with("  ") && !after.starts_with(' '),
            "a ragged row: {line:?} under {header:?}"
        );
    }
    let listed = json(&project.cordon(&["tool", "list", "--json"]));
    let jq = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "jq.query")
        .expect("jq.query listed");
    assert_eq!(jq["bundle"], "jq");
    assert_eq!(jq["input-schema"]["type"], "object");
    assert_eq!(jq["annotations"]["read-only"], true);
}

#[test]
fn tool_call_prints_the_output_and_exits_zero() {
    let project = project();
    let output = project.cordon(&[
        "tool",
        "call",
        "jq.query",
        "--args",
        r#"{"filter": ".a + 1", "input": {"a": 41}}"#,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(printed, serde_json::json!([42]));

    let output = project.cordon(&[
        "tool",
        "call",
        "files.read",
        "--args",
        r#"{"path": "notes.txt"}"#,
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(json(&output)["output"]["text"], "alpha\nbeta\n");
}

#[test]
fn tool_call_exits_one_with_the_error_kind() {
    let project = project();
    let output = project.cordon(&["tool", "call", "jq.query", "--args", r#"{"filter": 3}"#]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("error: invalid-input"),
        "{}",
        stderr(&output)
    );

    // Arguments that are not a JSON object are a usage error: no tool ran.
    for bad in ["{not json", "[1]"] {
        let output = project.cordon(&["tool", "call", "jq.query", "--args", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad}");
        assert!(
            stderr(&output).starts_with("cordon: --args: the arguments are"),
            "{}",
            stderr(&output)
        );
    }

    let output = project.cordon(&["tool", "call", "no.such", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let printed = json(&output);
    assert_eq!(printed["ok"], false);
    assert_eq!(printed["error"]["kind"], "not-found");

    let output = project.cordon(&["tool", "call", "jq.qurey"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("no tool named `jq.qurey`; the nearest is `jq.query`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_core_module_is_told_to_build_for_wasm32_wasip2() {
    let project = project();
    project.write(
        "plugins/core/plugin.toml",
        "[plugin]\nname = \"core\"\nversion = \"0.1.0\"\nkind = \"tool\"\ndescription = \"x\"\ncomponent = \"core.wasm\"\n",
    );
    std::fs::write(project.path("plugins/core/core.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let output = project.cordon(&["plugins", "check", "plugins"]);
    assert_eq!(output.status.code(), Some(1));
    let shown = format!("{}{}", text(&output.stdout), stderr(&output));
    assert!(
        shown.contains(
            "core.wasm: a core WebAssembly module, not a component: build it for wasm32-wasip2"
        ),
        "{shown}"
    );
}

#[test]
fn notes_persist_between_invocations() {
    let project = project();
    let output = project.cordon(&[
        "tool",
        "call",
        "notes.add",
        "--args",
        r#"{"title": "Remember", "body": "the milk", "tags": ["home"]}"#,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let output = project.cordon(&["tool", "call", "notes.list", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(json(&output)["output"]["notes"][0]["title"], "Remember");
    assert!(project.dir.path().join(".cordon/cordon.db").is_file());
    let output = project.cordon(&["tool", "call", "notes.list", "--thread", "other", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(json(&output)["output"]["notes"], serde_json::json!([]));
}

#[test]
fn a_corrupt_store_is_reported_and_kept() {
    let project = project();
    let store = project.dir.path().join(".cordon/cordon.db");
    std::fs::create_dir_all(store.parent().unwrap()).unwrap();
    std::fs::write(&store, "{broken").unwrap();
    let output = project.cordon(&["tool", "call", "notes.list"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cordon.db"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&store).unwrap(), "{broken");
}

#[test]
fn every_command_has_help() {
    let project = project();
    for args in [
        vec!["--help"],
        vec!["plugins", "--help"],
        vec!["plugins", "check", "--help"],
        vec!["tool", "--help"],
        vec!["tool", "list", "--help"],
        vec!["tool", "call", "--help"],
    ] {
        let output = project.cordon(&args);
        assert!(output.status.success(), "{args:?}");
        assert!(stdout(&output).contains("Usage:"), "{args:?}");
    }
}

#[test]
fn commands_that_read_runs_never_create_a_store_and_a_new_one_is_kept_out_of_git() {
    let project = project();
    for args in [
        &["runs", "list"][..],
        &["runs", "show", "r1"],
        &["runs", "diff", "r1"],
        &["runs", "resume", "r1"],
    ] {
        let output = project.cordon(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("no run store at .cordon/cordon.db"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    assert!(!project.path(".cordon").exists(), "no store was made");
    let output = project.cordon(&["runs", "list", "--store", "elsewhere/runs.db"]);
    assert!(
        stderr(&output).contains("no run store at elsewhere/runs.db"),
        "{}",
        stderr(&output)
    );
    assert!(!project.path("elsewhere").exists());

    let output = project.cordon(&[
        "tool",
        "call",
        "notes.add",
        "--args",
        r#"{"title": "Remember", "body": "the milk"}"#,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let ignore = project.read(".cordon/.gitignore").expect("a .gitignore");
    assert!(
        ignore.lines().any(|line| line == "cordon.db")
            && ignore.lines().any(|line| line == "cordon.db-*"),
        "{ignore}"
    );
    let output = project.cordon(&["runs", "list"]);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    let project = project();
    let mut child = project
        .command(&["tool", "list"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let said = stderr(&output);
    assert!(
        !said.contains("panicked") && !said.contains("Broken pipe"),
        "{said}"
    );
    assert_ne!(output.status.code(), Some(101), "no panic");
}

#[test]
fn completions_are_printed_for_each_shell_and_help_says_what_cordon_is() {
    let project = project();
    let output = project.cordon(&["completions", "bash"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let script = text(&output.stdout);
    assert!(
        script.contains("_cordon()") && script.contains("resume"),
        "{script}"
    );
    let checked = std::process::Command::new("bash")
        .args(["-n", "-c", &script])
        .output()
        .unwrap();
    assert!(checked.status.success(), "bash -n: {}", stderr(&checked));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let output = project.cordon(&["completions", shell]);
        assert!(
            output.status.success() && !output.stdout.is_empty(),
            "{shell}"
        );
    }
    let output = project.cordon(&["completions", "tcsh"]);
    assert_eq!(output.status.code(), Some(2));
    let help = text(&project.cordon(&["--help"]).stdout);
    assert!(help.starts_with("Run AI agents"), "{help}");
}
