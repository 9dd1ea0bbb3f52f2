//! `head` and `tail`: the first or last lines (`-n N`, `-N`) or bytes
//! (`-c N`) of files or stdin; `tail -n +N` starts at line N. Several files
//! get `==> name <==` headers.

use super::{Outcome, count, inputs, options};
use crate::shell::context::Ctx;
use crate::shell::io::Io;

/// Which end a command keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Head,
    Tail,
}

/// `head [-n N | -N] [-c N] [FILE...]`.
pub(super) fn head(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    run(ctx, args, io, End::Head)
}

/// `tail [-n N | -n +N | -N] [-c N] [FILE...]`.
pub(super) fn tail(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    run(ctx, args, io, End::Tail)
}

/// How much to keep.
enum Amount {
    /// This many lines or bytes from the command's end.
    Last(usize),
    /// Everything from this 1-based line or byte on (`tail -n +N`).
    From(usize),
}

fn run(ctx: &mut Ctx, args: &[String], io: &mut Io, end: End) -> Outcome {
    let name = if end == End::Head { "head" } else { "tail" };
    let args: Vec<String> = args
        .iter()
        .flat_map(|arg| match arg.strip_prefix('-') {
            Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                vec!["-n".to_owned(), digits.to_owned()]
            }
            _ => vec![arg.clone()],
        })
        .collect();
    let parsed = options(io, name, &args, "qv", "nc")?;
    let bytes = parsed.value('c').is_some();
    let amount = match parsed.value('c').or(parsed.value('n')) {
        None => Amount::Last(10),
        Some(value) => match value.strip_prefix('+') {
            Some(start) if end == End::Tail => Amount::From(count(io, name, start)?),
            _ => Amount::Last(count(io, name, value)?),
        },
    };
    let (read, all_read) = inputs(ctx, io, name, &parsed.operands);
    let headers = read.len() > 1 && !parsed.has('q') || parsed.has('v');
    for (index, (shown, data)) in read.iter().enumerate() {
        ctx.tick()?;
        if headers {
            let gap = if index == 0 { "" } else { "\n" };
            let shown = if shown == "-" {
                "standard input"
            } else {
                shown
            };
            io.out(format!("{gap}==> {shown} <==\n").as_bytes());
        }
        let kept = if bytes {
            slice_bytes(data, &amount, end)
        } else {
            slice_lines(data, &amount, end)
        };
        io.out(kept);
    }
    Ok(if all_read { 0 } else { 1 })
}

/// The part of `data` kept when counting bytes.
fn slice_bytes<'d>(data: &'d [u8], amount: &Amount, end: End) -> &'d [u8] {
    match (amount, end) {
        (Amount::Last(n), End::Head) => &data[..(*n).min(data.len())],
        (Amount::Last(n), End::Tail) => &data[data.len() - (*n).min(data.len())..],
        (Amount::From(n), _) => &data[n.saturating_sub(1).min(data.len())..],
    }
}

/// The part of `data` kept when counting lines.
fn slice_lines<'d>(data: &'d [u8], amount: &Amount, end: End) -> &'d [u8] {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', data).map(|at| at + 1))
        .filter(|&at| at < data.len())
        .collect();
    let line_start = |line: usize| starts.get(line).copied().unwrap_or(data.len());
    match (amount, end) {
        (Amount::Last(n), End::Head) => &data[..line_start(*n)],
        (Amount::Last(n), End::Tail) => &data[line_start(starts.len().saturating_sub(*n))..],
        (Amount::From(n), _) => &data[line_start(n.saturating_sub(1))..],
    }
}
