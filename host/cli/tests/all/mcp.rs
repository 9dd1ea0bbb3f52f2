//! `cordon mcp` as an MCP client drives it: the official Python SDK (`mcp`
//! on PyPI, installed by `scripts/toolchains.sh mcp` as `cordon-mcp-python`)
//! spawns the server over stdio, lists the tools, calls them, meets a tool
//! error, protocol errors, a policy denial and an approval through
//! elicitation; then `cordon runs` shows every call as a committed step.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use cordon_test_artifacts as artifacts;
use serde_json::Value;

use crate::support::mcp::{FIXTURES_ELICITING, FIXTURES_MANIFEST, HttpServer};
use crate::support::{Project, text};

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

/// What `cordon runs show` prints of the runs the MCP server served: the
/// first, and those calls made while it ran one opened.
fn shown_served_run(project: &Project) -> String {
    let listed = text(&project.cordon(&["runs", "list"]).stdout);
    let runs: Vec<&str> = listed
        .split_whitespace()
        .filter(|word| word.starts_with("mcp-"))
        .collect();
    assert!(!runs.is_empty(), "no served run in:\n{listed}");
    runs.iter()
        .map(|run_id| text(&project.cordon(&["runs", "show", run_id]).stdout))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names in `listed`, a JSON array of strings.
fn names(listed: &Value) -> Vec<&str> {
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect()
}

/// What the Python client saw, with `approve` as its elicitation answer
/// (`yes`, `no`, or `none` for a client without elicitation).
fn drive(project: &Project, approve: &str, extra: &[(&str, String)]) -> Value {
    drive_with(project, approve, extra, &[])
}

/// [`drive`], the server started with `flags` after the permissions.
fn drive_with(project: &Project, approve: &str, extra: &[(&str, String)], flags: &[&str]) -> Value {
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let server = project.command(&[]);
    let mut command = Command::new("cordon-mcp-python");
    command
        .arg(client)
        .arg(env!("CARGO_BIN_EXE_cordon"))
        .arg(project.dir.path())
        .args(["mcp", "--permissions", "permissions.toml"])
        .args(flags)
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
        shown.contains("notes.add: allow (approved by the operator; rule `notes.add` asked)"),
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
fn adding_bundles_changes_the_listing_and_a_broken_one_is_left_out() {
    let project = project();
    let spare = project.path("spare/http");
    std::fs::create_dir_all(&spare).unwrap();
    std::fs::copy(
        Path::new(artifacts::PLUGINS_DIR).join("http/plugin.toml"),
        spare.join("plugin.toml"),
    )
    .unwrap();
    std::fs::copy(artifacts::HTTP, spare.join("http.wasm")).unwrap();
    project.write("spare/broken/plugin.toml", "[plugin]\nname = \"broken\"\n");
    let moves = format!(
        "{}:{};{}:{}",
        spare.display(),
        project.path("plugins/http").display(),
        project.path("spare/broken").display(),
        project.path("plugins/broken").display()
    );
    let seen = drive(&project, "yes", &[("ADD_BUNDLES", moves)]);
    assert_eq!(seen["list_changed"], true, "the client was told: {seen}");
    let after = names(&seen["tools_after"]);
    assert!(
        after.contains(&"http_fetch"),
        "the added bundle serves: {after:?}"
    );
    assert!(
        after.contains(&"jq_query"),
        "the others keep serving: {after:?}"
    );
    assert!(
        !after.iter().any(|name| name.starts_with("broken")),
        "{after:?}"
    );
}

#[test]
fn a_client_activating_a_skill_is_told_the_tools_changed_and_is_offered_its_tools() {
    let project = project();
    let example = Path::new(artifacts::EXAMPLE_SKILLS_DIR).join("csv-report");
    assert!(
        example.join("tools/table/table.wasm").is_file(),
        "build the example skill's tool with `cargo run -p cordon-cli -- build examples/skills/csv-report/tools`"
    );
    project.copy_folder(&example, "skills/csv-report");
    project.write(
        "permissions.toml",
        &format!("{PERMISSIONS}\nallow = [\"jq.*\", \"skill\", \"csv-report/*\"]\n")
            .replace("allow = [\"jq.*\"]\n", ""),
    );
    let seen = drive_with(
        &project,
        "yes",
        &[("ACTIVATE_SKILL", "csv-report".to_owned())],
        &["--skills", "skills"],
    );
    let before: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(before.contains(&"skill"), "{before:?}");
    assert!(
        !before.iter().any(|name| name.starts_with("csv-report")),
        "a skill's tools wait for its activation: {before:?}"
    );
    let skill = &seen["skill"];
    assert_eq!(skill["error"], false, "{skill}");
    assert_eq!(skill["list_changed"], true, "the client was told: {skill}");
    let after = names(&skill["tools_after"]);
    assert!(
        after.iter().any(|name| name.starts_with("csv-report")),
        "the active skill's tool is offered: {after:?}"
    );
    let shown = shown_served_run(&project);
    assert!(
        shown.contains("skill csv-report activated"),
        "the activation commits with its step: {shown}"
    );
}

#[test]
fn a_components_progress_and_logs_reach_the_client_that_asked() {
    let project = project();
    project.bundle("test", FIXTURES_ELICITING, artifacts::MCP_FIXTURES);
    project.approve("test");
    project.write(
        "permissions.toml",
        &PERMISSIONS.replace("allow = [\"jq.*\"]", "allow = [\"jq.*\", \"test.*\"]"),
    );
    let seen = drive(&project, "yes", &[]);
    let progress = seen["progress"].as_array().unwrap();
    let done: Vec<f64> = progress
        .iter()
        .map(|step| step[0].as_f64().unwrap())
        .collect();
    assert_eq!(done, [0.0, 50.0, 100.0], "{progress:?}");
    assert_eq!(progress[2][1], 100.0);
    assert_eq!(progress[2][2], "100 of 100");

    // A tool's own question reaches the person during the call, naming the tool.
    let question = &seen["tool_question"];
    assert_eq!(question["error"], false, "{question}");
    assert_eq!(question["text"], "Hello, Ada!", "{question}");
    let asked = question["asked"][0].as_str().unwrap();
    assert!(
        asked.contains(
            "Cordon tool `test.input_required_result_elicitation` asks: What is your name?"
        ),
        "{asked}"
    );

    // A tool that asks without end is put to the person 16 times, then refused.
    let endless = &seen["endless_questions"];
    assert_eq!(endless["error"], true, "{endless}");
    assert!(
        endless["text"]
            .as_str()
            .unwrap()
            .contains("a call asks at most 16 questions"),
        "{endless}"
    );
    assert_eq!(endless["asked"], 16, "{endless}");
    assert_eq!(
        seen["logged_unasked"].as_array().unwrap().len(),
        0,
        "no log lines before the client asked for them"
    );
    let logged = seen["logged"].as_array().unwrap();
    assert_eq!(logged.len(), 3, "{logged:?}");
    assert_eq!(logged[0]["level"], "info");
    assert_eq!(logged[0]["logger"], "test");
    assert_eq!(logged[0]["data"], "Tool execution started");
    assert_eq!(seen["logging_results"], serde_json::json!([false, false]));

    // A cancelled 20 s call stopped at once: the next call did not wait for it.
    assert_eq!(
        seen["after_cancel"]["error"], false,
        "{}",
        seen["after_cancel"]
    );
    let seconds = seen["after_cancel"]["seconds"].as_f64().unwrap();
    assert!(seconds < 10.0, "the next call waited {seconds} s");
    let shown = shown_served_run(&project);
    assert!(
        shown.contains("cancelled: test.wait was cancelled"),
        "the stopped call is committed as cancelled: {shown}"
    );
    assert!(
        shown.contains("at most 16 questions"),
        "the refused question is in the run's audit trail: {shown}"
    );
}

#[test]
fn with_a_sandbox_the_workspace_tools_are_offered_and_read_the_workspace() {
    let project = project();
    project.bundled("dir", artifacts::DIR);
    project.write("README.md", "# Served\n");
    project.write(
        "permissions.toml",
        &PERMISSIONS.replace("allow = [\"jq.*\"]", "allow = [\"jq.*\", \"read\"]"),
    );
    let seen = drive_with(&project, "yes", &[], &["--sandbox", "dir"]);
    let tools = seen["tools"].as_array().unwrap();
    let find = |name: &str| {
        tools
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("no `{name}` in {tools:?}"))
    };
    assert_eq!(find("read")["read_only"], true);
    assert_eq!(find("write")["read_only"], false);
    find("bash");
    assert_eq!(seen["read"]["error"], false, "{}", seen["read"]);
    assert_eq!(seen["read"]["structured"]["content"], "# Served\n");
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

pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

#[test]
fn http_checks_host_origin_body_size_and_path_and_binds_loopback_only() {
    let project = project();
    let server = HttpServer::start(&project, &[]);
    let (status, _) = server.post("/mcp", &[], INITIALIZE);
    assert_eq!(status, 200, "a loopback client is served");
    let (status, _) = server.post("/mcp", &[("Origin", "http://localhost:5173")], INITIALIZE);
    assert_eq!(status, 200, "a loopback page is served");

    let (status, body) = server.post("/mcp", &[("Host", "rebound.example.com")], INITIALIZE);
    assert_eq!(status, 403, "a DNS-rebinding Host is refused: {body}");
    let (status, body) = server.post("/mcp", &[("Origin", "https://evil.example")], INITIALIZE);
    assert_eq!(status, 403, "a foreign page is refused: {body}");
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5 << 20)
    );
    let (status, _) = server.post("/mcp", &[], &huge);
    assert_eq!(status, 413, "a body past the cap is refused");
    let (status, _) = server.post("/elsewhere", &[], INITIALIZE);
    assert_eq!(status, 404);

    let refused = project.cordon(&["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(refused.status.code(), Some(2));
    let said = text(&refused.stderr);
    assert!(
        said.contains("not a loopback address") && said.contains("--allow-non-loopback"),
        "{said}"
    );
}

#[test]
fn a_stateless_client_approves_through_input_required_and_a_tampered_state_is_refused() {
    let project = project();
    let server = HttpServer::start(&project, &[]);
    let elicits = serde_json::json!({"elicitation": {"form": {}}});
    let call = serde_json::json!({"name": "notes_add", "arguments": {"title": "Milk", "body": "buy milk"}});

    let first = server.stateless("tools/call", call.clone(), elicits.clone());
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let state = result["requestState"].as_str().unwrap().to_owned();
    let question = result["inputRequests"]["approval"]["params"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("an elicitation to answer: {first}"));
    assert!(question.contains("`notes.add`"), "{question}");

    let mut tampered = call.clone();
    let mut bad = state.clone();
    bad.insert(bad.len() / 2, 'x');
    tampered["requestState"] = bad.into();
    tampered["inputResponses"] =
        serde_json::json!({"approval": {"action": "accept", "content": {"approve": true}}});
    let refused = server.stateless("tools/call", tampered, elicits.clone());
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    let mut other = call.clone();
    other["arguments"]["body"] = "something else".into();
    other["requestState"] = state.clone().into();
    other["inputResponses"] =
        serde_json::json!({"approval": {"action": "accept", "content": {"approve": true}}});
    let refused = server.stateless("tools/call", other, elicits.clone());
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("another call"),
        "a state answers only its own call: {refused}"
    );

    let mut answered = call.clone();
    answered["requestState"] = state.into();
    answered["inputResponses"] =
        serde_json::json!({"approval": {"action": "accept", "content": {"approve": true}}});
    let done = server.stateless("tools/call", answered, elicits);
    assert_eq!(done["result"]["isError"], false, "{done}");

    let unasked = server.stateless("tools/call", call, serde_json::json!({}));
    assert_eq!(unasked["result"]["isError"], true, "{unasked}");
    let said = unasked["result"]["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("declares no elicitation"), "{said}");
}

#[test]
fn a_tool_not_granted_questions_is_refused_audited_and_the_server_goes_on() {
    let project = project();
    project.bundle("test", FIXTURES_MANIFEST, artifacts::MCP_FIXTURES);
    project.write(
        "permissions.toml",
        &PERMISSIONS.replace("allow = [\"jq.*\"]", "allow = [\"jq.*\", \"test.*\"]"),
    );
    let seen = drive(&project, "yes", &[]);
    let question = &seen["tool_question"];
    assert_eq!(question["error"], true, "{question}");
    let said = question["text"].as_str().unwrap();
    assert!(
        said.starts_with("denied: ") && said.contains("not granted questions"),
        "{said}"
    );
    assert_eq!(question["asked"], serde_json::json!([]), "nobody was asked");
    assert_eq!(seen["after_cancel"]["error"], false, "the server went on");
    let shown = shown_served_run(&project);
    assert!(
        shown.contains("elicit") && shown.contains("not granted questions"),
        "the refusal is in the run's audit trail: {shown}"
    );
}

/// Send `request` to a stdio server and read its lines until the answer with
/// `id`.
pub(crate) fn exchange(
    stdin: &mut impl std::io::Write,
    stdout: &mut impl std::io::BufRead,
    request: &str,
    id: u64,
) -> Value {
    writeln!(stdin, "{request}").unwrap();
    stdin.flush().unwrap();
    loop {
        let mut line = String::new();
        assert_ne!(
            stdout.read_line(&mut line).unwrap(),
            0,
            "the server hung up"
        );
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id {
            return message;
        }
    }
}

#[test]
fn commits_that_reach_only_the_process_survive_the_server_being_killed() {
    let project = project();
    let mut server = project
        .command(&[
            "mcp",
            "--permissions",
            "permissions.toml",
            "--durability",
            "process",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(server.stdout.take().unwrap());
    exchange(&mut stdin, &mut stdout, INITIALIZE, 1);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    for id in 2..5 {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"jq_query","arguments":{{"filter":".n","input":{{"n":{id}}}}}}}}}"#
        );
        let answer = exchange(&mut stdin, &mut stdout, &call, id);
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    // No clean shutdown: whatever was answered must already be in the store.
    server.kill().unwrap();
    server.wait().unwrap();
    let shown = shown_served_run(&project);
    assert_eq!(
        shown.matches("jq.query: allow").count(),
        3,
        "every answered call is a committed step: {shown}"
    );

    let refused = project.cordon(&["mcp", "--durability", "somewhere"]);
    assert_eq!(refused.status.code(), Some(2));
    let said = text(&refused.stderr);
    assert!(
        said.contains("somewhere") && said.contains("--durability") && said.contains("process"),
        "{said}"
    );
}

