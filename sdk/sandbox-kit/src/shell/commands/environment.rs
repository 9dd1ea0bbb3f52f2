//! `env`, `printenv` and `yes`: the shell's variables as a program sees
//! them, a command run with more of them, and an endless line.

use super::{Outcome, Stop};
use crate::shell::context::{Ctx, Interrupt};
use crate::shell::exec::dispatch;
use crate::shell::io::Io;
use crate::shell::vars::is_name;

/// `env [NAME=VALUE]... [COMMAND [ARG]...]`: prints the variables, or runs
/// COMMAND with the assignments added for it alone.
pub(super) fn env(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let assignments = args
        .iter()
        .take_while(|arg| arg.split_once('=').is_some_and(|(name, _)| is_name(name)))
        .count();
    let (assigned, command) = args.split_at(assignments);
    let mut hidden = Vec::new();
    for assignment in assigned {
        let (name, value) = assignment.split_once('=').unwrap_or_default();
        hidden.push((name.to_owned(), ctx.vars.get(name).cloned()));
        ctx.vars.set(name, value.to_owned());
    }
    let status = match command.split_first() {
        Some((name, rest)) => dispatch(ctx, name, rest, io).map_err(Stop::Interrupt),
        None => {
            for (name, value) in ctx.vars.environment() {
                io.outln(format_args!("{name}={value}"));
            }
            Ok(0)
        }
    };
    for (name, value) in hidden.into_iter().rev() {
        match value {
            Some(value) => ctx.vars.assign(&name, value),
            None => ctx.vars.unset(&name),
        }
    }
    status
}

/// `printenv [NAME...]`: the variables, or the values of those named (exit
/// 1 if one is not set).
pub(super) fn printenv(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    if args.is_empty() {
        return env(ctx, args, io);
    }
    let mut status = 0;
    for name in args {
        match ctx.vars.scalar(name) {
            Some(value) => io.outln(value),
            None => status = 1,
        }
    }
    Ok(status)
}

/// `yes [TEXT...]`: the line (`y` by default) again and again, until its
/// reader stops taking it or a limit ends the command line.
pub(super) fn yes(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let line = if args.is_empty() {
        "y\n".to_owned()
    } else {
        format!("{}\n", args.join(" "))
    };
    let chunk = line.repeat((8192 / line.len()).max(1));
    loop {
        ctx.tick()?;
        if io.stdout_full() {
            return Err(Stop::Interrupt(Interrupt::BrokenPipe));
        }
        io.out(chunk.as_bytes());
    }
}
