//! Interpreters the shell hands commands of other languages to: in a
//! component, the host's, each a sandboxed component of its own that sees the
//! workspace read-only ([`Interpreters`]); natively, none ([`NoInterpreters`]).
//! Nothing ever runs on the host. A script's language is known by the
//! command that names it (`python3 x.py`), by its first line (`#!/usr/bin/env
//! python3`) or by its extension (`.py`); a language with no interpreter
//! fails the command line, saying so, instead of falling back to anything.

/// One command for an interpreter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The command's name, such as `python3`.
    pub command: String,
    /// What follows the name.
    pub args: Vec<String>,
    /// The working directory: a workspace path or a skill's folder.
    pub cwd: String,
    /// The variables the command runs with.
    pub env: Vec<(String, String)>,
    /// Its standard input.
    pub stdin: Vec<u8>,
    /// Its time limit in milliseconds.
    pub timeout_ms: u32,
}

/// What an interpreter did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ran {
    /// Exit status.
    pub exit_code: i32,
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: Vec<u8>,
    /// Whether stdout was cut at the interpreter's limit.
    pub stdout_truncated: bool,
    /// Whether stderr was cut at the interpreter's limit.
    pub stderr_truncated: bool,
}

/// Why no interpreter ran a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRun {
    /// None serves the command.
    Unknown,
    /// One does, and could not be run.
    Failed(String),
}

/// Runs commands in interpreters.
pub trait Interpreters {
    /// Run `invocation` in the interpreter serving its command.
    fn run(&self, invocation: Invocation) -> Result<Ran, NotRun>;
}

/// No interpreter at all.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoInterpreters;

impl Interpreters for NoInterpreters {
    fn run(&self, _invocation: Invocation) -> Result<Ran, NotRun> {
        Err(NotRun::Unknown)
    }
}

/// Commands that name a language's interpreter, with the extension of its
/// scripts: what a command line may ask for that only an interpreter could
/// run.
const LANGUAGES: &[(&str, &str)] = &[
    ("python", "py"),
    ("python3", "py"),
    ("node", "js"),
    ("nodejs", "js"),
    ("deno", "ts"),
    ("bun", "js"),
    ("ruby", "rb"),
    ("perl", "pl"),
    ("php", "php"),
    ("lua", "lua"),
    ("rscript", "r"),
    ("Rscript", "r"),
];

/// The command that runs scripts with extension `ext`.
const BY_EXTENSION: &[(&str, &str)] = &[
    ("py", "python3"),
    ("js", "node"),
    ("mjs", "node"),
    ("cjs", "node"),
    ("ts", "deno"),
    ("rb", "ruby"),
    ("pl", "perl"),
    ("php", "php"),
    ("lua", "lua"),
    ("r", "Rscript"),
];

/// The extension of the scripts of the language `command` names (`python3`
/// or `python3.14`: `py`), if it names one.
pub fn language_of(command: &str) -> Option<&'static str> {
    if let Some(rest) = command.strip_prefix("python")
        && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
    {
        return Some("py");
    }
    LANGUAGES
        .iter()
        .find(|(name, _)| *name == command)
        .map(|(_, ext)| *ext)
}

/// How a script file is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// In the command language itself.
    Shell,
    /// By the interpreter command named.
    Interpreter(String),
    /// By nothing there is: the script's extension (or its first line's
    /// program) names a language without an interpreter.
    Missing(String),
}

/// How the script at `path`, whose contents begin with `head`, is run: by
/// the program its first line names (`#!/usr/bin/env python3`,
/// `#!/bin/sh`), else by its extension.
pub fn runner_of(path: &str, head: &[u8]) -> Runner {
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = String::from_utf8_lossy(line.split(|&b| b == b'\n').next().unwrap_or_default());
        let mut words = line.split_whitespace();
        let program = words.next().unwrap_or_default();
        let program = match program.rsplit('/').next().unwrap_or(program) {
            "env" => words
                .find(|word| !word.starts_with('-'))
                .unwrap_or_default(),
            name => name,
        };
        return match program {
            "sh" | "bash" | "dash" | "ash" => Runner::Shell,
            program => match language_of(program) {
                Some(_) => Runner::Interpreter(program.to_owned()),
                None => Runner::Missing(format!("`{program}`")),
            },
        };
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((_, ext)) = name.rsplit_once('.') else {
        return Runner::Shell;
    };
    if ext == "sh" || ext == "bash" {
        return Runner::Shell;
    }
    match BY_EXTENSION.iter().find(|(known, _)| *known == ext) {
        Some((_, command)) => Runner::Interpreter((*command).to_owned()),
        None => Runner::Missing(format!(".{ext}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scripts_language_comes_from_its_first_line_then_its_extension() {
        assert_eq!(
            runner_of("x.py", b"print(1)"),
            Runner::Interpreter("python3".into())
        );
        assert_eq!(
            runner_of("x", b"#!/usr/bin/env python3\nprint(1)"),
            Runner::Interpreter("python3".into())
        );
        assert_eq!(runner_of("x.txt", b"#!/bin/sh\necho"), Runner::Shell);
        assert_eq!(runner_of("run.sh", b"echo"), Runner::Shell);
        assert_eq!(runner_of("Makefile", b"all:"), Runner::Shell);
        assert_eq!(
            runner_of("x.rb", b"puts 1"),
            Runner::Interpreter("ruby".into())
        );
        assert_eq!(runner_of("x.xyz", b""), Runner::Missing(".xyz".into()));
        assert_eq!(
            runner_of("x", b"#!/usr/bin/awk -f"),
            Runner::Missing("`awk`".into())
        );
        assert_eq!(language_of("python3.14"), Some("py"));
        assert_eq!(language_of("pythonista"), None);
        assert_eq!(language_of("ls"), None);
    }
}
