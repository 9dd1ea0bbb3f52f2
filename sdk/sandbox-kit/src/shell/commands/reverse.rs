//! `tac` and `rev`: lines in reverse order, and each line's characters in
//! reverse order, of files or stdin.

use super::{Outcome, inputs, lines};
use crate::shell::context::Ctx;
use crate::shell::io::Io;

/// `tac [FILE...]`: each input's lines, last first.
pub(super) fn tac(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let (read, all_read) = inputs(ctx, io, "tac", args);
    for (_, data) in read {
        for line in lines(&data).collect::<Vec<_>>().into_iter().rev() {
            ctx.tick()?;
            io.out(line);
            io.out(b"\n");
        }
    }
    Ok(i32::from(!all_read))
}

/// `rev [FILE...]`: each line with its characters reversed.
pub(super) fn rev(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let (read, all_read) = inputs(ctx, io, "rev", args);
    for (_, data) in read {
        for line in lines(&data) {
            ctx.tick()?;
            let reversed: String = String::from_utf8_lossy(line).chars().rev().collect();
            io.out(reversed.as_bytes());
            io.out(b"\n");
        }
    }
    Ok(i32::from(!all_read))
}
