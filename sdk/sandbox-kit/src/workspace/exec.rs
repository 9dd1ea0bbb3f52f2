//! `exec`: a command line in the command language ([`crate::shell`]).

use super::files::expect_dir;
use crate::error::Result;
use crate::fs::FileSystem;
use crate::interpreters::Interpreters;
use crate::path;
use crate::shell;

/// A command to run, as the WIT `command` record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    /// The command line.
    pub line: String,
    /// Working directory relative to the workspace root.
    pub cwd: String,
    /// Variables the line starts with.
    pub env: Vec<(String, String)>,
    /// Bytes fed to standard input.
    pub stdin: Vec<u8>,
    /// Time limit in milliseconds; 0 for none of the backend's own.
    pub timeout_ms: u32,
}

/// What a command did, as the WIT `command-result` record.
pub type CommandResult = shell::Output;

/// Runs `command`, handing scripts of other languages to `interpreters`.
/// Only a working directory that is not a directory of the workspace, and a
/// script whose language has no interpreter, are errors; everything else is
/// in the result's exit status.
pub fn exec(
    fs: &dyn FileSystem,
    interpreters: &dyn Interpreters,
    command: &Command,
) -> Result<CommandResult> {
    let cwd = path::normalize(&command.cwd)?;
    expect_dir(fs, &cwd)?;
    shell::run(
        fs,
        interpreters,
        &command.line,
        &cwd,
        &command.env,
        &command.stdin,
        command.timeout_ms,
    )
}
