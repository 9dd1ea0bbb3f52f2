//! Cordon as an MCP client, as an operator runs it: an agent file lists MCP
//! servers, the operator's config approves them, and their tools join the
//! run under the same gate and step commit. The servers are real ones on
//! the official Python SDK (`tests/mcp/server.py`, run by
//! `cordon-mcp-python` from `scripts/toolchains.sh mcp`): a local one over
//! stdio, a remote one over streamable HTTP on loopback. Beside each
//! admission, the refusals: a program the operator did not approve, an
//! approved program with other arguments, an origin not granted, and a
//! granted name that resolves to a blocked address.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Project, scripted_run, text};

/// A project whose plugins folder is empty: every tool is a server's.
fn project() -> Project {
    let project = Project::new();
    std::fs::create_dir_all(project.path("plugins")).unwrap();
    project
}

/// The fixture server's command, as TOML.
fn server_command() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/server.py");
    format!(
        "[\"cordon-mcp-python\", {:?}]",
        script.display().to_string()
    )
}

/// An agent that may call every tool of server `name`, declared by `table`.
fn agent(name: &str, table: &str, verdict: &str) -> String {
    format!(
        "name = \"client\"\ntools = [\"{name}.*\"]\n[permissions]\ndefault = \"{verdict}\"\n[mcp.{name}]\n{table}\n"
    )
}

/// A script calling `calls` (tool, args as TOML) in one turn, then answering.
fn script(calls: &[(&str, &str)]) -> String {
    let mut script = String::from("[[turn]]\ntext = \"calling\"\n");
    for (tool, args) in calls {
        script.push_str(&format!(
            "[[turn.call]]\ntool = \"{tool}\"\nargs = {args}\n"
        ));
    }
    script.push_str("[[turn]]\ntext = \"Done.\"\n");
    script
}

fn run(project: &Project, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = project.command(&scripted_run("r1", extra));
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run cordon")
}

/// The committed result of call `id` of run `r1`.
fn result(project: &Project, id: &str) -> Value {
    let output = project.cordon(&["runs", "show", "r1", "--json"]);
    let shown: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!("{error}: {}{}", text(&output.stdout), text(&output.stderr))
    });
    shown["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["tools"].as_array().unwrap().iter())
        .find(|record| record["call"]["id"] == id)
        .unwrap_or_else(|| panic!("no call {id} in {shown}"))["result"]
        .clone()
}

fn all(output: &Output) -> String {
    format!("{}{}", text(&output.stdout), text(&output.stderr))
}

#[test]
fn a_local_server_the_operator_marked_unsandboxed_serves_the_run_in_a_clean_environment() {
    let project = project();
    let command = server_command();
    project.write(
        "agent.toml",
        &agent("fixture", &format!("command = {command}"), "allow"),
    );
    project.write(
        ".cordon/config.toml",
        &format!(
            "[mcp.fixture]\nunsandboxed = true\ncommand = {command}\nenv = {{ FIXTURE_TOKEN = \"t\" }}\n"
        ),
    );
    project.write(
        "script.toml",
        &script(&[
            ("fixture.echo", "{ text = \"hi\" }"),
            ("fixture.fail", "{ reason = \"no such page\" }"),
            ("fixture.environment", "{}"),
            ("fixture.where", "{}"),
            ("fixture.echo", "{ text = 7 }"),
        ]),
    );
    let output = run(&project, &[], &[("OPENAI_API_KEY", "sk-not-for-servers")]);
    assert!(output.status.success(), "{}", all(&output));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("unsandboxed: MCP server `fixture` runs `cordon-mcp-python")
            && stderr.contains(": 8 tools"),
        "{stderr}"
    );

    assert_eq!(result(&project, "call-1-1")["output"]["result"], "hi");
    let failed = result(&project, "call-1-2");
    assert_eq!(failed["error"]["kind"], "failed", "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("MCP server `fixture`: ")
            && failed["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no such page"),
        "{failed}"
    );
    let seen: Vec<String> =
        serde_json::from_value(result(&project, "call-1-3")["output"]["result"].clone()).unwrap();
    assert!(seen.contains(&"FIXTURE_TOKEN".to_owned()), "{seen:?}");
    assert!(seen.contains(&"PATH".to_owned()), "{seen:?}");
    for leaked in ["OPENAI_API_KEY", "CORDON_CACHE_DIR", "XDG_CONFIG_HOME"] {
        assert!(
            !seen.iter().any(|name| name == leaked),
            "{leaked} reached the server: {seen:?}"
        );
    }
    let cwd = result(&project, "call-1-4")["output"]["result"].clone();
    assert_eq!(
        PathBuf::from(cwd.as_str().unwrap()).canonicalize().unwrap(),
        project.dir.path().canonicalize().unwrap()
    );
    let invalid = result(&project, "call-1-5");
    assert_eq!(invalid["error"]["kind"], "invalid-input", "{invalid}");
    assert!(
        invalid["error"]["message"]
            .as_str()
            .unwrap()
            .contains("arguments of `fixture.echo`"),
        "{invalid}"
    );
}

