//! Running a parsed program: lists, `&&`/`||` chains and pipelines here;
//! compound commands ([`compound`]), simple commands ([`simple`]),
//! redirections ([`redirect`]) and `[[ ]]` ([`test`]) each in a room of its
//! own. Pipelines run their commands one after another through in-memory
//! pipes, each in a subshell as bash runs them; background jobs (`&`) run
//! in the foreground, there being no processes to wait for.

mod compound;
mod redirect;
mod simple;
mod test;

use brush_parser::ast::{AndOr, AndOrList, Command, CompoundList, Pipeline, Program};

use super::context::{Ctx, Interrupt, Status};
use super::io::{Buffer, Input, Io};
use std::cell::RefCell;
use std::rc::Rc;

pub(super) use simple::dispatch;

/// Exit status of a pipeline stage stopped for writing to a full pipe, as
/// bash reports a process killed by `SIGPIPE`.
const BROKEN_PIPE: i32 = 141;

/// Runs `program`: its complete commands in order.
pub(super) fn program(ctx: &mut Ctx, program: &Program, io: &Io) -> Status {
    for list in &program.complete_commands {
        list_(ctx, list, io)?;
    }
    Ok(ctx.status)
}

/// Runs a list of and-or chains.
pub(super) fn list_(ctx: &mut Ctx, list: &CompoundList, io: &Io) -> Status {
    for item in &list.0 {
        and_or(ctx, &item.0, io)?;
    }
    Ok(ctx.status)
}

/// Runs `list` as a condition (of `if`, `while`, `until`, or before `&&`
/// and `||`), where `set -e` ignores a failure.
pub(super) fn condition(ctx: &mut Ctx, list: &CompoundList, io: &Io) -> Status {
    ctx.conditions += 1;
    let status = list_(ctx, list, io);
    ctx.conditions -= 1;
    status
}

fn and_or(ctx: &mut Ctx, chain: &AndOrList, io: &Io) -> Status {
    let last = chain.additional.len();
    let run = |ctx: &mut Ctx, pipe: &Pipeline, is_last: bool| -> Status {
        if is_last {
            pipeline(ctx, pipe, io)
        } else {
            ctx.conditions += 1;
            let status = pipeline(ctx, pipe, io);
            ctx.conditions -= 1;
            status
        }
    };
    ctx.status = run(ctx, &chain.first, last == 0)?;
    for (index, next) in chain.additional.iter().enumerate() {
        let is_last = index + 1 == last;
        match next {
            AndOr::And(pipe) if ctx.status == 0 => ctx.status = run(ctx, pipe, is_last)?,
            AndOr::Or(pipe) if ctx.status != 0 => ctx.status = run(ctx, pipe, is_last)?,
            AndOr::And(_) | AndOr::Or(_) => {}
        }
    }
    Ok(ctx.status)
}

/// Runs a pipeline; its status is its last command's (with `pipefail`, the
/// last failing one's), inverted by `!`. Under `set -e` a failure outside a
/// condition ends the shell.
fn pipeline(ctx: &mut Ctx, pipe: &Pipeline, io: &Io) -> Status {
    let status = match pipe.seq.as_slice() {
        [only] => command(ctx, only, io)?,
        commands => stages(ctx, commands, io)?,
    };
    let status = if pipe.bang {
        i32::from(status == 0)
    } else {
        status
    };
    ctx.status = status;
    if status != 0 && !pipe.bang && ctx.options.errexit && ctx.conditions == 0 {
        return Err(Interrupt::Exit(status));
    }
    Ok(status)
}

/// Runs the commands of a pipeline one after another, each in a subshell,
/// each reading what the one before wrote.
fn stages(ctx: &mut Ctx, commands: &[Command], io: &Io) -> Status {
    let mut input = io.stdin.clone();
    let mut failed = 0;
    let mut status = 0;
    let last = commands.len() - 1;
    for (index, stage) in commands.iter().enumerate() {
        ctx.check()?;
        let pipe = Rc::new(RefCell::new(Buffer::pipe()));
        let stage_io = Io {
            stdin: input,
            stdout: if index == last {
                io.stdout.clone()
            } else {
                pipe.clone()
            },
            stderr: io.stderr.clone(),
        };
        status = subshell(ctx, |ctx| command(ctx, stage, &stage_io))?;
        if status != 0 {
            failed = status;
        }
        let written = pipe.borrow_mut().take();
        input = Input::new(written);
    }
    Ok(if ctx.options.pipefail && failed != 0 {
        failed
    } else {
        status
    })
}

