//! `pwd` and `cd`. The working directory is shown as an absolute
//! path whose root is the workspace root: `pwd` prints `/` there and `/src`
//! in `src`. Command arguments still take paths relative to it; `cd` with no
//! argument goes back to the root and cannot leave it, except into a skill's
//! folder (`cd /skills/NAME`), which `pwd` shows as it is. `cd -` goes back
//! to where the last `cd` left (`$OLDPWD`), printing it.

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
            move_to(ctx, String::new());
            return Ok(0);
        }
        [back] if back == "-" => {
            let Some(old) = ctx.old_cwd.clone() else {
                io.errln("cd: OLDPWD not set");
                return Ok(1);
            };
            move_to(ctx, old);
            io.outln(super::shown_cwd(ctx));
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
            move_to(ctx, dir);
            Ok(0)
        }
        Err(error) => {
            report(io, "cd", target, &error);
            Ok(1)
        }
    }
}

/// Makes `dir` the working directory, remembering the one it leaves for
/// `cd -` and `$OLDPWD`.
fn move_to(ctx: &mut Ctx, dir: String) {
    let left = std::mem::replace(&mut ctx.cwd, dir);
    ctx.old_cwd = Some(left);
    if let Some(old) = &ctx.old_cwd {
        let shown = if old.starts_with('/') {
            old.clone()
        } else {
            format!("/{old}")
        };
        ctx.vars.set("OLDPWD", shown);
    }
}