#[test]
fn a_server_past_its_output_limit_or_its_timeout_reaches_no_one_and_the_run_goes_on() {
    let project = project();
    let command = server_command();
    project.write(
        "agent.toml",
        &agent("fixture", &format!("command = {command}"), "allow"),
    );
    project.write(
        ".cordon/config.toml",
        &format!(
            "[mcp.fixture]\nunsandboxed = true\ncommand = {command}\nmax-output-kib = 4\ntimeout-secs = 1\n"
        ),
    );
    project.write(
        "script.toml",
        &script(&[
            ("fixture.flood", "{ kib = 64 }"),
            ("fixture.stall", "{ seconds = 30 }"),
            ("fixture.flood", "{ kib = 1 }"),
        ]),
    );
    let started = Instant::now();
    let output = run(&project, &[], &[]);
    assert!(output.status.success(), "{}", all(&output));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the stalled call is stopped at its timeout"
    );
    let flooded = result(&project, "call-1-1");
    assert_eq!(flooded["error"]["kind"], "limit", "{flooded}");
    assert!(
        flooded["error"]["message"]
            .as_str()
            .unwrap()
            .contains("more than its limit of 4096"),
        "{flooded}"
    );
    let stalled = result(&project, "call-1-2");
    assert_eq!(stalled["error"]["kind"], "timeout", "{stalled}");
    let small = result(&project, "call-1-3");
    assert_eq!(
        small["output"]["result"].as_str().unwrap().len(),
        1024,
        "{small}"
    );
}

#[test]
fn the_tool_list_and_a_waiting_call_say_a_tool_runs_unsandboxed() {
    let project = project();
    let command = server_command();
    project.write(
        "agent.toml",
        &agent("fixture", &format!("command = {command}"), "ask"),
    );
    project.write(
        ".cordon/config.toml",
        &format!("[mcp.fixture]\nunsandboxed = true\ncommand = {command}\n"),
    );
    let listed = project.cordon(&["tool", "list", "--agent", "agent.toml", "--json"]);
    assert!(listed.status.success(), "{}", all(&listed));
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let echo = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "fixture.echo")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(echo["bundle"], "mcp:fixture");
    assert_eq!(echo["trusted"], false);
    assert!(
        echo["unsandboxed"]
            .as_str()
            .unwrap()
            .contains("outside any sandbox"),
        "{echo}"
    );
    let shown = text(
        &project
            .cordon(&["tool", "list", "--agent", "agent.toml"])
            .stdout,
    );
    assert!(
        shown
            .lines()
            .any(|line| line.starts_with("fixture.echo") && line.contains("unsandboxed")),
        "{shown}"
    );

    project.write(
        "script.toml",
        &script(&[("fixture.echo", "{ text = \"hi\" }")]),
    );
    let output = run(&project, &[], &[]);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("call-1-1  fixture.echo")
            && stdout.contains("unsandboxed: MCP server `fixture` runs `cordon-mcp-python"),
        "{}",
        all(&output)
    );
}

