//! `--store postgres://…` as a user gives it: a run that waits for approval,
//! listed, shown, resumed and diffed from the database, in a schema of the
//! test's own on the server `CORDON_TEST_POSTGRES` names (`scripts/test.sh`
//! starts one; without it each test says it is skipped and passes).

use cordon_test_artifacts as artifacts;

use crate::support::{Project, postgres_schema as database, text};

const AGENT: &str =
    "name = \"t\"\nsandbox = \"dir\"\n[permissions]\ndefault = \"allow\"\nask = [\"write\"]\n";

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

#[test]
fn a_run_waits_resumes_and_is_shown_from_postgres() {
    let Some(url) = database("a run over postgres", "resume") else {
        return;
    };
    let project = project();
    let run = [
        "run",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
        "--store",
        &url,
        "--run-id",
        "r1",
        "go",
    ];
    let output = project.cordon(&run);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    assert!(
        project.read(".cordon/cordon.db").is_none(),
        "no SQLite file is made beside a Postgres store"
    );

    let listed = project.cordon(&["runs", "list", "--store", &url]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let listed = text(&listed.stdout);
    assert!(
        listed.contains("r1") && listed.contains("waiting on 1 call(s)"),
        "{listed}"
    );

    let resumed = project.cordon(&["runs", "resume", "last", "--store", &url, "--approve-all"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert_eq!(project.read("a.txt").as_deref(), Some("one\nthree\n"));

    let shown = project.cordon(&["runs", "show", "r1", "--json", "--store", &url]);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["disposition"]["disposition"], "ended", "{shown}");
    assert_eq!(shown["disposition"]["answer"], "Done.", "{shown}");

    let diff = project.cordon(&["runs", "diff", "r1", "--store", &url]);
    assert!(diff.status.success(), "{}", text(&diff.stderr));
    assert!(
        text(&diff.stdout).contains("+three"),
        "{}",
        text(&diff.stdout)
    );

    // Another process sees the same runs: the database is the store.
    let elsewhere = Project::new();
    let listed = elsewhere.cordon(&["runs", "list", "--store", &url]);
    assert!(
        text(&listed.stdout).contains("ended: final answer"),
        "{}",
        text(&listed.stdout)
    );
}

#[test]
fn a_tool_call_refuses_a_postgres_store_by_name() {
    let Some(url) = database("tool call over postgres", "call") else {
        return;
    };
    let project = project();
    let output = project.cordon(&[
        "tool",
        "call",
        "notes.add",
        "--store",
        &url,
        "--args",
        r#"{"title": "a", "body": "b"}"#,
    ]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("SQLite store") && stderr.contains("Postgres store"),
        "{stderr}"
    );
}

#[test]
fn an_unreachable_database_is_named_without_its_password() {
    let project = Project::new();
    let output = project.cordon(&[
        "runs",
        "list",
        "--store",
        "postgres://cordon:s3cret@127.0.0.1:1/runs",
    ]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("postgres://cordon:***@127.0.0.1:1/runs") && !stderr.contains("s3cret"),
        "{stderr}"
    );
}
