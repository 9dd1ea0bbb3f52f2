//! The state a command line runs in: the file system, the interpreters it
//! may hand scripts to, working directory, variables, last exit status and
//! the deadline, plus the helpers commands share for paths, inputs and error
//! messages.

use super::io::Io;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::interpreters::Interpreters;
use crate::path;
use std::collections::BTreeMap;
use std::time::Instant;

/// Why a command line stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Interrupt {
    /// The time limit passed.
    TimedOut,
    /// A script's language has no sandboxed interpreter: the line fails,
    /// saying which.
    NoInterpreter(String),
}

/// A command's exit status, or why the whole line stopped.
pub(super) type Status = std::result::Result<i32, Interrupt>;

/// How many [`Ctx::tick`]s pass between looks at the clock.
const TICKS_PER_CHECK: u32 = 256;

/// The shell's state while a command line runs.
pub(super) struct Ctx<'f> {
    /// The workspace.
    pub fs: &'f dyn FileSystem,
    /// Where scripts of other languages run.
    pub interpreters: &'f dyn Interpreters,
    /// The working directory, a workspace path.
    pub cwd: String,
    /// Shell variables.
    pub vars: BTreeMap<String, String>,
    /// The exit status of the last pipeline, `$?`.
    pub status: i32,
    /// How many scripts enclose this line.
    pub depth: u32,
    deadline: Option<Instant>,
    ticks: u32,
}

impl<'f> Ctx<'f> {
    /// A shell in `cwd` with `vars`, stopping at `deadline` if there is one.
    pub(super) fn new(
        fs: &'f dyn FileSystem,
        interpreters: &'f dyn Interpreters,
        cwd: String,
        vars: BTreeMap<String, String>,
        deadline: Option<Instant>,
    ) -> Self {
        Self {
            fs,
            interpreters,
            cwd,
            vars,
            status: 0,
            depth: 0,
            deadline,
            ticks: 0,
        }
    }

    /// A shell like this one, for a script run from it: the same deadline
    /// and working directory, the variables `vars`, the file system `fs`.
    pub(super) fn nested<'g>(
        &self,
        fs: &'g dyn FileSystem,
        vars: BTreeMap<String, String>,
    ) -> Ctx<'g>
    where
        'f: 'g,
    {
        Ctx {
            fs,
            interpreters: self.interpreters,
            cwd: self.cwd.clone(),
            vars,
            status: 0,
            depth: self.depth + 1,
            deadline: self.deadline,
            ticks: 0,
        }
    }

    /// Milliseconds left before the deadline; `default` without one.
    pub(super) fn remaining_ms(&self, default: u32) -> u32 {
        match self.deadline {
            None => default,
            Some(deadline) => {
                let left = deadline
                    .saturating_duration_since(Instant::now())
                    .as_millis();
                u32::try_from(left).unwrap_or(u32::MAX).max(1)
            }
        }
    }

    /// `arg`, a path as a command got it, as a workspace path.
    pub(super) fn resolve(&self, arg: &str) -> Result<String> {
        path::resolve(&self.cwd, arg)
    }

    /// Fails once the deadline has passed.
    pub(super) fn check(&mut self) -> std::result::Result<(), Interrupt> {
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => Err(Interrupt::TimedOut),
            _ => Ok(()),
        }
    }

    /// [`Ctx::check`], but looking at the clock only every so many calls, for
    /// loops over lines and files.
    pub(super) fn tick(&mut self) -> std::result::Result<(), Interrupt> {
        self.ticks += 1;
        if self.ticks.is_multiple_of(TICKS_PER_CHECK) {
            self.check()
        } else {
            Ok(())
        }
    }

    /// The contents of the input `arg` (a file, or `-` for stdin), or `None`
    /// after reporting why it cannot be read.
    pub(super) fn input(&mut self, io: &mut Io, command: &str, arg: &str) -> Option<Vec<u8>> {
        if arg == "-" {
            return Some(io.stdin.to_vec());
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
