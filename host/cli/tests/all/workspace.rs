//! `cordon run --sandbox` as an operator uses it: the built-in tools on the
//! bundled `dir` backend, transactional by default, `cordon runs diff`, an
//! approval wait that holds staged changes, and a process killed between
//! staging and commit that leaves the folder untouched.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use cordon_test_artifacts as artifacts;

use crate::support::{Project, both, text};

/// A project folder with the `dir` backend and the hostile fixture as
/// plugins, a few files, and its run store inside. The hostile bundle is
/// granted a tool to call, so its calls may act past their step: one that a
/// crash interrupted is never run again unasked.
fn project() -> Project {
    let project = Project::new();
    project.bundled("dir", artifacts::DIR);
    project.bundle(
        "hostile",
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n\
         [grants]\ntools = [\"hostile.echo\"]\n[limits]\ntimeout-ms = 120000\n",
        artifacts::HOSTILE,
    );
    project.approve("hostile");
    project.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    project.write("README.md", "# Project\n");
    project
}

/// `cordon runs diff RUN` with `extra` flags, which must succeed.
fn diff(project: &Project, run: &str, extra: &[&str]) -> String {
    let mut args = vec!["runs", "diff", run];
    args.extend_from_slice(extra);
    let output = project.cordon(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
}

const AGENT: &str = "name = \"coder\"\nsandbox = \"dir\"\n[permissions]\ndefault = \"allow\"\n";

const EDIT_SCRIPT: &str = r#"
[[turn]]
[[turn.call]]
tool = "write"
args = { path = "notes/plan.md", content = "1. add\n2. test\n" }
[[turn.call]]
tool = "edit"
args = { path = "src/lib.rs", old_string = "a + b", new_string = "a.wrapping_add(b)" }

[[turn]]
[[turn.call]]
tool = "bash"
args = { command = "echo '3. ship' >> notes/plan.md && rm README.md" }

[[turn]]
text = "Done."
"#;

/// Copy `from` (files only, without `.cordon` and `plugins`) to `to`.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == ".cordon" || name == "plugins" {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_transactional_run_changes_the_folder_through_its_commits_and_diffs_them() {
    let project = project();
    project.write("agent.toml", AGENT);
    project.write("script.toml", EDIT_SCRIPT);
    let original = tempfile::tempdir().unwrap();
    copy_tree(project.dir.path(), original.path());

    let output = project.run_scripted("r1", &[]);
    assert!(output.status.success(), "{}", both(&output));
    assert!(
        text(&output.stderr).contains("transactional"),
        "{}",
        both(&output)
    );
    assert_eq!(
        project.read("notes/plan.md").unwrap(),
        "1. add\n2. test\n3. ship\n"
    );
    assert!(
        project
            .read("src/lib.rs")
            .unwrap()
            .contains("a.wrapping_add(b)")
    );
    assert_eq!(project.read("README.md"), None);

    let whole = diff(&project, "r1", &[]);
    assert!(whole.contains("+++ b/notes/plan.md"), "{whole}");
    assert!(
        whole.contains("-    a + b\n+    a.wrapping_add(b)\n"),
        "{whole}"
    );
    assert!(
        whole.contains("--- a/README.md\n+++ /dev/null\n"),
        "{whole}"
    );

    // The whole-run diff, applied to the folder as it was, gives the folder as it is.
    let patched = tempfile::tempdir().unwrap();
    copy_tree(original.path(), patched.path());
    std::fs::write(patched.path().join("run.diff"), &whole).unwrap();
    let applied = Command::new("patch")
        .args(["-p1", "-s", "-E", "-i", "run.diff"])
        .current_dir(patched.path())
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", both(&applied));
    std::fs::remove_file(patched.path().join("run.diff")).unwrap();
    for file in ["notes/plan.md", "src/lib.rs"] {
        assert_eq!(
            std::fs::read_to_string(patched.path().join(file)).ok(),
            project.read(file),
            "{file}"
        );
    }
    assert!(!patched.path().join("README.md").exists());

    // Steps are the model's turns, as progress and `runs show` number them.
    let step1 = diff(&project, "r1", &["--step", "1"]);
    assert!(step1.contains("+2. test"), "{step1}");
    assert!(!step1.contains("3. ship"), "{step1}");
    let step2 = diff(&project, "r1", &["--step", "2"]);
    assert!(step2.contains(" 2. test\n+3. ship"), "{step2}");
    let shown = text(&project.cordon(&["runs", "show", "r1"]).stdout);
    assert!(shown.contains("step 2 (commit 3): running"), "{shown}");
    let empty = project.cordon(&["runs", "diff", "r1", "--step", "3"]);
    assert!(
        empty.status.success() && empty.stdout.is_empty(),
        "{}",
        both(&empty)
    );
    assert!(
        text(&empty.stderr)
            .contains("step 3 of run r1 changed no files; its changes are in step(s) 1, 2"),
        "an empty diff says where the changes are: {}",
        both(&empty)
    );
    let none = project.cordon(&["runs", "diff", "r1", "--step", "9"]);
    assert!(!none.status.success());
    assert!(text(&none.stderr).contains("no step 9"), "{}", both(&none));
}

#[test]
fn a_direct_run_writes_the_folder_and_stages_nothing() {
    let project = project();
    project.write("agent.toml", AGENT);
    project.write("script.toml", EDIT_SCRIPT);
    let output = project.run_scripted("r2", &["--direct"]);
    assert!(output.status.success(), "{}", both(&output));
    assert!(
        project
            .read("src/lib.rs")
            .unwrap()
            .contains("a.wrapping_add(b)")
    );
    assert_eq!(diff(&project, "r2", &[]), "");
}

#[test]
fn an_approval_wait_holds_the_staged_changes_until_the_run_goes_on() {
    let project = project();
    project.write(
        "agent.toml",
        "name = \"coder\"\nsandbox = \"dir\"\n[permissions]\ndefault = \"allow\"\nask = [\"bash\"]\n",
    );
    project.write(
        "script.toml",
        r#"
[[turn]]
[[turn.call]]
tool = "write"
args = { path = "held.txt", content = "staged\n" }
[[turn.call]]
tool = "bash"
args = { command = "cat held.txt" }

[[turn]]
text = "Done."
"#,
    );
    let output = project.run_scripted("r3", &[]);
    assert_eq!(output.status.code(), Some(3), "{}", both(&output));
    assert_eq!(
        project.read("held.txt"),
        None,
        "the wait holds the staged write"
    );
    assert!(
        diff(&project, "r3", &[]).contains("+staged"),
        "the diff shows it"
    );

    let output = project.cordon(&["runs", "resume", "r3", "--approve", "call-1-2"]);
    assert!(output.status.success(), "{}", both(&output));
    assert_eq!(project.read("held.txt").as_deref(), Some("staged\n"));
    let shown = project.show("r3");
    let bash = &shown["commits"][2]["tools"][1];
    assert_eq!(bash["result"]["output"]["stdout"], "staged\n", "{bash}");
}

#[test]
fn the_run_store_is_out_of_the_agents_reach() {
    let project = project();
    project.write("agent.toml", AGENT);
    project.write(
        "script.toml",
        r#"
[[turn]]
[[turn.call]]
tool = "write"
args = { path = ".cordon/cordon.db", content = "gone" }

[[turn]]
text = "Done."
"#,
    );
    let output = project.run_scripted("r4", &[]);
    assert!(output.status.success(), "{}", both(&output));
    let shown = project.show("r4");
    let result = &shown["commits"][1]["tools"][0]["result"];
    assert_eq!(result["error"]["kind"], "denied", "{result}");
}

#[cfg(unix)]
#[test]
fn a_process_killed_between_staging_and_commit_leaves_the_folder_untouched() {
    let project = project();
    project.write("agent.toml", AGENT);
    project.write(
        "script.toml",
        r#"
[[turn]]
[[turn.call]]
tool = "write"
args = { path = "src/lib.rs", content = "overwritten\n" }
[[turn.call]]
tool = "hostile.sleep"
args = { ms = 100000 }

[[turn]]
text = "after"
"#,
    );
    let before = project.read("src/lib.rs");
    let mut child = project.spawn_until_calls_start("r5");
    // The write runs beside the sleep and stages within milliseconds.
    std::thread::sleep(Duration::from_secs(1));
    child.kill().unwrap();
    child.wait().unwrap();

    assert_eq!(
        project.read("src/lib.rs"),
        before,
        "the staged write never reached the folder"
    );
    assert_eq!(diff(&project, "r5", &[]), "", "nothing was committed");

    // The sleep may have happened, so the resumed step waits for a decision
    // before anything of it runs again; the folder is still untouched.
    let output = project.cordon(&["runs", "resume", "r5"]);
    assert_eq!(output.status.code(), Some(3), "{}", both(&output));
    assert_eq!(project.read("src/lib.rs"), before);
    let output = project.cordon(&["runs", "resume", "r5", "--deny", "call-1-2"]);
    assert!(output.status.success(), "{}", both(&output));
    assert_eq!(project.read("src/lib.rs").as_deref(), Some("overwritten\n"));
}

#[test]
fn two_calls_writing_one_path_fail_the_step_naming_both_and_the_folder_stays() {
    let project = project();
    project.write("agent.toml", AGENT);
    project.write(
        "script.toml",
        r#"
[[turn]]
[[turn.call]]
tool = "write"
args = { path = "README.md", content = "one\n" }
[[turn.call]]
tool = "write"
args = { path = "notes.md", content = "beside\n" }
[[turn.call]]
tool = "write"
args = { path = "README.md", content = "two\n" }

[[turn]]
text = "Done."
"#,
    );
    let output = project.run_scripted("r1", &[]);
    assert_eq!(output.status.code(), Some(2), "{}", both(&output));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("file conflict on `README.md`")
            && stderr.contains("call-1-1 (write)")
            && stderr.contains("call-1-3 (write)")
            && !stderr.contains("call-1-2 (write)"),
        "{stderr}"
    );
    assert_eq!(project.read("README.md").as_deref(), Some("# Project\n"));
    assert_eq!(
        project.read("notes.md"),
        None,
        "nothing of the step commits"
    );
}
