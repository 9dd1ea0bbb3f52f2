//! Approval prompts as a person at a terminal answers them. Each test runs
//! `cordon` under `script`, which gives it a pseudo-terminal and types the
//! answers: a write shown as a diff, a tool allowed for the rest of the run,
//! a denial with a reason the model reads, and `runs resume` asking about
//! the calls a run waits on; beside them, the flags that decide without a
//! terminal.

use cordon_test_artifacts as artifacts;
use serde_json::Value;

use crate::support::{Project, text};

const AGENT: &str = "name = \"t\"\nsandbox = \"dir\"\n[permissions]\ndefault = \"allow\"\nask = [\"write\", \"notes.add\"]\n";

const SCRIPT: &str = r#"
[[turn]]
text = "Writing."
[[turn.call]]
tool = "write"
args = { path = "a.txt", content = "one\nthree\n" }
[[turn.call]]
tool = "notes.add"
args = { title = "Milk", body = "buy milk" }

[[turn]]
text = "One more."
[[turn.call]]
tool = "notes.add"
args = { title = "Eggs", body = "a dozen" }

[[turn]]
text = "Done."
"#;

fn project() -> Project {
    let project = Project::new();
    project.bundled("dir", artifacts::DIR);
    project.bundled("notes", artifacts::NOTES);
    project.write("agent.toml", AGENT);
    project.write("script.toml", SCRIPT);
    project.write("a.txt", "one\ntwo\n");
    project
}

const RUN: [&str; 9] = [
    "run",
    "--agent",
    "agent.toml",
    "--model",
    "scripted:script.toml",
    "--run-id",
    "r1",
    "--direct",
    "go",
];

