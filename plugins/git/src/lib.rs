//! Read-only `git` for sandbox backends' shells, by gitoxide: `status`,
//! `diff`, `log`, `show`, `ls-files`, `blame` and `rev-parse` over the
//! repository the command's working directory is in. The bundle has no
//! way to change a repository: every subcommand only reads, and one that
//! would write is refused by name. The shell hands `git` to the host, which
//! runs a fresh instance of this bundle over the command's view of the
//! workspace; the exit status comes back whole through Cordon's own
//! `interpreter` interface.

wit_bindgen::generate!({
    path: "../../wit",
    world: "interpreter-plugin",
});

mod blame;
mod diff;
mod failure;
mod files;
mod history;
mod patch;
mod revisions;
mod status;

use std::io::{self, Write};

use exports::cordon::plugin::interpreter::Guest;
use failure::Failure;

/// The subcommands this bundle has.
const SUBCOMMANDS: &str = "status, diff, log, show, ls-files, blame, rev-parse";

/// The bundle.
struct Git;

impl Guest for Git {
    fn run(args: Vec<String>, cwd: String, env: Vec<(String, String)>) -> i32 {
        if let Err(error) = std::env::set_current_dir(&cwd) {
            eprintln!("fatal: cannot change to '{cwd}': {error}");
            return 128;
        }
        for (variable, value) in env {
            // SAFETY: one thread runs in this instance, and nothing else
            // reads the environment while it changes.
            unsafe { std::env::set_var(variable, value) };
        }
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        let outcome = run(&args, &mut out);
        let flushed = out.flush();
        let code = match outcome {
            Ok(code) => code,
            Err(failure) => failure.report(),
        };
        if let Err(error) = flushed {
            eprintln!("fatal: cannot write output: {error}");
            return 128;
        }
        let _ = io::stderr().flush();
        code
    }
}

export!(Git);

fn run(args: &[String], out: &mut dyn Write) -> Result<i32, Failure> {
    let mut args = args;
    // Global options that read nothing: the pager is never used, and `-C`
    // moves to another folder of the workspace first.
    loop {
        match args.first().map(String::as_str) {
            Some("--no-pager" | "-P" | "--no-optional-locks") => args = &args[1..],
            Some("-C") => {
                let folder = args
                    .get(1)
                    .ok_or_else(|| Failure::usage("-C needs a folder"))?;
                std::env::set_current_dir(folder).map_err(|error| {
                    Failure::fatal(format!("cannot change to '{folder}': {error}"))
                })?;
                args = &args[2..];
            }
            _ => break,
        }
    }
    let Some((subcommand, rest)) = args.split_first() else {
        return Err(Failure::usage(format!(
            "git SUBCOMMAND [ARGS]; this git reads: {SUBCOMMANDS}"
        )));
    };
    let open = || {
        gix::discover(".").map_err(|_| {
            Failure::fatal("not a git repository (or any of the parent directories): .git")
        })
    };
    match subcommand.as_str() {
        "status" => status::run(&open()?, rest, out),
        "diff" => diff::run(&open()?, rest, out),
        "log" => history::log(&open()?, rest, out),
        "show" => history::show(&open()?, rest, out),
        "ls-files" => files::run(&open()?, rest, out),
        "blame" => blame::run(&open()?, rest, out),
        "rev-parse" => revisions::run(&open()?, rest, out),
        "--version" | "version" => {
            writeln!(out, "git version 2 (read-only, gitoxide)")?;
            Ok(0)
        }
        other => Err(Failure::Refused(format!(
            "'{other}' is not a git command this sandbox has: git here only reads \
             the repository ({SUBCOMMANDS})"
        ))),
    }
}
