//! `pwd` and `cd`. The working directory is shown as an absolute
//! path whose root is the workspace root: `pwd` prints `/` there and `/src`
//! in `src`. Command arguments still take paths relative to it; `cd` with no
//! argument goes back to the root and cannot leave it, except into a skill's
//! folder (`cd /skills/NAME`), which `pwd` shows as it is.

use super::Outcome;
use crate::shell::context::{Ctx, report};
use crate::shell::io::Io;

/// `pwd`: `/` followed by the working directory.
pub(super) fn pwd(ctx: &mut Ctx, _args: &[String], io: &mut Io) -> Outcome {
    io.outln(super::shown_cwd(ctx));
    Ok(0)
}

/// `cd [DIR]`: changes the working directory for the rest of the line.
pub(super) fn cd(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let target = match args {
        [] => {
            ctx.cwd.clear();
            return Ok(0);
        }
        [target] => target,
        _ => {
            io.errln("cd: too many arguments");
            return Ok(1);
        }
    };
    let moved = ctx.resolve(target).and_then(|dir| {
        crate::workspace::expect_dir(ctx.fs, &dir)?;
        Ok(dir)
    });
    match moved {
        Ok(dir) => {
            ctx.cwd = dir;
            Ok(0)
        }
        Err(error) => {
            report(io, "cd", target, &error);
            Ok(1)
        }
    }
}