fn show(project: &Project) -> Value {
    let output = project.cordon(&["runs", "show", "r1", "--json"]);
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The last committed record of call `id` (a waiting run commits it first
/// without a result).
fn record(shown: &Value, id: &str) -> Value {
    shown["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["tools"].as_array().unwrap().iter())
        .rev()
        .find(|record| record["call"]["id"] == id)
        .unwrap_or_else(|| panic!("no call {id} in {shown}"))
        .clone()
}

#[test]
fn a_prompt_shows_a_write_as_a_diff_and_allows_a_tool_for_the_rest_of_the_run() {
    let project = project();
    let (output, shown) = project.at_terminal(&RUN, "y\na\n");
    assert!(output.status.success(), "{shown}{}", text(&output.stderr));
    assert!(
        shown.contains("call-1-1  write  (permission rule `write` asks)"),
        "{shown}"
    );
    assert!(
        shown.contains("--- a/a.txt") && shown.contains("-two") && shown.contains("+three"),
        "the write is shown against the file: {shown}"
    );
    assert!(
        shown.contains("call-1-2  notes.add") && shown.contains("title: Milk"),
        "{shown}"
    );
    assert!(
        !shown.contains("call-2-1  notes.add"),
        "a tool allowed for the run is not asked about again: {shown}"
    );
    assert!(
        shown.contains("allowed notes.add: allowed for the rest of the run"),
        "{shown}"
    );
    assert_eq!(project.read("a.txt").as_deref(), Some("one\nthree\n"));
    let shown = show(&project);
    let eggs = record(&shown, "call-2-1");
    assert_eq!(eggs["decision"]["answered"], "approve", "{eggs}");
    assert_eq!(eggs["decision"]["rule"], "notes.add");
}

#[test]
fn a_denial_with_a_reason_reaches_the_model_as_the_operators() {
    let project = project();
    let (output, shown) = project.at_terminal(&RUN, "n\nr\nuse the shopping list\nr not now\n");
    assert!(output.status.success(), "{shown}{}", text(&output.stderr));
    assert!(shown.contains("why? (the model reads it)"), "{shown}");
    assert_eq!(project.read("a.txt").as_deref(), Some("one\ntwo\n"));
    let shown = show(&project);
    let write = record(&shown, "call-1-1");
    assert_eq!(
        write["result"]["error"]["message"],
        "denied by the operator"
    );
    let milk = record(&shown, "call-1-2");
    assert_eq!(
        milk["result"]["error"]["message"],
        "denied by the operator: use the shopping list"
    );
    assert_eq!(
        milk["decision"]["answered"]["deny-because"],
        "use the shopping list"
    );
    assert_eq!(
        record(&shown, "call-2-1")["result"]["error"]["message"],
        "denied by the operator: not now"
    );
    let listed = text(&project.cordon(&["runs", "show", "r1"]).stdout);
    assert!(
        listed.contains("notes.add: deny (denied by the operator: use the shopping list; rule `notes.add` asked)"),
        "{listed}"
    );
}

#[test]
fn a_waiting_run_lists_every_call_and_resumes_by_flags_or_by_asking() {
    let project = project();
    let output = project.cordon(&RUN);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout
            .contains("resume with: cordon runs resume r1 --approve call-1-1 --approve call-1-2\n")
            && stdout.contains("--approve-all, --deny-all"),
        "{stdout}"
    );

    // Without a terminal every call needs a decision; one given by flag and
    // the rest by --deny-all, with the reason the model reads.
    let output = project.cordon(&["runs", "resume", "r1", "--approve", "call-1-2"]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("call-1-1"),
        "{}",
        text(&output.stderr)
    );

    let other = self::project();
    let output = other.cordon(&RUN);
    assert_eq!(output.status.code(), Some(3));
    let output = other.cordon(&[
        "runs",
        "resume",
        "r1",
        "--approve",
        "call-1-2",
        "--deny-all",
        "--reason",
        "not today",
    ]);
    assert_eq!(
        output.status.code(),
        Some(3),
        "the next step asks again: {}",
        text(&output.stderr)
    );
    let shown = show(&other);
    assert!(
        record(&shown, "call-1-2")["result"]["output"].is_object(),
        "{shown}"
    );
    assert_eq!(
        record(&shown, "call-1-1")["result"]["error"]["message"],
        "denied by the operator: not today"
    );
    assert_eq!(other.read("a.txt").as_deref(), Some("one\ntwo\n"));

    // On a terminal, `runs resume` asks about each call not decided by
    // flag, and the run's later steps ask as they come.
    let (output, typed) =
        project.at_terminal(&["runs", "resume", "r1", "--deny", "call-1-2"], "y\na\n");
    assert!(output.status.success(), "{typed}{}", text(&output.stderr));
    assert!(typed.contains("call-1-1  write"), "{typed}");
    assert!(!typed.contains("call-1-2  notes.add  ("), "{typed}");
    assert!(typed.contains("call-2-1  notes.add  ("), "{typed}");
    assert_eq!(project.read("a.txt").as_deref(), Some("one\nthree\n"));
    let shown = show(&project);
    assert_eq!(
        record(&shown, "call-1-2")["result"]["error"]["message"],
        "denied by the operator"
    );
    assert!(record(&shown, "call-2-1")["result"]["output"].is_object());

    let output = project.cordon(&["runs", "resume", "r1", "--approve-all", "--deny-all"]);
    assert_eq!(output.status.code(), Some(2), "the two cannot go together");
}

/// Run `line`, the arguments of a `cordon` command as a shell reads them,
/// in `project` as a person at its folder would.
fn as_printed(project: &Project, line: &str) -> std::process::Output {
    let cordon = project.command(&[]);
    let mut shell = std::process::Command::new("sh");
    shell
        .arg("-c")
        .arg(format!("exec \"$0\" {line}"))
        .arg(cordon.get_program());
    for (name, value) in cordon.get_envs() {
        match value {
            Some(value) => shell.env(name, value),
            None => shell.env_remove(name),
        };
    }
    if let Some(dir) = cordon.get_current_dir() {
        shell.current_dir(dir);
    }
    shell.stdin(std::process::Stdio::null()).output().unwrap()
}

#[test]
fn the_resume_command_a_waiting_run_prints_works_as_printed_from_the_same_folder() {
    for (flags, named) in [
        (vec!["--workspace", "w"], "--workspace w"),
        (
            vec!["--store", "runs/elsewhere.db"],
            "--store runs/elsewhere.db",
        ),
        (
            vec!["--workspace", "my project"],
            "--workspace 'my project'",
        ),
    ] {
        let project = project();
        let workspace = if flags[0] == "--workspace" {
            flags[1]
        } else {
            "."
        };
        project.write(&format!("{workspace}/a.txt"), "one\ntwo\n");
        let mut args: Vec<&str> = vec![RUN[0]];
        args.extend(&flags);
        args.extend(&RUN[1..]);
        let output = project.cordon(&args);
        assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
        let stdout = text(&output.stdout);
        assert!(
            stdout.contains(&format!(
                "resume with: cordon runs resume r1 {named} --approve"
            )),
            "{stdout}"
        );
        let printed = stdout
            .lines()
            .find_map(|line| line.strip_prefix("resume with: cordon "))
            .unwrap();
        let output = as_printed(&project, printed);
        assert_eq!(
            output.status.code(),
            Some(3),
            "resumed as printed, the run goes on to ask again: {}",
            text(&output.stderr)
        );
    }
}
