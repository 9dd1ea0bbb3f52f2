//! Scripts in the command language and commands for interpreters: `sh
//! FILE`, `sh -c`, scripts named as commands, the interpreter a script's
//! first line or extension names, and the refusal of a language without one.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::common::{memory_fs, text};
use cordon_sandbox_kit::shell::{self, Output};
use cordon_sandbox_kit::{
    Error, FileSystem, Interpreters, Invocation, Mounted, NoInterpreters, NotRun, Ran,
};

/// A Python that answers every run with what it was asked.
#[derive(Default)]
struct FakePython {
    seen: RefCell<Vec<Invocation>>,
}

impl Interpreters for FakePython {
    fn run(&self, invocation: Invocation) -> Result<Ran, NotRun> {
        if invocation.command != "python3" && invocation.command != "python" {
            return Err(NotRun::Unknown);
        }
        let answer = format!(
            "python ran {} in {:?} with stdin {:?}\n",
            invocation.args.join(" "),
            invocation.cwd,
            String::from_utf8_lossy(&invocation.stdin)
        );
        self.seen.borrow_mut().push(invocation);
        Ok(Ran {
            exit_code: 3,
            stdout: answer.into_bytes(),
            stderr: b"warned\n".to_vec(),
            ..Ran::default()
        })
    }
}

fn sh_with(
    fs: &dyn FileSystem,
    interpreters: &dyn Interpreters,
    line: &str,
) -> Result<Output, Error> {
    shell::run(fs, interpreters, line, "", &[], b"", 0)
}

#[test]
fn shell_scripts_run_in_the_language_with_their_arguments() {
    let fs = memory_fs(&[
        ("run.sh", "echo \"$0 has $# args: $@\"; echo first=$1\n"),
        (
            "plain",
            "#!/bin/sh\necho from a script without an extension\n",
        ),
    ]);
    let (code, out, _) = text(sh_with(&fs, &NoInterpreters, "sh run.sh a b").unwrap());
    assert_eq!(
        (code, out.as_str()),
        (0, "run.sh has 2 args: a b\nfirst=a\n")
    );
    let (_, out, _) = text(sh_with(&fs, &NoInterpreters, "./run.sh x").unwrap());
    assert_eq!(out, "./run.sh has 1 args: x\nfirst=x\n");
    let (_, out, _) =
        text(sh_with(&fs, &NoInterpreters, "sh -c 'echo $1-$2' zero one two").unwrap());
    assert_eq!(out, "one-two\n");
    let (_, out, _) = text(sh_with(&fs, &NoInterpreters, "./plain").unwrap());
    assert_eq!(out, "from a script without an extension\n");
    let (code, out, _) =
        text(shell::run(&fs, &NoInterpreters, "bash", "", &[], b"echo piped", 0).unwrap());
    assert_eq!((code, out.as_str()), (0, "piped\n"));
    let (code, _, err) = text(sh_with(&fs, &NoInterpreters, "sh missing.sh").unwrap());
    assert_eq!(code, 127, "{err}");
}

#[test]
fn a_script_that_runs_itself_stops_at_a_depth() {
    let fs = memory_fs(&[("loop.sh", "sh loop.sh\n")]);
    let (code, _, err) = text(sh_with(&fs, &NoInterpreters, "sh loop.sh").unwrap());
    assert_eq!(code, 137);
    assert!(
        err.contains("limit exceeded: functions, subshells and scripts nest more than 200 deep"),
        "{err}"
    );
}

#[test]
fn python_goes_to_the_interpreter_with_its_arguments_directory_and_input() {
    let fs = memory_fs(&[
        ("scripts/report.py", "print('hi')\n"),
        ("tool", "#!/usr/bin/env python3\n"),
    ]);
    fs.create_dir("data").unwrap();
    let python = FakePython::default();
    let output = shell::run(
        &fs,
        &python,
        "python3 ../scripts/report.py in.csv",
        "data",
        &[("K".into(), "v".into())],
        b"rows",
        0,
    )
    .unwrap();
    let (code, out, err) = text(output);
    assert_eq!(code, 3);
    assert_eq!(
        out,
        "python ran ../scripts/report.py in.csv in \"data\" with stdin \"rows\"\n"
    );
    assert_eq!(err, "warned\n");
    let seen = python.seen.borrow();
    assert_eq!(seen[0].env, [("K".to_owned(), "v".to_owned())]);
    assert!(seen[0].timeout_ms > 0);
    drop(seen);
    let (_, out, _) = text(sh_with(&fs, &python, "./scripts/report.py x; ./tool").unwrap());
    assert_eq!(
        out,
        "python ran ./scripts/report.py x in \"\" with stdin \"\"\npython ran ./tool in \"\" with stdin \"\"\n"
    );
}

#[test]
fn a_language_without_an_interpreter_fails_the_line_and_nothing_else_runs() {
    let fs = memory_fs(&[("x.rb", "puts 1"), ("y.xyz", "?")]);
    for line in [
        "echo first > out.txt; ./x.rb",
        "ruby x.rb",
        "./y.xyz",
        "python3 x.py",
    ] {
        let error = sh_with(&fs, &NoInterpreters, line).unwrap_err();
        assert!(
            matches!(&error, Error::Failed(message) if message.starts_with("no sandboxed interpreter for .")),
            "{line}: {error}"
        );
        assert!(
            error.message().contains("nothing runs on the host"),
            "{error}"
        );
    }
    let (code, _, err) = text(sh_with(&fs, &FakePython::default(), "frobnicate").unwrap());
    assert_eq!(
        (code, err.as_str()),
        (127, "frobnicate: command not found\n")
    );
}

#[test]
fn a_skills_script_writes_the_workspace_and_never_its_own_folder() {
    let skill = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(skill.path().join("scripts")).unwrap();
    std::fs::write(
        skill.path().join("scripts/tidy.sh"),
        "cat notes.txt; echo tidied > notes.txt; echo planted > /skills/tidy/planted\n",
    )
    .unwrap();
    let fs = Mounted::with_folders(
        memory_fs(&[
            ("notes.txt", "mine\n"),
            ("mine.sh", "echo changed > notes.txt\n"),
        ]),
        BTreeMap::from([("tidy".to_owned(), skill.path().to_owned())]),
    );
    let (code, out, err) =
        text(sh_with(&fs, &NoInterpreters, "sh /skills/tidy/scripts/tidy.sh").unwrap());
    assert_eq!(out, "mine\n", "it reads the workspace");
    assert_ne!(code, 0);
    assert!(err.contains("read-only"), "{err}");
    assert_eq!(
        fs.read("notes.txt").unwrap(),
        b"tidied\n",
        "it writes the workspace"
    );
    assert!(!skill.path().join("planted").exists());
    let (code, _, _) = text(sh_with(&fs, &NoInterpreters, "sh mine.sh").unwrap());
    assert_eq!(code, 0);
    assert_eq!(fs.read("notes.txt").unwrap(), b"changed\n");
    let (_, out, _) = text(
        sh_with(
            &fs,
            &NoInterpreters,
            "cd /skills/tidy && pwd && ls scripts && cat /skills/tidy/scripts/tidy.sh | wc -l",
        )
        .unwrap(),
    );
    assert_eq!(out, "/skills/tidy\ntidy.sh\n1\n");
}
