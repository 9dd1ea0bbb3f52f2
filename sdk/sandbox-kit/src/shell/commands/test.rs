//! `true`, `false`, and `test` / `[` with the common unary file and string
//! tests (`-e -f -d -s -r -w -x -L -z -n`; what exists may be read and
//! written, a directory is searchable), string (`=`, `!=`) and integer (`-eq -ne -lt
//! -le -gt -ge`) comparisons, and a leading `!`.

use super::Outcome;
use crate::shell::context::Ctx;
use crate::shell::io::Io;

/// `true`: succeeds.
pub(super) fn true_(_ctx: &mut Ctx, _args: &[String], _io: &mut Io) -> Outcome {
    Ok(0)
}

/// `false`: fails.
pub(super) fn false_(_ctx: &mut Ctx, _args: &[String], _io: &mut Io) -> Outcome {
    Ok(1)
}

/// `test EXPRESSION`.
pub(super) fn test(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    evaluate(ctx, "test", args, io)
}

/// `[ EXPRESSION ]`.
pub(super) fn bracket(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    match args.split_last() {
        Some((last, inner)) if last == "]" => evaluate(ctx, "[", inner, io),
        _ => {
            io.errln("[: missing `]'");
            Ok(2)
        }
    }
}

fn evaluate(ctx: &mut Ctx, name: &str, args: &[String], io: &mut Io) -> Outcome {
    let (negate, args) = match args.split_first() {
        Some((bang, rest)) if bang == "!" && !rest.is_empty() => (true, rest),
        _ => (false, args),
    };
    let truth = match args {
        [] => Some(false),
        [single] => Some(!single.is_empty()),
        [op, operand] => unary(ctx, op, operand),
        [left, op, right] => binary(left, op, right),
        _ => None,
    };
    match truth {
        Some(truth) => Ok(i32::from(truth == negate)),
        None => {
            io.errln(format_args!(
                "{name}: unsupported expression: {}",
                args.join(" ")
            ));
            Ok(2)
        }
    }
}

fn unary(ctx: &Ctx, op: &str, operand: &str) -> Option<bool> {
    let meta = || {
        ctx.resolve(operand)
            .ok()
            .and_then(|path| ctx.fs.meta(&path).ok().flatten())
    };
    Some(match op {
        "-e" | "-r" | "-w" => meta().is_some(),
        "-x" => meta().is_some_and(|meta| meta.is_dir()),
        "-L" | "-h" => meta().is_some_and(|meta| meta.kind == crate::fs::Kind::Symlink),
        "-f" => meta().is_some_and(|meta| !meta.is_dir()),
        "-d" => meta().is_some_and(|meta| meta.is_dir()),
        "-s" => meta().is_some_and(|meta| meta.size > 0),
        "-z" => operand.is_empty(),
        "-n" => !operand.is_empty(),
        _ => return None,
    })
}

fn binary(left: &str, op: &str, right: &str) -> Option<bool> {
    match op {
        "=" | "==" => return Some(left == right),
        "!=" => return Some(left != right),
        _ => {}
    }
    let left: i64 = left.trim().parse().ok()?;
    let right: i64 = right.trim().parse().ok()?;
    Some(match op {
        "-eq" => left == right,
        "-ne" => left != right,
        "-lt" => left < right,
        "-le" => left <= right,
        "-gt" => left > right,
        "-ge" => left >= right,
        _ => return None,
    })
}
