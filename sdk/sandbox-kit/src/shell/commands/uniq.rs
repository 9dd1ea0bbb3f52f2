//! `uniq`: collapses runs of equal adjacent lines. `-c` prefixes counts,
//! `-d` prints only repeated lines, `-u` only unrepeated ones, `-i` ignores
//! case.

use super::{Outcome, inputs, lines, options};
use crate::shell::context::Ctx;
use crate::shell::io::Io;

/// `uniq [-cdui] [INPUT]`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "uniq", args, "cdui", "")?;
    if args.operands.len() > 1 {
        io.errln("uniq: writing to an OUTPUT file is not supported");
        return Ok(1);
    }
    let (read, all_read) = inputs(ctx, io, "uniq", &args.operands);
    let same = |left: &[u8], right: &[u8]| {
        if args.has('i') {
            left.eq_ignore_ascii_case(right)
        } else {
            left == right
        }
    };
    let mut runs: Vec<(&[u8], usize)> = Vec::new();
    for line in read.iter().flat_map(|(_, data)| lines(data)) {
        ctx.tick()?;
        match runs.last_mut() {
            Some((kept, count)) if same(kept, line) => *count += 1,
            _ => runs.push((line, 1)),
        }
    }
    let mut out = Vec::new();
    for (line, count) in runs {
        if (args.has('d') && count < 2) || (args.has('u') && count > 1) {
            continue;
        }
        if args.has('c') {
            out.extend_from_slice(format!("{count:>7} ").as_bytes());
        }
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    io.out(&out);
    Ok(if all_read { 0 } else { 1 })
}