/// Runs `body` in a subshell: what it changes (variables, functions, the
/// working directory, options) is undone after, and `exit` ends only it.
pub(super) fn subshell(ctx: &mut Ctx, body: impl FnOnce(&mut Ctx) -> Status) -> Status {
    ctx.budget.enter()?;
    let saved = ctx.save();
    let outcome = body(ctx);
    ctx.restore(saved);
    ctx.budget.leave();
    match outcome {
        Ok(status) => Ok(status),
        Err(Interrupt::Exit(status) | Interrupt::Return(status)) => Ok(status),
        Err(Interrupt::Break(_) | Interrupt::Continue(_)) => Ok(ctx.status),
        Err(Interrupt::BrokenPipe) => Ok(BROKEN_PIPE),
        Err(stop) => Err(stop),
    }
}

/// The output of the program `text` run in a subshell reading `io`'s stdin
/// and writing errors to its stderr: a command substitution. `$?` is its
/// status after.
pub(super) fn substitution(ctx: &mut Ctx, io: &Io, text: &str) -> Result<Vec<u8>, Interrupt> {
    let parsed = match super::parse::program(text) {
        Ok(parsed) => parsed,
        Err(message) => {
            io.stderr
                .borrow_mut()
                .push(format!("sh: command substitution: {message}\n").as_bytes());
            ctx.status = 2;
            return Ok(Vec::new());
        }
    };
    let captured = Rc::new(RefCell::new(Buffer::new(super::io::PIPE_LIMIT)));
    let inner = Io {
        stdin: io.stdin.clone(),
        stdout: captured.clone(),
        stderr: io.stderr.clone(),
    };
    // As in bash, `set -e` does not reach into a substitution.
    let status = subshell(ctx, |ctx| {
        ctx.options.errexit = false;
        program(ctx, &parsed, &inner)
    })?;
    ctx.status = status;
    ctx.substitutions += 1;
    let output = captured.borrow_mut().take();
    Ok(output)
}

/// Runs one command of a pipeline.
fn command(ctx: &mut Ctx, command: &Command, io: &Io) -> Status {
    ctx.budget.step()?;
    if io.stdout_full() {
        return Err(Interrupt::BrokenPipe);
    }
    match command {
        Command::Simple(simple) => simple::run(ctx, simple, io),
        Command::Compound(compound, redirects) => redirect::around(
            ctx,
            redirects.as_ref().map(|list| list.0.as_slice()),
            io,
            |ctx, io| compound::run(ctx, compound, io),
        ),
        Command::Function(definition) => {
            ctx.functions.insert(
                definition.fname.value.clone(),
                Rc::new(definition.body.clone()),
            );
            Ok(0)
        }
        Command::ExtendedTest(expr, redirects) => redirect::around(
            ctx,
            redirects.as_ref().map(|list| list.0.as_slice()),
            io,
            |ctx, io| test::run(ctx, &expr.expr, io),
        ),
    }
}

/// Runs `program` as a whole shell does (the line, or a script run with
/// `sh FILE`): `exit` ends it with its status, then its `EXIT` trap runs.
/// Only limits and a missing interpreter stop more than it.
pub(super) fn script(ctx: &mut Ctx, parsed: &Program, io: &Io) -> Status {
    let outcome = program(ctx, parsed, io);
    let status = settle(ctx, outcome)?;
    ctx.status = status;
    let Some(action) = ctx.exit_trap.take() else {
        return Ok(status);
    };
    match super::builtins::eval(ctx, &action, io) {
        Err(Interrupt::Exit(code)) => Ok(code),
        Err(stop @ (Interrupt::TimedOut | Interrupt::Limit(..) | Interrupt::NoInterpreter(_))) => {
            Err(stop)
        }
        _ => Ok(status),
    }
}

/// The status a shell ends with when `outcome` ends it.
fn settle(ctx: &Ctx, outcome: Status) -> Status {
    match outcome {
        Ok(status) | Err(Interrupt::Exit(status) | Interrupt::Return(status)) => Ok(status),
        Err(Interrupt::Break(_) | Interrupt::Continue(_)) => Ok(ctx.status),
        Err(Interrupt::BrokenPipe) => Ok(BROKEN_PIPE),
        Err(stop) => Err(stop),
    }
}
