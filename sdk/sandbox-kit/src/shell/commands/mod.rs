//! The commands of the command language, dispatched by name. Each runs in
//! process over the workspace file system; anything else is a script or a
//! command for an interpreter ([`super::scripts`]), or `command not found`
//! (127).

mod cut;
mod dialect;
mod echo;
mod environment;
mod files;
mod find;
mod grep;
mod head_tail;
mod ls;
mod nav;
mod reverse;
mod sed;
mod sort;
mod test;
mod text;
mod uniq;
mod usage;
mod wc;

use super::args::Args;
use super::context::{Ctx, Interrupt, Status};
use super::io::Io;

/// Why a command ended early.
enum Stop {
    /// With this exit status, the problem already reported.
    Code(i32),
    /// The whole command line stopped.
    Interrupt(Interrupt),
}

impl From<Interrupt> for Stop {
    fn from(interrupt: Interrupt) -> Self {
        Stop::Interrupt(interrupt)
    }
}

/// What a command's entry point returns: its exit status, or why it ended
/// early.
type Outcome = Result<i32, Stop>;

/// A command's entry point: the context, its arguments, its streams.
type Run = fn(&mut Ctx, &[String], &mut Io) -> Outcome;

/// The commands by name.
const COMMANDS: &[(&str, Run)] = &[
    ("[", test::bracket),
    ("cat", text::cat),
    ("cd", nav::cd),
    ("cp", files::cp),
    ("cut", cut::run),
    ("du", usage::du),
    ("echo", echo::echo),
    ("env", environment::env),
    ("false", test::false_),
    ("find", find::run),
    ("grep", grep::run),
    ("head", head_tail::head),
    ("ls", ls::run),
    ("mkdir", files::mkdir),
    ("mv", files::mv),
    ("printenv", environment::printenv),
    ("printf", echo::printf),
    ("pwd", nav::pwd),
    ("rev", reverse::rev),
    ("rm", files::rm),
    ("sed", sed::run),
    ("sort", sort::run),
    ("stat", usage::stat),
    ("tac", reverse::tac),
    ("tail", head_tail::tail),
    ("test", test::test),
    ("touch", files::touch),
    ("true", test::true_),
    ("uniq", uniq::run),
    ("wc", wc::run),
    ("yes", environment::yes),
];

/// Whether `name` is one of these commands.
pub(super) fn exists(name: &str) -> bool {
    COMMANDS.iter().any(|(known, _)| *known == name)
}

/// The working directory as `pwd` shows it: `/` is the workspace root.
pub(super) fn shown_cwd(ctx: &Ctx) -> String {
    if ctx.cwd.starts_with('/') {
        ctx.cwd.clone()
    } else {
        format!("/{}", ctx.cwd)
    }
}

/// Runs the command `name` with `args`.
pub(super) fn run(ctx: &mut Ctx, name: &str, args: &[String], io: &mut Io) -> Status {
    match COMMANDS.iter().find(|(known, _)| *known == name) {
        Some((_, command)) => match command(ctx, args, io) {
            Ok(code) | Err(Stop::Code(code)) => Ok(code),
            Err(Stop::Interrupt(interrupt)) => Err(interrupt),
        },
        None => super::scripts::run(ctx, name, args, io),
    }
}

/// Parses `args` for `command` (see [`Args::parse`]); on a usage error,
/// reports it and gives the exit status 2.
fn options(
    io: &mut Io,
    command: &str,
    args: &[String],
    switches: &str,
    valued: &str,
) -> Result<Args, Stop> {
    Args::parse(args, switches, valued).map_err(|message| {
        io.errln(format_args!("{command}: {message}"));
        Stop::Code(2)
    })
}

/// The inputs named by `operands` (stdin when there are none), each with its
/// name; the bool is false if any could not be read (already reported).
fn inputs(
    ctx: &mut Ctx,
    io: &mut Io,
    command: &str,
    operands: &[String],
) -> (Vec<(String, Vec<u8>)>, bool) {
    if operands.is_empty() {
        return (vec![("-".to_owned(), io.stdin())], true);
    }
    let mut all_read = true;
    let mut read = Vec::new();
    for operand in operands {
        match ctx.input(io, command, operand) {
            Some(data) => read.push((operand.clone(), data)),
            None => all_read = false,
        }
    }
    (read, all_read)
}

/// The lines of `data` without their `\n`; a final line without one counts.
fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let empty = data.is_empty();
    body.split(|&byte| byte == b'\n').filter(move |_| !empty)
}

/// Parses a count option's value, reporting a bad one.
fn count(io: &mut Io, command: &str, value: &str) -> Result<usize, Stop> {
    value.parse().map_err(|_| {
        io.errln(format_args!("{command}: invalid number: '{value}'"));
        Stop::Code(2)
    })
}
