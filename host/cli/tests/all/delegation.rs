//! Delegation as an operator meets it: the demo's lead agent hands work to
//! two sub-agents, `runs list` shows the tree, a sub-agent's `write` waits at
//! the root by its path and its change reaches the folder only with the
//! root's step; and a process killed during a grandchild's effectful call
//! resumes each run from its last commit without running that call again.

use std::path::Path;
use std::time::Duration;

use cordon_test_artifacts as artifacts;
use serde_json::Value;

use crate::mcp::{INITIALIZE, exchange};
use crate::support::{Project, both, postgres_schema, text};
use crate::workers::{finished, show, worker};

fn demo(file: &str) -> String {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo");
    std::fs::read_to_string(demo.join(file)).unwrap()
}

#[test]
fn the_demo_lead_delegates_and_its_editors_change_waits_by_path_then_lands_with_its_step() {
    let project = Project::new();
    project.bundled("dir", artifacts::DIR);
    for file in [
        "lead.toml",
        "reviewer.toml",
        "lead-script.toml",
        "reviewer-script.toml",
        "editor-script.toml",
    ] {
        project.write(&format!("agents/{file}"), &demo(file));
    }
    project.write("src/greet.rs", &demo("project/src/greet.rs"));
    let greeting = project.read("src/greet.rs");

    let run = &[
        "run",
        "--agent",
        "agents/lead.toml",
        "--run-id",
        "lead",
        "Make the greeting friendlier",
    ];
    let output = project.cordon(run);
    assert_eq!(output.status.code(), Some(3), "{}", both(&output));
    let said = text(&output.stdout);
    assert!(
        said.contains("call-2-1/call-1-2  write") && said.contains("--approve call-2-1/call-1-2"),
        "{said}"
    );
    assert_eq!(
        project.read("src/greet.rs"),
        greeting,
        "the editor's edit is committed in its run, not in the folder"
    );
    assert!(project.read("CHANGELOG.md").is_none());

    let listed = text(&project.cordon(&["runs", "list"]).stdout);
    let lines: Vec<&str> = listed.lines().collect();
    assert!(lines[1].starts_with("lead "), "{listed}");
    assert!(lines[2].starts_with("└ lead/call-1-1 "), "{listed}");
    assert!(lines[3].starts_with("└ lead/call-2-1 "), "{listed}");
    assert!(
        lines[3].contains("editor") && lines[3].contains("waiting"),
        "{listed}"
    );

    let reviewer = project.show("lead/call-1-1");
    assert_eq!(reviewer["run"]["parent"]["call-id"], "call-1-1");
    assert_eq!(reviewer["run"]["parent"]["root"], "lead");
    let edit = &reviewer["commits"][1]["tools"][1];
    assert_eq!(edit["decision"]["verdict"], "deny", "{edit}");
    assert_eq!(edit["decision"]["rule"], "edit", "its own rule holds");

    let alone = project.cordon(&["runs", "resume", "lead/call-2-1"]);
    assert!(!alone.status.success());
    assert!(
        both(&alone).contains("resume that run (`cordon runs resume lead`)"),
        "{}",
        both(&alone)
    );

    let output = project.cordon(&["runs", "resume", "lead", "--approve", "call-2-1/call-1-2"]);
    assert!(output.status.success(), "{}", both(&output));
    assert!(
        project
            .read("src/greet.rs")
            .unwrap()
            .contains("Hello, {name}!")
    );
    assert_eq!(
        project.read("CHANGELOG.md").as_deref(),
        Some("- greet: the greeting ends with an exclamation mark\n")
    );
    let lead = project.show("lead");
    assert_eq!(
        lead["sub_runs"],
        serde_json::json!(["lead/call-1-1", "lead/call-2-1"])
    );

    let deleted = project.cordon(&["runs", "delete", "lead"]);
    assert!(
        text(&deleted.stdout).contains("and its 2 sub-agent run(s)"),
        "{}",
        both(&deleted)
    );
    assert!(text(&project.cordon(&["runs", "list"]).stdout).starts_with("no runs"));
}

