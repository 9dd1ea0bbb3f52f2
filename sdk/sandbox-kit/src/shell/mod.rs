//! The command language: a small shell that runs entirely in this process
//! over the workspace file system. Nothing runs on the host.
//!
//! Syntax: `;` and line breaks separate commands, `&&` and `||` chain them
//! (left to right, as in bash), `|` pipes stdout into the next command's
//! stdin, `!` negates a pipeline. Redirections: `<`, `>`, `>>`, `2>`, `2>>`,
//! `&>`, `&>>`, `2>&1`, `>&2`; `/dev/null` is the one path outside the
//! workspace they accept. Single quotes are literal; double quotes expand
//! `$VAR`, `${VAR}` and `$?` and take backslash escapes of `"`, `\`, `$` and
//! `` ` ``; a backslash outside quotes escapes any character; `#` starts a
//! comment. Unquoted `*`, `?` and `[...]` glob against the workspace.
//! `NAME=value` alone sets a variable; before a command, it sets it for that
//! command only. Background jobs, subshells, command
//! substitution, here-documents, functions, conditionals and loops are refused
//! with exit status 2, as are syntax errors.
//!
//! Every command of a line sees the whole stdin given to the line. The
//! deadline is checked before each command and inside long loops; past it the
//! line stops with exit status 124.
//!
//! Scripts run too, never on the host: `sh FILE`, `bash FILE` and `sh -c
//! LINE` in this language (with `$0`, `$1`..., `$#` and `$@`), and a script
//! named as a command (`./report.py`, `scripts/run.sh`) by its first line or
//! its extension. A script of another language (`python3 x.py`) goes to the
//! sandboxed interpreter for it; a language without one stops the line with
//! an error that names it. A script in a skill's folder sees the workspace
//! read-only.

mod args;
mod commands;
mod context;
mod expand;
mod interp;
mod io;
mod lexer;
mod parser;
mod scripts;
mod syntax;

pub use io::{OUTPUT_LIMIT, PIPE_LIMIT};

use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::interpreters::Interpreters;
use context::{Ctx, Interrupt};
use io::Buffer;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What a command line did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    /// Exit status of the last pipeline run; 2 for a syntax error or an
    /// unsupported construct, 124 when the time limit passed.
    pub exit_code: i32,
    /// Standard output, at most [`OUTPUT_LIMIT`] bytes.
    pub stdout: Vec<u8>,
    /// Standard error, at most [`OUTPUT_LIMIT`] bytes.
    pub stderr: Vec<u8>,
    /// Whether stdout was cut at the limit.
    pub stdout_truncated: bool,
    /// Whether stderr was cut at the limit.
    pub stderr_truncated: bool,
}

/// Runs `line` in the directory `cwd` (a normalized workspace path) with the
/// variables `env`, feeding `stdin`, stopping after `timeout_ms` milliseconds
/// (0 for no limit of its own), handing scripts of other languages to
/// `interpreters`. Fails only when a script's language has no interpreter:
/// then nothing else of the line runs, and the error says which language.
pub fn run(
    fs: &dyn FileSystem,
    interpreters: &dyn Interpreters,
    line: &str,
    cwd: &str,
    env: &[(String, String)],
    stdin: &[u8],
    timeout_ms: u32,
) -> Result<Output> {
    let mut out = Buffer::new(OUTPUT_LIMIT);
    let mut err = Buffer::new(OUTPUT_LIMIT);
    let exit_code = match parser::parse(line) {
        Err(message) => {
            err.push(format!("sh: {message}\n").as_bytes());
            2
        }
        Ok(script) => {
            let deadline = (timeout_ms > 0)
                .then(|| Instant::now() + Duration::from_millis(u64::from(timeout_ms)));
            let vars: BTreeMap<String, String> = env.iter().cloned().collect();
            let mut ctx = Ctx::new(fs, interpreters, cwd.to_owned(), vars, deadline);
            match interp::run(&mut ctx, &script, stdin, &mut out, &mut err) {
                Ok(status) => status,
                Err(Interrupt::TimedOut) => {
                    err.push(interp::timed_out(timeout_ms).as_bytes());
                    124
                }
                Err(Interrupt::NoInterpreter(message)) => return Err(Error::Failed(message)),
            }
        }
    };
    Ok(Output {
        exit_code,
        stdout_truncated: out.truncated(),
        stderr_truncated: err.truncated(),
        stdout: out.into_bytes(),
        stderr: err.into_bytes(),
    })
}
