//! `cordon run` and `cordon runs` as an operator uses them: scripted models
//! driving real sandboxed tools, approvals without a terminal, resume, a killed
//! process, and a damaged store.

use std::process::{Command, Stdio};

use cordon_test_artifacts as artifacts;

use crate::support::{Project, text};

/// A project with the notes plugin and the hostile fixture, given a long
/// timeout and a tool to call, so its calls may act past their step: one that
/// a crash interrupted is never run again unasked.
fn project() -> Project {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    project.bundle(
        "hostile",
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n\
         [grants]\ntools = [\"hostile.echo\"]\n[limits]\ntimeout-ms = 120000\n",
        artifacts::HOSTILE,
    );
    project.approve("hostile");
    project
}

const AGENT_ALLOW_ALL: &str = "name = \"t\"\n[permissions]\ndefault = \"allow\"\n";
const AGENT_ASK_NOTES: &str =
    "name = \"t\"\n[permissions]\ndefault = \"allow\"\nask = [\"notes.add\"]\n";

const NOTE_SCRIPT: &str = r#"
[[turn]]
text = "Saving."
[[turn.call]]
tool = "notes.add"
args = { title = "Milk", body = "buy milk" }

[[turn]]
text = "Done."
"#;

#[test]
fn a_scripted_run_uses_real_tools_and_commits_every_step() {
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    project.write("script.toml", NOTE_SCRIPT);
    let output = project.run_scripted("r1", &[]);
    assert!(
        output.status.success(),
        "{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let stdout = text(&output.stdout);
    assert!(stdout.contains("-> call-1-1 notes.add"), "{stdout}");
    assert!(stdout.contains("== prompt committed (running)"), "{stdout}");
    assert!(stdout.contains("== step 1 committed (running)"), "{stdout}");
    assert!(stdout.contains("== step 2 committed (ended)"), "{stdout}");
    assert!(stdout.contains("run r1 ended (final answer)\n"), "{stdout}");
    assert_eq!(
        stdout.matches("Done.").count(),
        1,
        "the answer prints once: {stdout}"
    );

    let shown = project.show("r1");
    assert_eq!(shown["disposition"]["disposition"], "ended");
    assert_eq!(shown["commits"].as_array().unwrap().len(), 3);
    assert_eq!(shown["state"]["notes"][0]["title"], "Milk");
    let listed = text(&project.cordon(&["runs", "list"]).stdout);
    assert!(
        listed.contains("r1") && listed.contains("ended: final answer"),
        "{listed}"
    );
}

#[test]
fn without_a_terminal_an_approval_commits_a_waiting_run_that_resumes() {
    let project = project();
    project.write("agent.toml", AGENT_ASK_NOTES);
    project.write("script.toml", NOTE_SCRIPT);
    let run = [
        "run",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
        "--run-id",
        "r2",
        "remember milk",
    ];
    let output = project.cordon(&run);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("run r2 is waiting") && stdout.contains("call-1-1"),
        "{stdout}"
    );
    let shown = project.show("r2");
    assert_eq!(shown["disposition"]["disposition"], "waiting");
    assert!(
        shown["state"].as_object().unwrap().is_empty(),
        "nothing ran yet"
    );

    let resume = [
        "runs",
        "resume",
        "r2",
        "--approve",
        "call-1-1",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
    ];
    let output = project.cordon(&resume);
    assert!(
        output.status.success(),
        "{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    assert_eq!(project.show("r2")["state"]["notes"][0]["title"], "Milk");

    let again = project.cordon(&resume);
    assert_eq!(again.status.code(), Some(2), "an ended run does not resume");
}

#[test]
fn a_denial_on_resume_reaches_the_model_and_runs_nothing() {
    let project = project();
    project.write("agent.toml", AGENT_ASK_NOTES);
    project.write("script.toml", NOTE_SCRIPT);
    let output = project.run_scripted("r3", &[]);
    assert_eq!(output.status.code(), Some(3));
    let output = project.cordon(&[
        "runs",
        "resume",
        "r3",
        "--deny",
        "call-1-1",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
        "--json",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = project.show("r3");
    assert!(shown["state"].get("notes").is_none());
    let tool_message = &shown["commits"][2]["messages"][0];
    assert_eq!(
        tool_message["result"]["error"]["kind"], "denied",
        "{tool_message}"
    );
}

#[test]
fn the_step_limit_ends_a_run_that_never_answers() {
    let project = project();
    project.write(
        "agent.toml",
        "name = \"t\"\nmax-steps = 2\n[permissions]\ndefault = \"allow\"\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"hostile.echo\"\n[[turn]]\n[[turn.call]]\ntool = \"hostile.echo\"\n",
    );
    let output = project.run_scripted("r4", &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    assert!(
        text(&output.stdout).contains("step limit"),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn a_script_that_runs_out_ends_the_run_with_a_clear_error() {
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"hostile.echo\"\n",
    );
    let output = project.run_scripted("r5", &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stdout).contains("script.toml has 1 turn(s)"),
        "{}",
        text(&output.stdout)
    );
}

#[cfg(unix)]
#[test]
fn a_killed_run_resumes_from_its_last_commit_and_never_reruns_an_effectful_call() {
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"hostile.sleep\"\nargs = { ms = 100000 }\n[[turn]]\ntext = \"after\"\n",
    );
    let mut child = project.spawn_until_calls_start("r6");
    child.kill().unwrap();
    child.wait().unwrap();

    let shown = project.show("r6");
    assert_eq!(
        shown["commits"].as_array().unwrap().len(),
        1,
        "only the input is committed"
    );
    assert_eq!(shown["intent"]["calls"][0]["call"]["name"], "hostile.sleep");

    // The run remembers its agent and model: no flags needed to resume it.
    let resume = ["runs", "resume", "r6"];
    let output = project.cordon(&resume);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    assert!(
        text(&output.stdout).contains("call-1-1"),
        "{}",
        text(&output.stdout)
    );
    let shown = project.show("r6");
    assert_eq!(
        shown["disposition"]["pending"][0]["reason"],
        "indeterminate"
    );

    let mut deny = resume.to_vec();
    deny.extend(["--deny", "call-1-1"]);
    let output = project.cordon(&deny);
    assert!(
        output.status.success(),
        "{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let shown = project.show("r6");
    assert_eq!(shown["disposition"]["answer"], "after");
}

/// A script whose first call sleeps for `ms`, then answers.
fn sleeping_script(ms: u64) -> String {
    format!(
        "[[turn]]\n[[turn.call]]\ntool = \"hostile.sleep\"\nargs = {{ ms = {ms} }}\n[[turn]]\ntext = \"after\"\n"
    )
}

/// The line `runs list` prints for run `run_id`.
fn listed(project: &Project, run_id: &str) -> String {
    let listed = text(&project.cordon(&["runs", "list"]).stdout);
    listed
        .lines()
        .find(|line| line.starts_with(run_id))
        .unwrap_or_else(|| panic!("{run_id} is listed: {listed}"))
        .to_owned()
}

/// `runs resume RUN` of a run stopped while its call slept: it waits on the
/// call, and says why.
fn resumed_names_the_call_under_way(project: &Project, run_id: &str) {
    let output = project.cordon(&["runs", "resume", run_id]);
    let said = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{said}{}",
        text(&output.stderr)
    );
    assert!(
        said.contains("call-1-1  hostile.sleep")
            && said.contains("it was under way when the run stopped, so it may already have acted"),
        "{said}"
    );
}

#[cfg(unix)]
#[test]
fn a_run_stopped_by_a_second_ctrl_c_is_listed_as_interrupted_and_its_resume_names_the_call() {
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    project.write("script.toml", &sleeping_script(100_000));
    let mut child = project.spawn_until_calls_start("i1");
    // While a process drives it, the run is running, and no other process
    // may drive it too.
    assert!(
        listed(&project, "i1").ends_with("  running"),
        "{}",
        listed(&project, "i1")
    );
    let second = project.cordon(&["runs", "resume", "i1"]);
    assert_eq!(second.status.code(), Some(2));
    assert!(
        text(&second.stderr).contains("run i1 is driven by another process right now (process "),
        "{}",
        text(&second.stderr)
    );

    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: signalling a child this test started and has not reaped.
    unsafe { libc::kill(pid, libc::SIGINT) };
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the first Ctrl-C waits for the step"
    );
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));

    let line = listed(&project, "i1");
    assert!(
        line.contains("interrupted: nothing drives it; `cordon runs resume` goes on"),
        "{line}"
    );
    let shown = text(&project.cordon(&["runs", "show", "i1"]).stdout);
    assert!(
        shown.starts_with("run i1 (agent t, thread default): interrupted"),
        "{shown}"
    );
    resumed_names_the_call_under_way(&project, "i1");
    assert!(listed(&project, "i1").contains("waiting on 1 call(s)"));
}

#[cfg(unix)]
#[test]
fn a_run_whose_reader_went_away_is_listed_as_interrupted() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    project.write("script.toml", &sleeping_script(2_000));
    // `cordon run ... | head -1`: the reader takes the first line and goes.
    let mut child = project
        .command(&[
            "run",
            "--agent",
            "agent.toml",
            "--model",
            "scripted:script.toml",
            "--run-id",
            "p1",
            "go",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // It reads up to the call's line, so the call is under way when it goes.
    let read: Vec<String> = std::io::BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(Result::unwrap)
        .take_while(|line| !line.starts_with("-> call-1-1"))
        .collect();
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(libc::SIGPIPE),
        "{status:?} after {read:?}"
    );
    assert!(
        listed(&project, "p1").contains("interrupted: nothing drives it"),
        "{}",
        listed(&project, "p1")
    );
    resumed_names_the_call_under_way(&project, "p1");
}

#[test]
fn a_corrupt_store_is_reported_by_name_and_left_alone() {
    let project = project();
    std::fs::create_dir_all(project.path(".cordon")).unwrap();
    project.write(
        ".cordon/cordon.db",
        "this is not a database, but it is someone's data",
    );
    let before = std::fs::read(project.path(".cordon/cordon.db")).unwrap();
    project.write("script.toml", NOTE_SCRIPT);
    let output = project.cordon(&["run", "--model", "scripted:script.toml", "x"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("cordon.db"),
        "{}",
        text(&output.stderr)
    );
    let output = project.cordon(&["runs", "list"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        std::fs::read(project.path(".cordon/cordon.db")).unwrap(),
        before
    );
}

/// `script` (util-linux) gives the command a terminal, as a person would have.
#[cfg(unix)]
#[test]
fn on_a_terminal_the_operator_is_asked_and_the_answer_is_used() {
    use std::io::Write;

    let project = project();
    project.write("agent.toml", AGENT_ASK_NOTES);
    project.write("script.toml", NOTE_SCRIPT);
    let line = format!(
        "{} run --agent agent.toml --model scripted:script.toml --run-id r7 'remember milk'",
        env!("CARGO_BIN_EXE_cordon")
    );
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(project.dir.path())
        .env("CORDON_CACHE_DIR", project.cache.path())
        .env("XDG_STATE_HOME", project.state_home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs the command on a terminal");
    child.stdin.take().unwrap().write_all(b"y\n").unwrap();
    let output = child.wait_with_output().unwrap();
    let shown = text(&output.stdout);
    assert!(output.status.success(), "{shown}{}", text(&output.stderr));
    assert!(
        shown.contains("call-1-1  notes.add  (permission rule `notes.add` asks)"),
        "{shown}"
    );
    let record = project.show("r7");
    assert_eq!(record["state"]["notes"][0]["title"], "Milk");
    assert_eq!(record["disposition"]["cause"], "final-answer");
}

#[test]
fn a_permissions_file_replaces_the_agents_rules() {
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    project.write("script.toml", NOTE_SCRIPT);
    project.write("policy.toml", "default = \"allow\"\ndeny = [\"notes.*\"]\n");
    let output = project.run_scripted("r8", &["--permissions", "policy.toml"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("deny (notes.*)"),
        "{}",
        text(&output.stdout)
    );
    assert!(project.show("r8")["state"].get("notes").is_none());

    project.write("bad.toml", "default = \"allow\"\ndeny = [\"Bad(\"]\n");
    let output = project.cordon(&[
        "run",
        "--model",
        "scripted:script.toml",
        "--permissions",
        "bad.toml",
        "x",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("bad.toml") && text(&output.stderr).contains("`deny[0]`"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn hooks_redact_what_the_run_stores_and_thread_state_carries_over_from_tool_calls() {
    let project = project();
    project.bundled("redactor", artifacts::REDACTOR);
    project.write(
        "agent.toml",
        "name = \"t\"\n[permissions]\ndefault = \"allow\"\n\
         [state.notes]\nscope = \"thread\"\n[state.\"notes.next-id\"]\nscope = \"thread\"\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"notes.list\"\nargs = {}\n\
         [[turn.call]]\ntool = \"hostile.secret\"\nargs = {}\n[[turn]]\ntext = \"Done.\"\n",
    );
    let added = project.cordon(&[
        "tool",
        "call",
        "notes.add",
        "--args",
        r#"{"title": "Milk", "body": "buy milk"}"#,
    ]);
    assert!(added.status.success(), "{}", text(&added.stderr));
    let output = project.run_scripted("r1", &[]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = project.show("r1").to_string();
    assert!(
        shown.contains("Milk"),
        "the thread's note reached the run: {shown}"
    );
    assert!(shown.contains("[REDACTED:aws-access-key]"), "{shown}");
    assert!(!shown.contains("AKIAIOSFODNN7EXAMPLE"), "{shown}");
    assert!(shown.contains("observation-replaced"), "{shown}");
    let text_view = text(&project.cordon(&["runs", "show", "r1"]).stdout);
    assert!(
        text_view.contains("thread default state (now):") && text_view.contains("\"Milk\""),
        "{text_view}"
    );
}

#[test]
fn an_agent_file_chooses_which_hooks_run_and_a_hook_not_loaded_stops_the_run() {
    let project = project();
    project.bundled("redactor", artifacts::REDACTOR);
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"hostile.secret\"\nargs = {}\n[[turn]]\ntext = \"Done.\"\n",
    );
    let with = |hooks: &str, run: &str| {
        project.write(
            "agent.toml",
            &format!("name = \"t\"\nhooks = {hooks}\n[permissions]\ndefault = \"allow\"\n"),
        );
        project.run_scripted(run, &[])
    };
    let chosen = with("[\"redactor\"]", "h1");
    assert!(chosen.status.success(), "{}", text(&chosen.stderr));
    assert!(
        !project
            .show("h1")
            .to_string()
            .contains("AKIAIOSFODNN7EXAMPLE")
    );

    let none = with("[]", "h2");
    assert!(none.status.success(), "{}", text(&none.stderr));
    assert!(
        project
            .show("h2")
            .to_string()
            .contains("AKIAIOSFODNN7EXAMPLE"),
        "with no hooks chosen the redactor does not run"
    );

    let misspelt = with("[\"redactr\"]", "h3");
    assert_eq!(misspelt.status.code(), Some(2));
    let said = text(&misspelt.stderr);
    assert!(
        said.contains("agent.toml: field `hooks`: no hook bundle `redactr` (those loaded: redactor); the nearest is `redactor`"),
        "{said}"
    );
    assert!(!said.contains("step 1"), "nothing ran: {said}");
}

#[test]
fn a_state_conflict_fails_the_step_naming_the_key_and_both_calls() {
    let project = project();
    project.write(
        "plugins/hostile/plugin.toml",
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n\
         [grants.state]\nread = [\"owner\"]\nwrite = [\"owner\"]\n",
    );
    project.approve("hostile");
    project.write(
        "agent.toml",
        "name = \"t\"\n[permissions]\ndefault = \"allow\"\n[state.owner]\nmerge = \"exclusive\"\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"hostile.state\"\nargs = { op = \"set\", key = \"owner\", value = \"a\" }\n\
         [[turn.call]]\ntool = \"hostile.state\"\nargs = { op = \"set\", key = \"owner\", value = \"b\" }\n\
         [[turn]]\ntext = \"Done.\"\n",
    );
    let output = project.run_scripted("r1", &[]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stdout));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("state conflict on key `owner` (exclusive)")
            && stderr.contains("call-1-1 (hostile.state)")
            && stderr.contains("call-1-2 (hostile.state)"),
        "{stderr}"
    );
    let shown = project.show("r1");
    assert_eq!(shown["commits"].as_array().unwrap().len(), 1, "{shown}");
    assert_eq!(shown["state"], serde_json::json!({}));
}

/// The OpenAI-compatible stream of a turn that says `text` in pieces and calls
/// `hostile.echo` when `call` is given.
fn openai_turn(text: &[&str], call: Option<serde_json::Value>) -> String {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| serde_json::json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let mut chunks: Vec<serde_json::Value> = text
        .iter()
        .map(|piece| chunk(serde_json::json!({"content": piece}), None))
        .collect();
    let finish = match call {
        Some(args) => {
            chunks.push(chunk(
                serde_json::json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "hostile_echo", "arguments": args.to_string()}}]}),
                None,
            ));
            "tool_calls"
        }
        None => "stop",
    };
    chunks.push(chunk(serde_json::json!({}), Some(finish)));
    let mut stream: String = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect();
    stream.push_str("data: [DONE]\n\n");
    stream
}

#[test]
fn a_run_against_an_openai_compatible_server_streams_text_and_keeps_the_key_out_of_everything() {
    use cordon_tests::replay::{Reply, Server};
    const KEY: &str = "sk-cli-test-s3cret";
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Server::start(vec![
        Reply::Stream(openai_turn(
            &["Let me ", "echo."],
            Some(serde_json::json!({"word": "hi"})),
        )),
        Reply::Stream(openai_turn(&["It ", "said ", "hi."], None)),
    ]));
    let output = project
        .command(&[
            "run",
            "--agent",
            "agent.toml",
            "--model",
            "openai:gpt-test",
            "--base-url",
            &server.url,
            "--run-id",
            "r1",
            "--json",
            "go",
        ])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let pieces: Vec<&str> = lines
        .iter()
        .filter(|line| line["type"] == "text")
        .filter_map(|line| line["text"].as_str())
        .collect();
    assert_eq!(pieces, vec!["Let me ", "echo.", "It ", "said ", "hi."]);
    assert!(
        lines.iter().any(|line| line["type"] == "tool-result"
            && line["result"]["output"] == serde_json::json!({"word": "hi"})),
        "{stdout}"
    );
    assert_eq!(lines.last().unwrap()["answer"], "It said hi.", "{stdout}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}"))
    );
    assert!(
        requests[0].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["function"]["name"] == "hostile_echo"),
        "{}",
        requests[0].body
    );

    let shown = project.cordon(&["runs", "show", "r1"]);
    assert!(
        text(&shown.stdout).contains("assistant: It said hi."),
        "{}",
        text(&shown.stdout)
    );
    let resumed = project.cordon(&["runs", "show", "r1", "--json"]);
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&resumed.stdout).unwrap()["run"]["metadata"]["base-url"],
        server.url
    );
    for place in [stdout, text(&output.stderr), text(&shown.stdout)] {
        assert!(!place.contains(KEY));
    }
    for file in ["cordon.db", "cordon.db-wal"] {
        if let Ok(bytes) = std::fs::read(project.path(".cordon").join(file)) {
            assert!(!String::from_utf8_lossy(&bytes).contains(KEY), "{file}");
        }
    }
}