/// A root, a child in a file of its own and a grandchild written inline in
/// it, which sleeps in the hostile fixture: a call that may act past its
/// step, so a crash during it leaves it indeterminate.
fn three_levels(project: &Project) {
    project.bundle(
        "hostile",
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n\
         [grants]\ntools = [\"hostile.echo\"]\n[limits]\ntimeout-ms = 120000\n",
        artifacts::HOSTILE,
    );
    project.approve("hostile");
    project.write(
        "agent.toml",
        "name = \"root\"\nmodel = \"scripted:root.toml\"\n[permissions]\ndefault = \"allow\"\n\
         [agents.mid]\ndescription = \"Delegates on.\"\nfile = \"mid.toml\"\n",
    );
    project.write(
        "mid.toml",
        "name = \"mid\"\nmodel = \"scripted:mid-script.toml\"\n[permissions]\ndefault = \"allow\"\n\
         [agents.leaf]\ndescription = \"Sleeps.\"\nmodel = \"scripted:leaf-script.toml\"\n",
    );
    let delegate = |agent: &str, answer: &str| {
        format!(
            "[[turn]]\n[[turn.call]]\ntool = \"agent.{agent}\"\nargs = {{ task = \"go on\" }}\n\n[[turn]]\ntext = \"{answer}\"\n"
        )
    };
    project.write("root.toml", &delegate("mid", "the root is done"));
    project.write("mid-script.toml", &delegate("leaf", "the mid is done"));
    project.write(
        "leaf-script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"hostile.sleep\"\nargs = { ms = 100000 }\n\n[[turn]]\ntext = \"the leaf is done\"\n",
    );
}

#[cfg(unix)]
#[test]
fn a_process_killed_during_a_grandchilds_effectful_call_resumes_each_run_and_reruns_nothing() {
    let project = Project::new();
    three_levels(&project);
    let mut running = project
        .command(&["run", "--agent", "agent.toml", "--run-id", "r", "go"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = project.calls_started("r/call-1-1/call-1-1", &[]);
    if !started {
        let _ = running.kill();
    }
    assert!(started, "the grandchild never started its call");
    std::thread::sleep(Duration::from_millis(200));
    running.kill().unwrap();
    running.wait().unwrap();

    for run in ["r", "r/call-1-1", "r/call-1-1/call-1-1"] {
        let shown = project.show(run);
        assert!(!shown["intent"].is_null(), "{run} recorded its call first");
    }
    let output = project.cordon(&["runs", "resume", "r"]);
    assert_eq!(output.status.code(), Some(3), "{}", both(&output));
    let said = text(&output.stdout);
    assert!(
        said.contains("call-1-1/call-1-1/call-1-1  hostile.sleep"),
        "the sleep waits by its path: {said}"
    );
    assert!(said.contains("may already have acted"), "{said}");
    let leaf = project.show("r/call-1-1/call-1-1");
    assert_eq!(leaf["disposition"]["disposition"], "waiting", "{leaf}");

    let output = project.cordon(&[
        "runs",
        "resume",
        "r",
        "--deny",
        "call-1-1/call-1-1/call-1-1",
    ]);
    assert!(output.status.success(), "{}", both(&output));
    let root: Value = project.show("r");
    assert_eq!(root["disposition"]["answer"], "the root is done", "{root}");
    let leaf = project.show("r/call-1-1/call-1-1");
    let sleep = &leaf["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["tools"].as_array().unwrap().clone())
        .find(|tool| tool["call"]["name"] == "hostile.sleep" && !tool["result"].is_null())
        .unwrap()["result"];
    assert_eq!(sleep["error"]["kind"], "denied", "never run twice: {sleep}");
}

/// An agent whose one sub-agent, `helper`, has a scripted model of its own:
/// it adds a note, then deletes one, which its parent asks about.
fn with_helper(project: &Project) {
    project.bundled("notes", artifacts::NOTES);
    project.write(
        "agent.toml",
        "name = \"lead\"\n[permissions]\ndefault = \"allow\"\nask = [\"notes.delete\"]\n\
         [agents.helper]\ndescription = \"Keeps the notes.\"\nmodel = \"scripted:helper.toml\"\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"agent.helper\"\nargs = { task = \"tidy the notes\" }\n\n[[turn]]\ntext = \"Tidied.\"\n",
    );
    project.write(
        "helper.toml",
        r#"
[[turn]]
[[turn.call]]
tool = "notes.add"
args = { title = "Milk", body = "buy milk" }
[[turn.call]]
tool = "notes.delete"
args = { id = 1 }

[[turn]]
text = "Added one, deleted one."
"#,
    );
}

#[test]
fn a_worker_drives_a_root_run_and_its_sub_agents_run_under_one_lease() {
    let Some(url) = postgres_schema("a tree under one lease", "tree") else {
        return;
    };
    let project = Project::new();
    with_helper(&project);
    let submitted = project.cordon(&[
        "run",
        "--detach",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
        "--store",
        &url,
        "--run-id",
        "r1",
        "go",
    ]);
    assert!(submitted.status.success(), "{}", both(&submitted));
    let stderr = finished(worker(&project, &url, "w1", 30_000, &["--until-idle"]));
    assert!(stderr.contains("run r1: waiting"), "{stderr}");
    let helper = show(&project, &url, "r1/call-1-1");
    assert_eq!(helper["run"]["parent"]["root"], "r1", "{helper}");
    assert_eq!(helper["disposition"]["disposition"], "waiting", "{helper}");

    let resumed = project.cordon(&[
        "runs",
        "resume",
        "r1",
        "--detach",
        "--store",
        &url,
        "--approve",
        "call-1-1/call-1-2",
    ]);
    assert!(resumed.status.success(), "{}", both(&resumed));
    let stderr = finished(worker(&project, &url, "w2", 30_000, &["--until-idle"]));
    assert!(stderr.contains("run r1: done"), "{stderr}");
    let root = show(&project, &url, "r1");
    assert_eq!(root["disposition"]["answer"], "Tidied.", "{root}");
    assert_eq!(
        root["commits"][2]["messages"][0]["result"]["output"], "Added one, deleted one.",
        "{root}"
    );
    let listed = text(&project.cordon(&["runs", "list", "--store", &url]).stdout);
    assert!(listed.contains("└ r1/call-1-1"), "{listed}");
}

#[test]
fn cordon_mcp_serves_a_sub_agent_as_a_tool_and_its_run_hangs_under_the_served_call() {
    use std::io::Write;

    let project = Project::new();
    with_helper(&project);
    let mut server = project
        .command(&["mcp", "--agent", "agent.toml"])
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
    let listed = exchange(
        &mut stdin,
        &mut stdout,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        2,
    );
    let helper = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "agent_helper")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(helper["description"], "Keeps the notes.");
    assert_eq!(
        helper["inputSchema"]["required"],
        serde_json::json!(["task"])
    );

    let answer = exchange(
        &mut stdin,
        &mut stdout,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_helper","arguments":{"task":"tidy the notes"}}}"#,
        3,
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let said = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("Added one, deleted one."), "{answer}");
    drop(stdin);
    assert!(server.wait().unwrap().success());

    let runs: Value =
        serde_json::from_slice(&project.cordon(&["runs", "list", "--json"]).stdout).unwrap();
    let child = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|run| !run["header"]["parent"].is_null())
        .unwrap_or_else(|| panic!("{runs}"));
    let served = child["header"]["parent"]["run-id"].as_str().unwrap();
    assert!(served.starts_with("mcp-"), "{child}");
    let shown = project.show(child["header"]["run_id"].as_str().unwrap());
    let delete = &shown["commits"][1]["tools"][1];
    assert_eq!(
        delete["result"]["error"]["kind"], "denied",
        "a served call cannot wait, so its sub-agent's ask is denied: {delete}"
    );
    assert!(
        delete["result"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a sub-agent of a served call cannot wait"),
        "{delete}"
    );
    assert_eq!(shown["disposition"]["answer"], "Added one, deleted one.");
}

#[test]
fn the_parents_budget_hook_counts_its_sub_agents_calls_until_they_exhaust_it() {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    let budget =
        std::fs::read_to_string(Path::new(artifacts::PLUGINS_DIR).join("budget/plugin.toml"))
            .unwrap()
            .replace("budget.wasm", "tool.wasm")
            .replace("max-calls = 20", "max-calls = 3");
    project.bundle("budget", &budget, artifacts::BUDGET);
    project.approve("budget");
    project.write(
        "agent.toml",
        "name = \"lead\"\n[permissions]\ndefault = \"allow\"\n\
         [agents.helper]\ndescription = \"Adds notes.\"\nmodel = \"scripted:helper.toml\"\n",
    );
    let add =
        "[[turn]]\n[[turn.call]]\ntool = \"notes.add\"\nargs = { title = \"t\", body = \"b\" }\n\n";
    project.write(
        "script.toml",
        &format!(
            "{add}[[turn]]\n[[turn.call]]\ntool = \"agent.helper\"\nargs = {{ task = \"add two\" }}\n\n{add}[[turn]]\ntext = \"done\"\n"
        ),
    );
    project.write(
        "helper.toml",
        &format!("{add}{add}[[turn]]\ntext = \"added what the budget let me\"\n"),
    );
    let output = project.run_scripted("r", &[]);
    assert!(output.status.success(), "{}", both(&output));

    let denied = |shown: &Value, commit: usize| -> String {
        let tool = &shown["commits"][commit]["tools"][0];
        assert_eq!(tool["decision"]["verdict"], "deny", "{tool}");
        tool["result"]["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let helper = project.show("r/call-2-1");
    assert_eq!(
        helper["commits"][1]["tools"][0]["decision"]["verdict"],
        "allow"
    );
    let said = denied(&helper, 2);
    assert!(said.contains("budget of 3 tool calls is spent"), "{said}");
    let lead = project.show("r");
    let said = denied(&lead, 3);
    assert!(said.contains("budget of 3 tool calls is spent"), "{said}");
    assert_eq!(lead["state"]["budget.calls"], 3, "{lead}");
}

#[test]
fn a_sub_agents_own_hooks_judge_its_calls_beside_its_parents() {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    let budget =
        std::fs::read_to_string(Path::new(artifacts::PLUGINS_DIR).join("budget/plugin.toml"))
            .unwrap()
            .replace("budget.wasm", "tool.wasm")
            .replace("max-calls = 20", "max-calls = 1");
    project.bundle("budget", &budget, artifacts::BUDGET);
    project.approve("budget");
    project.write(
        "agent.toml",
        "name = \"lead\"\nhooks = []\n[permissions]\ndefault = \"allow\"\n\
         [agents.helper]\ndescription = \"Adds notes.\"\nmodel = \"scripted:helper.toml\"\nhooks = [\"budget\"]\n",
    );
    let add =
        "[[turn]]\n[[turn.call]]\ntool = \"notes.add\"\nargs = { title = \"t\", body = \"b\" }\n\n";
    project.write(
        "script.toml",
        &format!(
            "{add}{add}[[turn]]\n[[turn.call]]\ntool = \"agent.helper\"\nargs = {{ task = \"add two\" }}\n\n[[turn]]\ntext = \"done\"\n"
        ),
    );
    project.write(
        "helper.toml",
        &format!("{add}{add}[[turn]]\ntext = \"added one\"\n"),
    );
    let output = project.run_scripted("r", &[]);
    assert!(output.status.success(), "{}", both(&output));
    let lead = project.show("r");
    for commit in [1, 2] {
        let tool = &lead["commits"][commit]["tools"][0];
        assert_eq!(
            tool["decision"]["verdict"], "allow",
            "the lead runs no hook: {tool}"
        );
    }
    let helper = project.show("r/call-3-1");
    let first = &helper["commits"][1]["tools"][0];
    assert_eq!(first["decision"]["verdict"], "allow", "{first}");
    let tools = [&helper["commits"][2]["tools"][0]];
    assert_eq!(tools[0]["decision"]["verdict"], "deny", "{tools:?}");
    assert!(
        tools[0]["decision"]["rule"]
            .as_str()
            .unwrap()
            .contains("budget of 1 tool calls is spent"),
        "{tools:?}"
    );
    assert_eq!(lead["state"]["budget.calls"], 1, "{lead}");

    project.write(
        "agent.toml",
        "name = \"lead\"\nhooks = []\n[agents.helper]\ndescription = \"Adds notes.\"\nhooks = [\"budgte\"]\n",
    );
    let refused = project.run_scripted("s", &[]);
    assert!(!refused.status.success());
    assert!(both(&refused).contains("budgte"), "{}", both(&refused));
}

/// An Anthropic stream that says `text`, having read 3 tokens and written 2.
fn anthropic_answer(text: &str) -> String {
    let event = |kind: &str, mut value: Value| {
        value["type"] = serde_json::json!(kind);
        format!("event: {kind}\ndata: {value}\n\n")
    };
    [
        event(
            "message_start",
            serde_json::json!({"message": {"usage": {"input_tokens": 3}}}),
        ),
        event(
            "content_block_start",
            serde_json::json!({"index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        event(
            "content_block_delta",
            serde_json::json!({"index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        event("content_block_stop", serde_json::json!({"index": 0})),
        event(
            "message_delta",
            serde_json::json!({"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        ),
        event("message_stop", serde_json::json!({})),
    ]
    .concat()
}

/// An OpenAI-compatible stream that says `text`.
fn openai_answer(text: &str) -> String {
    let chunk = |delta: Value, finish: Option<&str>| serde_json::json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(serde_json::json!({"content": text}), None),
        chunk(serde_json::json!({}), Some("stop"))
    )
}

#[test]
fn sub_agents_run_at_once_on_hosted_providers_of_their_own() {
    use cordon_tests::replay::{Reply, Server};
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let openai = runtime.block_on(Server::start(vec![Reply::Stream(openai_answer(
        "from gpt",
    ))]));
    let anthropic = runtime.block_on(Server::start(vec![Reply::Stream(anthropic_answer(
        "from claude",
    ))]));
    project.write(
        "agent.toml",
        "name = \"lead\"\n[permissions]\ndefault = \"allow\"\n\
         [agents.gpt]\ndescription = \"Asks GPT.\"\nfile = \"gpt.toml\"\n\
         [agents.claude]\ndescription = \"Asks Claude.\"\nfile = \"claude.toml\"\n",
    );
    project.write(
        "gpt.toml",
        &format!(
            "name = \"gpt\"\ninstructions = \"Answer briefly.\"\nmodel = \"openai:gpt-test\"\nbase-url = \"{}\"\n",
            openai.url
        ),
    );
    project.write(
        "claude.toml",
        &format!(
            "name = \"claude\"\nmodel = \"anthropic:claude-test\"\nbase-url = \"{}\"\n",
            anthropic.url
        ),
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"agent.gpt\"\nargs = { task = \"say hi\" }\n\
         [[turn.call]]\ntool = \"agent.claude\"\nargs = { task = \"say hello\", context = \"politely\" }\n\n\
         [[turn]]\ntext = \"both answered\"\n",
    );
    let output = project
        .command(&[
            "run",
            "--agent",
            "agent.toml",
            "--model",
            "scripted:script.toml",
            "--run-id",
            "r",
            "go",
        ])
        .env("OPENAI_API_KEY", "sk-test")
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", both(&output));
    let shown = project.show("r");
    let results: Vec<&Value> = shown["commits"][1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message.get("result"))
        .collect();
    assert_eq!(results[0]["output"], "from gpt", "{shown}");
    assert_eq!(results[1]["output"], "from claude", "{shown}");

    let asked = &openai.requests()[0].body;
    assert_eq!(
        asked["messages"][0]["content"], "Answer briefly.",
        "{asked}"
    );
    assert_eq!(asked["messages"][1]["content"], "say hi", "{asked}");
    let asked = &anthropic.requests()[0].body;
    assert_eq!(
        asked["messages"][0]["content"][0]["text"], "say hello\n\nContext:\npolitely",
        "{asked}"
    );
    let claude = project.show("r/call-1-2");
    assert_eq!(
        claude["commits"][1]["usage"],
        serde_json::json!({"input_tokens": 3, "output_tokens": 2}),
        "{claude}"
    );
}

#[test]
fn a_sub_agents_file_rules_hold_for_its_calls_beside_its_parents() {
    let project = Project::new();
    project.bundled("dir", artifacts::DIR);
    project.bundled("files", artifacts::FILES);
    project.write("secret.txt", "the secret\n");
    project.write(
        "agent.toml",
        "name = \"lead\"\nsandbox = \"dir\"\n[permissions]\ndefault = \"allow\"\n\
         [agents.helper]\ndescription = \"Reads.\"\nmodel = \"scripted:helper.toml\"\n\
         [agents.helper.permissions.files]\ndeny = [\"secret.txt\"]\n",
    );
    let reads = "[[turn]]\n[[turn.call]]\ntool = \"read\"\nargs = { path = \"secret.txt\" }\n\
                 [[turn.call]]\ntool = \"files.read\"\nargs = { path = \"secret.txt\" }\n\n";
    project.write(
        "script.toml",
        &format!(
            "{reads}[[turn]]\n[[turn.call]]\ntool = \"agent.helper\"\nargs = {{ task = \"read it\" }}\n\n[[turn]]\ntext = \"done\"\n"
        ),
    );
    project.write(
        "helper.toml",
        &format!("{reads}[[turn]]\ntext = \"refused\"\n"),
    );
    let output = project.run_scripted("r", &[]);
    assert!(output.status.success(), "{}", both(&output));
    let result =
        |shown: &Value, index: usize| shown["commits"][1]["tools"][index]["result"].clone();
    let lead = project.show("r");
    for index in [0, 1] {
        let read = result(&lead, index);
        assert!(
            read.to_string().contains("the secret"),
            "the lead reads it: {read}"
        );
    }
    let helper = project.show("r/call-2-1");
    for index in [0, 1] {
        let read = result(&helper, index);
        assert!(!read.to_string().contains("the secret"), "{read}");
        assert!(read["error"].is_object(), "{read}");
    }
    let events = helper["commits"][1]["events"].to_string();
    assert!(
        events.matches("denied").count() >= 2 && events.contains("secret.txt"),
        "each refusal is audited in the helper's run: {events}"
    );
}
