//! `cordon mcp` as an MCP client drives it: the official Python SDK (`mcp`
//! on PyPI, installed by `scripts/toolchains.sh mcp` as `cordon-mcp-python`)
//! spawns the server over stdio, lists the tools, calls them, meets a tool
//! error, protocol errors, a policy denial and an approval through
//! elicitation; then `cordon runs` shows every call as a committed step.

use std::path::Path;
use std::process::Command;

use cordon_test_artifacts as artifacts;
use serde_json::Value;

mod support;

use support::{Project, text};

/// The permissions every test serves under: jq runs, listing notes is
/// denied, adding one asks.
const PERMISSIONS: &str =
    "default = \"deny\"\nallow = [\"jq.*\"]\nask = [\"notes.add\"]\ndeny = [\"notes.list\"]\n";

fn project() -> Project {
    let project = Project::new();
    project.bundled("jq", artifacts::JQ);
    project.bundled("notes", artifacts::NOTES);
    project.write("permissions.toml", PERMISSIONS);
    project
}

/// What the Python client saw, with `approve` as its elicitation answer
/// (`yes`, `no`, or `none` for a client without elicitation).
fn drive(project: &Project, approve: &str, extra: &[(&str, String)]) -> Value {
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let server = project.command(&[]);
    let mut command = Command::new("cordon-mcp-python");
    command
        .arg(client)
        .arg(env!("CARGO_BIN_EXE_cordon"))
        .arg(project.dir.path())
        .args(["mcp", "--permissions", "permissions.toml"])
        .env("APPROVE", approve);
    // The server inherits the client's environment: the project's own.
    for (name, value) in server.get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    for (name, value) in extra {
        command.env(name, value);
    }
    let output = command.output().unwrap_or_else(|error| {
        panic!(
            "cannot run `cordon-mcp-python` ({error}): put the MCP client on PATH with \
             `eval \"$(scripts/toolchains.sh mcp)\"`"
        )
    });
    assert!(
        output.status.success(),
        "the client failed:\nstdout:\n{}\nstderr:\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{error}: {}\n{}",
            text(&output.stdout),
            text(&output.stderr)
        )
    })
}

#[test]
fn a_real_client_lists_calls_and_meets_errors_denials_and_approvals() {
    let project = project();
    let seen = drive(&project, "yes", &[]);
    assert_eq!(seen["server"], "cordon");
    assert_eq!(seen["protocol"], "2025-11-25");

    let tools = seen["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "a deterministic order");
    assert!(
        names.contains(&"jq_query") && names.contains(&"notes_add"),
        "{names:?}"
    );
    assert!(names.iter().all(|name| !name.contains('.')), "{names:?}");
    let jq = tools
        .iter()
        .find(|tool| tool["name"] == "jq_query")
        .unwrap();
    assert_eq!(
        jq["title"], "jq.query",
        "the Cordon name travels as the title"
    );
    assert_eq!(jq["read_only"], true);
    assert!(
        jq["required"]
            .as_array()
            .unwrap()
            .contains(&"filter".into())
    );

    assert_eq!(seen["jq"]["error"], false, "{}", seen["jq"]);
    assert_eq!(
        seen["jq"]["structured"],
        serde_json::json!({"result": [42]}),
        "an output that is not an object travels inside one"
    );
    assert_eq!(seen["jq"]["text"], "[42]");
    assert_eq!(seen["jq_bad"]["error"], true);
    let bad = seen["jq_bad"]["text"].as_str().unwrap();
    assert!(
        bad.starts_with("invalid-input: ") || bad.starts_with("failed: "),
        "the typed kind leads the text: {bad}"
    );

    assert_eq!(seen["unknown"]["protocol_error"], true);
    assert_eq!(seen["unknown"]["code"], -32602);
    assert!(
        seen["unknown"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `jq_query`"),
        "{}",
        seen["unknown"]
    );
    assert_eq!(seen["schema"]["protocol_error"], true);
    assert!(
        seen["schema"]["message"]
            .as_str()
            .unwrap()
            .contains("input schema"),
        "{}",
        seen["schema"]
    );

    assert_eq!(seen["denied"]["error"], true);
    let denied = seen["denied"]["text"].as_str().unwrap();
    assert!(denied.starts_with("denied: "), "{denied}");
    assert!(denied.contains("notes.list"), "the rule is named: {denied}");

    assert_eq!(
        seen["asking"]["error"], false,
        "approved: {}",
        seen["asking"]
    );
    let asked = seen["asking"]["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].as_str().unwrap().contains("`notes.add`"),
        "{asked:?}"
    );
    assert_eq!(seen["ping"], true);

    // Every call is a committed step of one run, verdict and all.
    let listed = project.cordon(&["runs", "list"]);
    let runs = text(&listed.stdout);
    let run_id = runs
        .split_whitespace()
        .find(|word| word.starts_with("mcp-"))
        .unwrap_or_else(|| panic!("no served run listed: {runs}"))
        .to_owned();
    let shown = text(&project.cordon(&["runs", "show", &run_id]).stdout);
    assert!(shown.contains("verdict mcp-1 jq.query: allow"), "{shown}");
    assert!(
        shown.contains("jq.query: deny") || shown.contains("notes.list: deny"),
        "{shown}"
    );
    assert!(
        shown.contains("notes.add: allow (approved by the operator)"),
        "{shown}"
    );
    assert!(
        shown.contains("state notes"),
        "the approved call's write committed: {shown}"
    );
    assert!(
        shown.contains(": ended"),
        "the run ends with the session: {shown}"
    );
}

#[test]
fn a_declined_elicitation_denies_and_a_client_without_one_is_told_why() {
    let project = project();
    let declined = drive(&project, "no", &[]);
    assert_eq!(declined["asking"]["error"], true);
    let text = declined["asking"]["text"].as_str().unwrap();
    assert!(text.starts_with("denied: "), "{text}");

    let unasked = drive(&project, "none", &[]);
    assert_eq!(unasked["asking"]["error"], true);
    assert!(unasked["asking"]["asked"].as_array().unwrap().is_empty());
    let text = unasked["asking"]["text"].as_str().unwrap();
    assert!(text.contains("declares no elicitation"), "{text}");
    assert_eq!(unasked["jq"]["error"], false, "allowed calls still run");
}
