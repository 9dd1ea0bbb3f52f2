//! The command language: bash's, run entirely in this process over the
//! workspace file system. Nothing runs on the host.
//!
//! The grammar is bash's, parsed by `brush-parser`: lists, `&&`, `||`, `!`,
//! pipelines, `{ }` and `( )`, `if`, `case`, `for`, `for (( ))`, `while`,
//! `until`, functions with `local`, `$( )` and backquotes, `$(( ))` and
//! `(( ))`, here-documents and here-strings, brace expansion, every
//! parameter expansion, indexed arrays, `[[ ]]`, `set -e`/`-u`/`-x`/`-o
//! pipefail`, `trap ... EXIT`, and redirections of descriptors 0, 1 and 2
//! (`/dev/null`, `/dev/stdin`, `/dev/stdout` and `/dev/stderr` are the
//! paths outside the workspace they accept). What needs processes is
//! refused with a message: process substitution and coprocesses; background
//! jobs (`&`) run in the foreground.
//!
//! Pipelines run their commands one after another through in-memory pipes;
//! a command writing to a full pipe (64 MiB) is stopped with status 141.
//! Limits keep a line from running away: its deadline (status 124), and at
//! most [`MAX_STEPS`] commands and [`MAX_DEPTH`] nested functions,
//! subshells, substitutions and scripts (status 137); the message on stderr
//! says which was reached.
//!
//! Scripts run too, never on the host: `sh FILE`, `bash FILE` and `sh -c
//! LINE` in this language, `source FILE`, and a script named as a command
//! (`./report.py`, `scripts/run.sh`) by its first line or its extension. A
//! script of another language (`python3 x.py`) goes to the sandboxed
//! interpreter for it; a language without one stops the line with an error
//! that names it. A script in a skill's folder changes the workspace as any
//! other does; the folder itself is read-only.

mod args;
mod builtins;
mod commands;
mod context;
mod escapes;
mod exec;
mod expand;
mod io;
mod limits;
mod parse;
mod scripts;
mod vars;
mod xargs;

pub use io::{OUTPUT_LIMIT, PIPE_LIMIT};
pub use limits::{Limit, MAX_DEPTH, MAX_STEPS, Stopped};

use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::interpreters::Interpreters;
use context::{Ctx, Interrupt};
use io::{Buffer, Input, Io};
use limits::Budget;
use std::cell::RefCell;
use std::rc::Rc;
use vars::Vars;

/// What a command line did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    /// Exit status of the last pipeline run; 2 for a syntax error, 124 when
    /// the time limit passed, 137 when a limit on commands or nesting was
    /// reached.
    pub exit_code: i32,
    /// Standard output, at most [`OUTPUT_LIMIT`] bytes.
    pub stdout: Vec<u8>,
    /// Standard error, at most [`OUTPUT_LIMIT`] bytes.
    pub stderr: Vec<u8>,
    /// Whether stdout was cut at the limit.
    pub stdout_truncated: bool,
    /// Whether stderr was cut at the limit.
    pub stderr_truncated: bool,
    /// The limit that stopped the line, if one did.
    pub stopped: Option<Stopped>,
}

/// Exit status of a line stopped by its time limit.
const TIMED_OUT: i32 = 124;
/// Exit status of a line stopped by a limit on commands or nesting, as a
/// process killed by the system would be.
const LIMIT_EXCEEDED: i32 = 137;

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
    let out = Rc::new(RefCell::new(Buffer::new(OUTPUT_LIMIT)));
    let err = Rc::new(RefCell::new(Buffer::new(OUTPUT_LIMIT)));
    let mut stopped = None;
    let exit_code = match parse::program(line) {
        Err(message) => {
            err.borrow_mut().push(format!("sh: {message}\n").as_bytes());
            2
        }
        Ok(program) => {
            let budget = Rc::new(Budget::new(timeout_ms));
            let vars = Vars::new(env.iter().cloned(), "sh");
            let mut ctx = Ctx::new(fs, interpreters, cwd.to_owned(), vars, budget.clone());
            let io = Io {
                stdin: Input::new(stdin.to_vec()),
                stdout: out.clone(),
                stderr: err.clone(),
            };
            match exec::script(&mut ctx, &program, &io) {
                Ok(status) => status,
                Err(Interrupt::TimedOut) => {
                    let detail = budget.timed_out();
                    err.borrow_mut().push(format!("sh: {detail}\n").as_bytes());
                    stopped = Some(Stopped {
                        limit: Limit::Time,
                        detail,
                    });
                    TIMED_OUT
                }
                Err(Interrupt::Limit(limit, detail)) => {
                    err.borrow_mut()
                        .push(format!("sh: limit exceeded: {detail}\n").as_bytes());
                    stopped = Some(Stopped { limit, detail });
                    LIMIT_EXCEEDED
                }
                Err(Interrupt::NoInterpreter(message)) => return Err(Error::Failed(message)),
                Err(Interrupt::Exit(status) | Interrupt::Return(status)) => status,
                Err(Interrupt::Break(_) | Interrupt::Continue(_) | Interrupt::BrokenPipe) => {
                    ctx.status
                }
            }
        }
    };
    let take = |sink: Rc<RefCell<Buffer>>| {
        let buffer = std::mem::take(&mut *sink.borrow_mut());
        (buffer.truncated(), buffer.into_bytes())
    };
    let (stdout_truncated, stdout) = take(out);
    let (stderr_truncated, stderr) = take(err);
    Ok(Output {
        exit_code,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        stopped,
    })
}