/// Initialize a stdio server through `stdin` and `stdout`, list its tools,
/// then close its input: it must list jq and exit cleanly.
fn list_and_close(
    mut server: std::process::Child,
    mut stdin: impl std::io::Write,
    mut stdout: impl std::io::BufRead,
    shape: &str,
) {
    exchange(&mut stdin, &mut stdout, INITIALIZE, 1);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let listed = exchange(
        &mut stdin,
        &mut stdout,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        2,
    );
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert!(
        tools.iter().any(|tool| tool["name"] == "jq_query"),
        "{shape}: {listed}"
    );
    drop(stdin);
    assert!(server.wait().unwrap().success(), "{shape}");
}

#[test]
fn the_server_answers_over_socket_pairs_and_over_an_output_shared_with_its_errors() {
    use std::io::BufRead;
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;
    use std::process::Stdio;

    let project = project();
    let serve = ["mcp", "--permissions", "permissions.toml"];

    // A client built on libuv (Node) hands its server one socket pair for
    // each stream.
    let (input, server_input) = UnixStream::pair().unwrap();
    let (output, server_output) = UnixStream::pair().unwrap();
    let server = project
        .command(&serve)
        .stdin(Stdio::from(OwnedFd::from(server_input)))
        .stdout(Stdio::from(OwnedFd::from(server_output)))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let output = std::io::BufReader::new(output);
    list_and_close(server, input, output, "socket pairs");

    // Output and errors in one pipe, as `2>&1` leaves them: the output stays
    // blocking, so a diagnostic never meets a full pipe.
    let (output, server_output) = std::io::pipe().unwrap();
    let server_errors = server_output.try_clone().unwrap();
    let mut server = project
        .command(&serve)
        .env("CORDON_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::from(server_output))
        .stderr(Stdio::from(server_errors))
        .spawn()
        .unwrap();
    let input = server.stdin.take().unwrap();
    let mut output = std::io::BufReader::new(output);
    let mut banner = String::new();
    output.read_line(&mut banner).unwrap();
    assert!(banner.starts_with("cordon mcp: "), "{banner}");
    list_and_close(server, input, output, "one pipe for output and errors");
}

#[test]
fn a_session_a_client_ends_is_answered_as_ended() {
    let project = project();
    let server = HttpServer::start(&project, &[]);
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    });
    let (status, response) = server.post("/mcp", &[], &initialize.to_string());
    assert_eq!(status, 200, "{response}");
    let session = response
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("a session id: {response}"));
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let (status, response) = server.post(
        "/mcp",
        &headers,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status, 202, "{response}");
    let (status, response) = server.post(
        "/mcp",
        &headers,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"jq_query","arguments":{"filter":".n","input":{"n":1}}}}"#,
    );
    assert_eq!(status, 200, "{response}");
    let (status, response) = server.send(
        "DELETE",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        "",
    );
    assert_eq!(
        status, 200,
        "the official client takes anything else for a failure: {response}"
    );
    // The server's run goes on for its other sessions: it is running, and
    // this process drives it.
    let listed = text(&project.cordon(&["runs", "list"]).stdout);
    assert!(listed.trim_end().ends_with("  running"), "{listed}");
}

#[test]
fn a_served_run_ends_as_its_server_stopped_not_with_an_answer() {
    let project = project();
    let mut server = project
        .command(&["mcp", "--permissions", "permissions.toml"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(server.stdout.take().unwrap());
    exchange(&mut stdin, &mut stdout, INITIALIZE, 1);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"jq_query","arguments":{"filter":".","input":1}}}"#;
    exchange(&mut stdin, &mut stdout, call, 2);
    let listed = text(&project.cordon(&["runs", "list"]).stdout);
    assert!(
        listed.trim_end().ends_with("  running"),
        "while it serves, the server drives its run: {listed}"
    );
    drop(stdin);
    assert!(server.wait().unwrap().success());
    let listed = text(&project.cordon(&["runs", "list"]).stdout);
    assert!(
        listed.trim_end().ends_with("ended: the server stopped"),
        "{listed}"
    );
}
