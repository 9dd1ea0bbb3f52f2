//! Scripts, and commands for interpreters: what the shell does with a
//! command that is none of its own. `sh` and `bash` run a script, or a line
//! given with `-c`, in this command language; a path (`./report.py`,
//! `scripts/run.sh`) runs the script there, in this language or in the
//! interpreter its first line or extension names; any other name goes to the
//! host's interpreters. A language with no interpreter stops the whole line
//! with an error naming it: nothing falls back to anything else, and nothing
//! runs on the host. A script in a skill's folder changes the workspace as
//! any other does; the folder itself is read-only.

use super::context::{Ctx, Interrupt, Status, report};
use super::exec;
use super::io::Io;
use super::parse;
use super::vars::Vars;
use crate::interpreters::{Invocation, NotRun, Runner, language_of, runner_of};

/// An interpreter's time limit when the line has none of its own.
const DEFAULT_TIMEOUT_MS: u32 = 60_000;

/// Runs `name`, which is not a command of the language, with `args`.
pub(super) fn run(ctx: &mut Ctx, name: &str, args: &[String], io: &mut Io) -> Status {
    match name {
        "sh" | "bash" => shell(ctx, name, args, io),
        _ if name.contains('/') => script(ctx, name, args, io),
        _ => interpreter(ctx, name, args.to_vec(), io),
    }
}

/// `sh [-c LINE [NAME [ARG...]] | FILE [ARG...]]`: without either, the
/// script on standard input. Options such as `-e` or `-x` are accepted and
/// ignored.
fn shell(ctx: &mut Ctx, name: &str, args: &[String], io: &mut Io) -> Status {
    let mut rest = args;
    let mut line = None;
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "-c" => {
                let Some((text, tail)) = tail.split_first() else {
                    io.errln(format_args!("{name}: -c: option requires an argument"));
                    return Ok(2);
                };
                line = Some(text.clone());
                rest = tail;
                break;
            }
            "--" => {
                rest = tail;
                break;
            }
            option if option.starts_with('-') && option.len() > 1 => rest = tail,
            _ => break,
        }
    }
    if let Some(line) = line {
        let (zero, positional) = match rest.split_first() {
            Some((zero, positional)) => (zero.clone(), positional),
            None => (name.to_owned(), &[][..]),
        };
        return source(ctx, &zero, &line, positional, io);
    }
    match rest.split_first() {
        None => {
            let text = String::from_utf8_lossy(&io.stdin()).into_owned();
            source(ctx, name, &text, &[], io)
        }
        Some((file, positional)) => {
            let Some(text) = read_script(ctx, io, name, file) else {
                return Ok(127);
            };
            source(ctx, file, &text, positional, io)
        }
    }
}

/// The text of the script `file`, or `None` after reporting why not.
fn read_script(ctx: &mut Ctx, io: &mut Io, command: &str, file: &str) -> Option<String> {
    let data = ctx.input(io, command, file)?;
    Some(String::from_utf8_lossy(&data).into_owned())
}

/// Runs the script at the path `shown` names: in this language or in the
/// interpreter its first line or extension names.
fn script(ctx: &mut Ctx, shown: &str, args: &[String], io: &mut Io) -> Status {
    let found = ctx.resolve(shown).and_then(|path| {
        let data = ctx.fs.read(&path)?;
        Ok((path, data))
    });
    let (path, data) = match found {
        Ok(found) => found,
        Err(error) => {
            report(io, "sh", shown, &error);
            return Ok(127);
        }
    };
    match runner_of(&path, &data[..data.len().min(256)]) {
        Runner::Shell => {
            let text = String::from_utf8_lossy(&data).into_owned();
            source(ctx, shown, &text, args, io)
        }
        Runner::Interpreter(command) => {
            let mut all = vec![shown.to_owned()];
            all.extend(args.iter().cloned());
            interpreter(ctx, &command, all, io)
        }
        Runner::Missing(language) => Err(no_interpreter(&language, shown)),
    }
}

/// The error that stops a line asking for a language without an interpreter.
fn no_interpreter(language: &str, what: &str) -> Interrupt {
    Interrupt::NoInterpreter(format!(
        "no sandboxed interpreter for {language}: `{what}` cannot run here, and nothing runs on the host; scripts run in the command language (`sh FILE`) or in an interpreter the host provides"
    ))
}

/// Runs `text` as a script in this language, named `zero`, with the
/// positional parameters `args`: a new shell, sharing the line's limits.
fn source(ctx: &mut Ctx, zero: &str, text: &str, args: &[String], io: &mut Io) -> Status {
    let script = match parse::program(text) {
        Ok(script) => script,
        Err(message) => {
            io.errln(format_args!("{zero}: {message}"));
            return Ok(2);
        }
    };
    let mut vars = Vars::new(ctx.vars.environment(), zero);
    vars.positional = args.to_vec();
    ctx.budget.enter()?;
    let mut nested = ctx.nested(ctx.fs, vars);
    let status = exec::script(&mut nested, &script, io);
    ctx.budget.leave();
    status
}

/// Runs `command` with `args` in the host's interpreter for it. A command
/// that names a language without an interpreter stops the line; any other
/// unknown command is `command not found`.
fn interpreter(ctx: &mut Ctx, command: &str, args: Vec<String>, io: &mut Io) -> Status {
    let invocation = Invocation {
        command: command.to_owned(),
        args,
        cwd: ctx.cwd.clone(),
        env: ctx.vars.environment(),
        stdin: io.stdin(),
        timeout_ms: ctx.remaining_ms(DEFAULT_TIMEOUT_MS),
    };
    match ctx.interpreters.run(invocation) {
        Ok(ran) => {
            io.out(&ran.stdout);
            io.err(&ran.stderr);
            if ran.stdout_truncated || ran.stderr_truncated {
                io.errln(format_args!(
                    "{command}: output was cut at the interpreter's limit"
                ));
            }
            ctx.check()?;
            Ok(ran.exit_code)
        }
        Err(NotRun::Unknown) => match language_of(command) {
            Some(ext) => Err(no_interpreter(&format!(".{ext}"), command)),
            None => {
                io.errln(format_args!("{command}: command not found"));
                Ok(127)
            }
        },
        Err(NotRun::Failed(message)) => {
            io.errln(format_args!("{command}: {message}"));
            Ok(126)
        }
    }
}