#[test]
fn a_hosted_model_without_its_key_cannot_start_and_says_which_variable_to_set() {
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    let output = project.cordon(&[
        "run",
        "--agent",
        "agent.toml",
        "--model",
        "anthropic:claude-test",
        "go",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("set ANTHROPIC_API_KEY"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_resumed_run_finds_its_plugins_folder_without_flags_or_says_which_to_set() {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    std::fs::rename(project.path("plugins"), project.path("tools")).unwrap();
    project.write("agent.toml", AGENT_ASK_NOTES);
    project.write("script.toml", NOTE_SCRIPT);
    for run in ["r1", "r2"] {
        let output = project.run_scripted(run, &["--plugins", "tools"]);
        assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    }
    let resumed = project.cordon(&["runs", "resume", "r1", "--approve", "call-1-1"]);
    assert!(
        resumed.status.success(),
        "no flags needed: {}",
        text(&resumed.stderr)
    );
    assert_eq!(project.show("r1")["state"]["notes"][0]["title"], "Milk");

    std::fs::rename(project.path("tools"), project.path("moved")).unwrap();
    let lost = project.cordon(&["runs", "resume", "r2", "--approve", "call-1-1"]);
    assert_eq!(lost.status.code(), Some(2));
    let said = text(&lost.stderr);
    assert!(
        said.contains(
            "tools (recorded by the run) does not exist; pass --plugins DIR or set CORDON_PLUGINS"
        ),
        "{said}"
    );
    let found = project.cordon(&[
        "runs",
        "resume",
        "r2",
        "--approve",
        "call-1-1",
        "--plugins",
        "moved",
    ]);
    assert!(found.status.success(), "{}", text(&found.stderr));
}

const TWO_CALLS: &str = r#"
[[turn]]
[[turn.call]]
tool = "notes.list"
args = {}
[[turn.call]]
tool = "notes.list"
args = {}

[[turn]]
text = "Done."
"#;

#[test]
fn the_budget_hooks_counter_is_adopted_and_a_disagreeing_agent_is_stopped_before_it_starts() {
    let project = project();
    project.bundled("budget", artifacts::BUDGET);
    project.write("script.toml", TWO_CALLS);
    for (agent, run) in [
        (AGENT_ALLOW_ALL.to_owned(), "open"),
        (
            format!("{AGENT_ALLOW_ALL}[state.notes]\nscope = \"thread\"\n"),
            "closed",
        ),
    ] {
        project.write("agent.toml", &agent);
        let output = project.run_scripted(run, &[]);
        assert!(output.status.success(), "{run}: {}", text(&output.stderr));
        let shown = project.show(run);
        assert_eq!(
            shown["state"]["budget.calls"], 2,
            "{run}: both calls counted"
        );
        let results: Vec<serde_json::Value> = shown["commits"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|commit| commit["tools"].as_array().cloned().unwrap_or_default())
            .map(|tool| tool["result"].clone())
            .collect();
        assert!(
            results.iter().all(|result| result.get("error").is_none()),
            "{run}: {results:?}"
        );
    }

    project.write(
        "agent.toml",
        &format!("{AGENT_ALLOW_ALL}[state.\"budget.calls\"]\nmerge = \"exclusive\"\n"),
    );
    let output = project.run_scripted("disagrees", &[]);
    assert_eq!(output.status.code(), Some(2));
    let said = text(&output.stderr);
    assert!(
        said.contains("agent.toml: state key `budget.calls`: the agent declares merge = \"exclusive\", and bundle `budget`")
            && said.contains("plugins/budget/plugin.toml")
            && said.contains("write `merge = \"commutative\"`"),
        "{said}"
    );
    assert!(
        project.cordon(&["runs", "show", "disagrees"]).status.code() == Some(2),
        "the run never started"
    );

    // An agent that leaves the budget out of its hooks owns the key alone.
    project.write(
        "agent.toml",
        "name = \"t\"\nhooks = []\n[permissions]\ndefault = \"allow\"\n[state.\"budget.calls\"]\nmerge = \"exclusive\"\n",
    );
    let unhooked = project.run_scripted("unhooked", &[]);
    assert!(unhooked.status.success(), "{}", text(&unhooked.stderr));
    assert!(
        project.show("unhooked")["state"]
            .get("budget.calls")
            .is_none()
    );

    // A second bundle declaring the counter otherwise cannot take it over.
    project.write("agent.toml", AGENT_ALLOW_ALL);
    project.bundle(
        "rogue",
        "[plugin]\nname = \"rogue\"\nversion = \"0.1.0\"\nkind = \"hook\"\nhooks = [\"before-tool-call\"]\n\
         component = \"tool.wasm\"\n[grants.state]\nread = [\"budget.calls\"]\nwrite = [\"budget.calls\"]\n\
         [state.\"budget.calls\"]\nmerge = \"exclusive\"\n",
        artifacts::BUDGET,
    );
    project.approve("rogue");
    let output = project.run_scripted("rogue", &[]);
    assert_eq!(output.status.code(), Some(2));
    let said = text(&output.stderr);
    assert!(
        said.contains("bundle `budget` declares merge = \"commutative\", and bundle `rogue`")
            && said.contains("leave one of them out"),
        "{said}"
    );
}

#[test]
fn a_run_goes_on_with_the_last_conversation_and_runs_list_newest_first() {
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    project.write("script.toml", NOTE_SCRIPT);
    let first = project.run_scripted("r1", &[]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    project.write("script.toml", "[[turn]]\ntext = \"We saved milk.\"\n");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--agent",
            "agent.toml",
            "--model",
            "scripted:script.toml",
        ];
        args.extend_from_slice(extra);
        project.cordon(&args)
    };
    let output = run(&["--continue", "--run-id", "r2", "what did we do?"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = project.show("r2");
    assert_eq!(shown["commits"][0]["continues"]["run_id"], "r1");
    let messages = shown["commits"][0]["messages"].as_array().unwrap();
    let carried = shown["commits"][0]["continues"]["messages"]
        .as_u64()
        .unwrap();
    assert_eq!(
        messages.len() as u64,
        carried + 1,
        "the carried turns, then the prompt"
    );
    assert_eq!(messages[0]["text"], "go");
    assert_eq!(messages.last().unwrap()["text"], "what did we do?");
    assert!(
        messages
            .iter()
            .any(|message| message["call_id"] == "earlier-1"),
        "{shown}"
    );

    let listed = text(&project.cordon(&["runs", "list"]).stdout);
    let lines: Vec<&str> = listed.lines().collect();
    assert!(
        lines[0].starts_with("RUN")
            && lines[0].contains("CREATED (UTC)")
            && lines[0].contains("THREAD"),
        "{listed}"
    );
    assert!(
        lines[1].starts_with("r2 ") && lines[2].starts_with("r1 "),
        "newest first: {listed}"
    );
    assert!(
        lines[1].contains("default") && lines[1].contains("ended: final answer"),
        "{listed}"
    );
    assert_eq!(project.show("last")["run"]["run_id"], "r2");

    // `--continue=RUN` names the run; deleting a run forgets it whole.
    let output = run(&["--continue=r1", "--run-id", "r3", "again"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let output = project.cordon(&["runs", "delete", "r1"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("deleted run r1"),
        "{}",
        text(&output.stdout)
    );
    let output = project.cordon(&["runs", "show", "r1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("r1"),
        "{}",
        text(&output.stderr)
    );
    let output = project.cordon(&["runs", "delete", "r1"]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "a second delete names the missing run"
    );
    assert_eq!(
        project.show("r2")["commits"][0]["continues"]["run_id"],
        "r1",
        "the later run keeps what it carried"
    );
    let output = run(&["--continue=r1", "--run-id", "r4", "once more"]);
    assert_eq!(output.status.code(), Some(2));

    // A run waiting on a call is resumed first, not gone on with.
    project.write("agent.toml", AGENT_ASK_NOTES);
    project.write("script.toml", NOTE_SCRIPT);
    let waiting = project.run_scripted("r5", &[]);
    assert_eq!(waiting.status.code(), Some(3));
    let output = run(&["--continue", "--run-id", "r6", "and?"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("run r5 waits on calls"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_tools_pattern_matching_nothing_is_warned_about() {
    let project = project();
    project.write(
        "agent.toml",
        "name = \"t\"\ntools = [\"notes.*\", \"nots.*\"]\n[permissions]\ndefault = \"allow\"\n",
    );
    project.write("script.toml", "[[turn]]\ntext = \"Done.\"\n");
    let output = project.run_scripted("r1", &[]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("agent.toml: `tools` pattern \"nots.*\" matches none of the"),
        "{stderr}"
    );
    assert!(!stderr.contains("\"notes.*\" matches none"), "{stderr}");
}

#[test]
fn a_provider_retry_is_told_as_it_happens() {
    use cordon_tests::replay::{Reply, Server};
    let project = project();
    project.write("agent.toml", AGENT_ALLOW_ALL);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Server::start(vec![
        Reply::Status {
            code: 429,
            headers: vec![("retry-after", "1".into())],
            body: r#"{"error": {"message": "slow down"}}"#.into(),
        },
        Reply::Stream(openai_turn(&["Fine."], None)),
    ]));
    let output = project.cordon(&[
        "run",
        "--agent",
        "agent.toml",
        "--model",
        "openai:gpt-test",
        "--base-url",
        &server.url,
        "go",
    ]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(
        stdout.contains(
            "(the model provider: HTTP 429: slow down; trying again in 1.0 s, attempt 2 of 5)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("Fine."), "{stdout}");
}

#[test]
fn a_missing_model_script_is_named_once_with_the_field_that_chose_it() {
    let project = project();
    project.write(
        "agent.toml",
        "name = \"a\"\nmodel = \"scripted:missing.toml\"\n[permissions]\ndefault = \"allow\"\n",
    );
    let output = project.cordon(&["run", "--agent", "agent.toml", "go"]);
    assert_eq!(output.status.code(), Some(2));
    let said = text(&output.stderr);
    assert!(
        said.contains("agent.toml: field `model` = \"scripted:missing.toml\"")
            && said.contains("missing.toml: cannot read model script"),
        "{said}"
    );
    assert_eq!(said.matches("No such file").count(), 1, "{said}");
}

#[test]
fn a_run_that_cannot_start_leaves_no_store_behind() {
    let project = Project::new();
    project.write(
        "agent.toml",
        "name = \"a\"\nmodel = \"scripted:script.toml\"\nhooks = [\"no-such-hook\"]\n",
    );
    project.write("script.toml", "[[turn]]\ntext = \"Done.\"\n");
    std::fs::create_dir_all(project.path("plugins")).unwrap();
    let output = project.cordon(&["run", "--agent", "agent.toml", "go"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("no-such-hook"),
        "{}",
        text(&output.stderr)
    );
    assert!(
        !project.path(".cordon").exists(),
        "no store, and no folder made for one"
    );
}