#[test]
fn an_agent_cannot_start_a_program_the_operator_did_not_approve() {
    let project = project();
    let hostile = "command = [\"sh\", \"-c\", \"touch pwned\"]";
    project.write("agent.toml", &agent("fixture", hostile, "allow"));
    project.write("script.toml", &script(&[]));
    let output = run(&project, &[], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", all(&output));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "agent.toml: field `mcp.fixture`: the operator has not approved MCP server `fixture`"
        ) && stderr.contains("unsandboxed = true")
            && stderr.contains(r#"command = ["sh", "-c", "touch pwned"]"#),
        "{stderr}"
    );

    // The operator approved the fixture server; the agent's file runs
    // another program under its name, then the same one with more arguments.
    let command = server_command();
    project.write(
        ".cordon/config.toml",
        &format!("[mcp.fixture]\nunsandboxed = true\ncommand = {command}\n"),
    );
    let widened = format!("{}, \"--http\", \"1\"]", command.trim_end_matches(']'));
    for asked in [hostile.to_owned(), format!("command = {widened}")] {
        project.write("agent.toml", &agent("fixture", &asked, "allow"));
        let output = run(&project, &[], &[]);
        assert_eq!(output.status.code(), Some(2), "{}", all(&output));
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains("field `mcp.fixture.command`")
                && stderr.contains("approves only `command = [\"cordon-mcp-python\""),
            "{stderr}"
        );
    }

    // A server approved to be reached over HTTP is not a program to start.
    project.write(
        ".cordon/config.toml",
        "[mcp.fixture]\norigins = [\"https://mcp.example.com\"]\n",
    );
    project.write("agent.toml", &agent("fixture", hostile, "allow"));
    let output = run(&project, &[], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", all(&output));
    assert!(
        text(&output.stderr).contains("does not say so; add `unsandboxed = true`"),
        "{}",
        all(&output)
    );
    assert!(
        !project.path("pwned").exists(),
        "a refused server's program ran"
    );
}

