//! The state a command line runs in: the file system, the interpreters it
//! may hand scripts to, working directory, variables, functions, options,
//! last exit status and the limits, plus the helpers commands share for
//! paths, inputs and error messages.

use super::io::Io;
use super::limits::Budget;
use super::vars::Vars;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::interpreters::Interpreters;
use crate::path;
use brush_parser::ast::FunctionBody;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Why running stopped before the end of what encloses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Interrupt {
    /// The time limit passed.
    TimedOut,
    /// A limit on commands or nesting was reached, with what was exceeded.
    Limit(super::limits::Limit, String),
    /// A script's language has no sandboxed interpreter: the line fails,
    /// saying which.
    NoInterpreter(String),
    /// `exit N`, or an error that ends a shell (`set -e`, `set -u`).
    Exit(i32),
    /// `return N` from a function or a sourced script.
    Return(i32),
    /// `break N`.
    Break(u32),
    /// `continue N`.
    Continue(u32),
    /// A command wrote to a full pipe: its pipeline stage ends with 141.
    BrokenPipe,
}

/// A command's exit status, or why more than the command stopped.
pub(super) type Status = std::result::Result<i32, Interrupt>;

/// The options `set` changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Options {
    /// `-e`: a failing command ends the shell.
    pub errexit: bool,
    /// `-u`: expanding an unset variable is an error.
    pub nounset: bool,
    /// `-o pipefail`: a pipeline fails if any of its commands does.
    pub pipefail: bool,
    /// `-f`: no pathname expansion.
    pub noglob: bool,
    /// `-x`: each command is printed on stderr before it runs.
    pub xtrace: bool,
}

/// The shell's state while a command line runs.
pub(super) struct Ctx<'f> {
    /// The workspace.
    pub fs: &'f dyn FileSystem,
    /// Where scripts of other languages run.
    pub interpreters: &'f dyn Interpreters,
    /// The working directory, a workspace path.
    pub cwd: String,
    /// The working directory before the last `cd`, for `cd -`.
    pub old_cwd: Option<String>,
    /// Shell variables and positional parameters.
    pub vars: Vars,
    /// Functions by name.
    pub functions: BTreeMap<String, Rc<FunctionBody>>,
    /// The options `set` changes.
    pub options: Options,
    /// The exit status of the last pipeline, `$?`.
    pub status: i32,
    /// How many conditions (`if`, `while`, `&&`...) enclose the running
    /// command: `set -e` ignores failures inside them.
    pub conditions: u32,
    /// How many functions are running.
    pub functions_running: u32,
    /// What the `EXIT` trap runs when the shell ends.
    pub exit_trap: Option<String>,
    /// The limits this line, and every script and substitution it runs,
    /// share.
    pub budget: Rc<Budget>,
    /// How many scripts enclose this line.
    pub scripts: u32,
    /// How many command substitutions have run, so a command of
    /// assignments alone takes the status of its last one.
    pub substitutions: u64,
    /// The state of `$RANDOM`.
    seed: u32,
}

impl<'f> Ctx<'f> {
    /// A shell in `cwd` with `vars`, within `budget`.
    pub(super) fn new(
        fs: &'f dyn FileSystem,
        interpreters: &'f dyn Interpreters,
        cwd: String,
        vars: Vars,
        budget: Rc<Budget>,
    ) -> Self {
        Self {
            fs,
            interpreters,
            cwd,
            old_cwd: None,
            vars,
            functions: BTreeMap::new(),
            options: Options::default(),
            status: 0,
            conditions: 0,
            functions_running: 0,
            exit_trap: None,
            budget,
            scripts: 0,
            substitutions: 0,
            seed: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |elapsed| elapsed.subsec_nanos() | 1),
        }
    }

    /// A new shell for a script run from this one: the same limits and
    /// working directory, the variables `vars`, the file system `fs`.
    pub(super) fn nested<'g>(&self, fs: &'g dyn FileSystem, vars: Vars) -> Ctx<'g>
    where
        'f: 'g,
    {
        let mut nested = Ctx::new(
            fs,
            self.interpreters,
            self.cwd.clone(),
            vars,
            self.budget.clone(),
        );
        nested.scripts = self.scripts + 1;
        nested
    }

    /// What a subshell changes and its parent keeps: saved before a subshell
    /// runs and put back after.
    pub(super) fn save(&self) -> Saved {
        Saved {
            cwd: self.cwd.clone(),
            vars: self.vars.clone(),
            functions: self.functions.clone(),
            options: self.options,
            exit_trap: self.exit_trap.clone(),
        }
    }

    /// Puts back what [`Ctx::save`] saved.
    pub(super) fn restore(&mut self, saved: Saved) {
        self.cwd = saved.cwd;
        self.vars = saved.vars;
        self.functions = saved.functions;
        self.options = saved.options;
        self.exit_trap = saved.exit_trap;
    }

    /// The next value of `$RANDOM`, from 0 to 32767.
    pub(super) fn random(&mut self) -> u32 {
        // xorshift32: `$RANDOM` promises no more than bash's does.
        let mut x = self.seed;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.seed = x;
        x % 32768
    }

    /// Milliseconds left before the deadline; `default` without one.
    pub(super) fn remaining_ms(&self, default: u32) -> u32 {
        self.budget.remaining_ms(default)
    }

    /// `arg`, a path as a command got it, as a workspace path.
    pub(super) fn resolve(&self, arg: &str) -> Result<String> {
        path::resolve(&self.cwd, arg)
    }

    /// Fails once the deadline has passed.
    pub(super) fn check(&mut self) -> std::result::Result<(), Interrupt> {
        self.budget.check()
    }

    /// [`Ctx::check`], but looking at the clock only every so many calls, for
    /// loops over lines and files.
    pub(super) fn tick(&mut self) -> std::result::Result<(), Interrupt> {
        self.budget.tick()
    }

    /// The contents of the input `arg` (a file, or `-` for stdin), or `None`
    /// after reporting why it cannot be read.
    pub(super) fn input(&mut self, io: &mut Io, command: &str, arg: &str) -> Option<Vec<u8>> {
        if arg == "-" {
            return Some(io.stdin());
        }
        let read = self
            .resolve(arg)
            .and_then(|path| match self.fs.meta(&path)? {
                Some(meta) if meta.is_dir() => Err(Error::Invalid("Is a directory".into())),
                Some(_) => self.fs.read(&path),
                None => Err(Error::not_found(&path)),
            });
        match read {
            Ok(data) => Some(data),
            Err(error) => {
                report(io, command, arg, &error);
                None
            }
        }
    }
}

/// What [`Ctx::save`] keeps.
pub(super) struct Saved {
    cwd: String,
    vars: Vars,
    functions: BTreeMap<String, Rc<FunctionBody>>,
    options: Options,
    exit_trap: Option<String>,
}

/// Reports `error` about `arg` on stderr the way coreutils does, for example
/// `cat: missing.txt: No such file or directory`.
pub(super) fn report(io: &mut Io, command: &str, arg: &str, error: &Error) {
    match error {
        Error::NotFound(_) => io.errln(format_args!("{command}: {arg}: No such file or directory")),
        Error::Denied(message) | Error::Invalid(message) | Error::Failed(message)
            if message.starts_with(arg) =>
        {
            io.errln(format_args!("{command}: {message}"));
        }
        other => io.errln(format_args!("{command}: {arg}: {}", other.message())),
    }
}
