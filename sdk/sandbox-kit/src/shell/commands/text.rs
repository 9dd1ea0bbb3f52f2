//! `cat`: files (or stdin, also as `-`) to stdout in order; `-n` numbers the
//! lines across all of them.

use super::{Outcome, lines, options};
use crate::shell::context::Ctx;
use crate::shell::io::Io;

/// `cat [-n] [FILE...]`.
pub(super) fn cat(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "cat", args, "n", "")?;
    let stdin_only = ["-".to_owned()];
    let operands = if args.operands.is_empty() {
        &stdin_only[..]
    } else {
        &args.operands[..]
    };
    let mut status = 0;
    let mut number = 0;
    for operand in operands {
        ctx.tick()?;
        let Some(data) = ctx.input(io, "cat", operand) else {
            status = 1;
            continue;
        };
        if !args.has('n') {
            io.out(&data);
            continue;
        }
        for line in lines(&data) {
            ctx.tick()?;
            number += 1;
            io.out(format!("{number:>6}\t").as_bytes());
            io.out(line);
            io.out(b"\n");
        }
    }
    Ok(status)
}