#[test]
fn an_operator_config_that_approves_a_program_without_saying_unsandboxed_is_an_error() {
    let project = project();
    project.write(
        ".cordon/config.toml",
        "[mcp.fixture]\ncommand = [\"python3\", \"server.py\"]\n",
    );
    project.write(
        "agent.toml",
        &agent("fixture", "command = [\"python3\", \"server.py\"]", "allow"),
    );
    project.write("script.toml", &script(&[]));
    let output = run(&project, &[], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", all(&output));
    assert!(
        text(&output.stderr).contains(
            ".cordon/config.toml: field `mcp.fixture.command`: a local server runs on this host outside any sandbox; write `unsandboxed = true`"
        ),
        "{}",
        all(&output)
    );
}

/// The fixture server over streamable HTTP on a loopback port, stopped when
/// dropped.
struct HttpFixture {
    child: Child,
    port: u16,
}

impl HttpFixture {
    fn start() -> Self {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/server.py");
        let child = Command::new("cordon-mcp-python")
            .arg(script)
            .args(["--http", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the fixture server: `eval \"$(scripts/toolchains.sh mcp)\"`");
        let fixture = Self { child, port };
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the fixture server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        fixture
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An operator config reaching `mcp.test` at 127.0.0.1, opening loopback
/// when `open`, and approving server `remote` at `origins`.
fn remote_config(open: bool, origins: &str) -> String {
    let ranges = if open {
        "allow-ranges = [\"127.0.0.0/8\"]\n"
    } else {
        ""
    };
    format!(
        "[network]\n{ranges}[network.resolve]\n\"mcp.test\" = [\"127.0.0.1\"]\n[mcp.remote]\norigins = [{origins}]\nbearer = {{ env = \"REMOTE_TOKEN\" }}\n"
    )
}

#[test]
fn a_remote_server_is_reached_at_a_granted_origin_with_its_bearer_token() {
    let server = HttpFixture::start();
    let project = project();
    let port = server.port;
    project.write(
        "agent.toml",
        &agent(
            "remote",
            &format!("url = \"http://mcp.test:{port}/mcp\""),
            "allow",
        ),
    );
    project.write(
        ".cordon/config.toml",
        &remote_config(true, &format!("\"http://mcp.test:{port}\"")),
    );
    project.write(
        "script.toml",
        &script(&[
            ("remote.echo", "{ text = \"over http\" }"),
            ("remote.authorization", "{}"),
        ]),
    );
    let output = run(&project, &[], &[("REMOTE_TOKEN", "tok-123")]);
    assert!(output.status.success(), "{}", all(&output));
    assert!(
        text(&output.stderr).contains("MCP server `remote` over HTTP: 8 tools"),
        "{}",
        all(&output)
    );
    assert_eq!(
        result(&project, "call-1-1")["output"]["result"],
        "over http"
    );
    assert_eq!(
        result(&project, "call-1-2")["output"]["result"],
        "Bearer tok-123"
    );
}

#[test]
fn a_remote_server_at_an_ungranted_origin_or_a_blocked_address_is_refused() {
    let server = HttpFixture::start();
    let project = project();
    let port = server.port;
    project.write(
        "script.toml",
        &script(&[("remote.echo", "{ text = \"hi\" }")]),
    );
    let named = format!("url = \"http://mcp.test:{port}/mcp\"");
    project.write("agent.toml", &agent("remote", &named, "allow"));

    // Another port of the same host is another origin.
    project.write(
        ".cordon/config.toml",
        &remote_config(
            true,
            &format!("\"http://mcp.test:{}\"", port.wrapping_add(1).max(1)),
        ),
    );
    let output = run(&project, &[], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", all(&output));
    assert!(
        text(&output.stderr).contains(&format!(
            "is at origin http://mcp.test:{port}, which .cordon/config.toml: [mcp.remote] does not grant"
        )),
        "{}",
        all(&output)
    );

    // The origin is granted, but the name resolves to loopback, which the
    // operator has not opened: strict refuses to start, and otherwise the
    // run goes on without the server's tools.
    project.write(
        ".cordon/config.toml",
        &remote_config(false, &format!("\"http://mcp.test:{port}\"")),
    );
    let output = run(&project, &["--strict"], &[]);
    assert!(!output.status.success(), "{}", all(&output));
    assert!(
        text(&output.stderr).contains(
            "MCP server `remote`: mcp.test resolves only to blocked addresses: 127.0.0.1 (loopback)"
        ),
        "{}",
        all(&output)
    );
    let output = run(&project, &[], &[]);
    assert!(
        text(&output.stderr).contains("its tools are left out of the run"),
        "{}",
        all(&output)
    );
    assert_eq!(result(&project, "call-1-1")["error"]["kind"], "not-found");

    // An address written as the URL's host is judged the same way.
    for (url, origin, says) in [
        (
            format!("http://127.0.0.1:{port}/mcp"),
            format!("\"http://127.0.0.1:{port}\""),
            "127.0.0.1 (loopback)",
        ),
        (
            "http://169.254.169.254/mcp".to_owned(),
            "\"http://169.254.169.254\"".to_owned(),
            "169.254.169.254 (a cloud metadata service)",
        ),
        (
            "http://2852039166/mcp".to_owned(),
            "\"http://169.254.169.254\"".to_owned(),
            "169.254.169.254 (a cloud metadata service)",
        ),
    ] {
        project.write(
            "agent.toml",
            &agent("remote", &format!("url = \"{url}\""), "allow"),
        );
        project.write(".cordon/config.toml", &remote_config(false, &origin));
        let output = run(&project, &["--strict"], &[]);
        assert!(!output.status.success(), "{url}: {}", all(&output));
        assert!(
            text(&output.stderr).contains(says),
            "{url}: {}",
            all(&output)
        );
    }
}
