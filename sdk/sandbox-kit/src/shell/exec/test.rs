//! `[[ ]]`: file tests against the workspace, string tests, `==`/`!=`
//! against patterns, `=~` against regular expressions (setting
//! `BASH_REMATCH`), arithmetic comparisons, `&&`, `||`, `!` and
//! parentheses. Its operands are not split or globbed.

use brush_parser::ast::{BinaryPredicate, ExtendedTestExpr, UnaryPredicate};

use crate::fs::Kind;
use crate::shell::context::{Ctx, Interrupt, Status};
use crate::shell::expand::Expander;
use crate::shell::expand::glob::Pattern;
use crate::shell::io::Io;
use crate::shell::vars::Value;

/// Runs `[[ expr ]]`: 0 when it holds, 1 when not, 2 for a malformed
/// regular expression.
pub(super) fn run(ctx: &mut Ctx, expr: &ExtendedTestExpr, io: &Io) -> Status {
    match holds(ctx, expr, io)? {
        Some(true) => Ok(0),
        Some(false) => Ok(1),
        None => Ok(2),
    }
}

fn holds(ctx: &mut Ctx, expr: &ExtendedTestExpr, io: &Io) -> Result<Option<bool>, Interrupt> {
    Ok(match expr {
        ExtendedTestExpr::And(left, right) => match holds(ctx, left, io)? {
            Some(true) => holds(ctx, right, io)?,
            other => other,
        },
        ExtendedTestExpr::Or(left, right) => match holds(ctx, left, io)? {
            Some(false) => holds(ctx, right, io)?,
            other => other,
        },
        ExtendedTestExpr::Not(inner) => holds(ctx, inner, io)?.map(|held| !held),
        ExtendedTestExpr::Parenthesized(inner) => holds(ctx, inner, io)?,
        ExtendedTestExpr::UnaryTest(predicate, word) => {
            let operand = Expander::new(ctx, io).string(&word.value)?;
            Some(unary(ctx, predicate, &operand))
        }
        ExtendedTestExpr::BinaryTest(predicate, left, right) => {
            binary(ctx, io, predicate, &left.value, &right.value)?
        }
    })
}

/// Whether a unary test holds of `operand`.
pub(in crate::shell) fn unary(ctx: &Ctx, predicate: &UnaryPredicate, operand: &str) -> bool {
    let meta = || {
        ctx.resolve(operand)
            .ok()
            .and_then(|path| ctx.fs.meta(&path).ok().flatten())
    };
    match predicate {
        UnaryPredicate::StringHasZeroLength => operand.is_empty(),
        UnaryPredicate::StringHasNonZeroLength => !operand.is_empty(),
        UnaryPredicate::FileExists
        | UnaryPredicate::FileExistsAndIsReadable
        | UnaryPredicate::FileExistsAndIsWritable => meta().is_some(),
        UnaryPredicate::FileExistsAndIsExecutable => meta().is_some_and(|meta| meta.is_dir()),
        UnaryPredicate::FileExistsAndIsDir => meta().is_some_and(|meta| meta.is_dir()),
        UnaryPredicate::FileExistsAndIsRegularFile => {
            meta().is_some_and(|meta| meta.kind == Kind::File)
        }
        UnaryPredicate::FileExistsAndIsSymlink => {
            meta().is_some_and(|meta| meta.kind == Kind::Symlink)
        }
        UnaryPredicate::FileExistsAndIsNotZeroLength => meta().is_some_and(|meta| meta.size > 0),
        UnaryPredicate::ShellVariableIsSetAndAssigned
        | UnaryPredicate::ShellVariableIsSetAndNameRef => ctx.vars.get(operand).is_some(),
        UnaryPredicate::ShellOptionEnabled => match operand {
            "errexit" => ctx.options.errexit,
            "nounset" => ctx.options.nounset,
            "pipefail" => ctx.options.pipefail,
            "noglob" => ctx.options.noglob,
            "xtrace" => ctx.options.xtrace,
            _ => false,
        },
        UnaryPredicate::FileExistsAndIsBlockSpecialFile
        | UnaryPredicate::FileExistsAndIsCharSpecialFile
        | UnaryPredicate::FileExistsAndIsSetgid
        | UnaryPredicate::FileExistsAndHasStickyBit
        | UnaryPredicate::FileExistsAndIsFifo
        | UnaryPredicate::FdIsOpenTerminal
        | UnaryPredicate::FileExistsAndIsSetuid
        | UnaryPredicate::FileExistsAndIsSocket
        | UnaryPredicate::FileExistsAndModifiedSinceLastRead => false,
        UnaryPredicate::FileExistsAndOwnedByEffectiveGroupId
        | UnaryPredicate::FileExistsAndOwnedByEffectiveUserId => meta().is_some(),
    }
}

fn binary(
    ctx: &mut Ctx,
    io: &Io,
    predicate: &BinaryPredicate,
    left: &str,
    right: &str,
) -> Result<Option<bool>, Interrupt> {
    let left_value = Expander::new(ctx, io).string(left)?;
    Ok(Some(match predicate {
        BinaryPredicate::StringExactlyMatchesPattern
        | BinaryPredicate::StringDoesNotExactlyMatchPattern => {
            let pattern = Expander::new(ctx, io).pattern(right)?;
            let matched =
                Pattern::new(&pattern).is_some_and(|pattern| pattern.matches(&left_value));
            matched == matches!(predicate, BinaryPredicate::StringExactlyMatchesPattern)
        }
        BinaryPredicate::StringMatchesRegex => {
            let expression = Expander::new(ctx, io).string(right)?;
            let Ok(regex) = regex::Regex::new(&expression) else {
                return Ok(None);
            };
            match regex.captures(&left_value) {
                Some(captures) => {
                    let groups = captures
                        .iter()
                        .map(|group| {
                            Some(group.map_or_else(String::new, |m| m.as_str().to_owned()))
                        })
                        .collect();
                    ctx.vars.assign("BASH_REMATCH", Value::Array(groups));
                    true
                }
                None => {
                    ctx.vars.assign("BASH_REMATCH", Value::Array(Vec::new()));
                    false
                }
            }
        }
        BinaryPredicate::StringExactlyMatchesString => {
            left_value == Expander::new(ctx, io).string(right)?
        }
        BinaryPredicate::StringDoesNotExactlyMatchString => {
            left_value != Expander::new(ctx, io).string(right)?
        }
        BinaryPredicate::StringContainsSubstring => {
            left_value.contains(&Expander::new(ctx, io).string(right)?)
        }
        BinaryPredicate::LeftSortsBeforeRight => {
            left_value < Expander::new(ctx, io).string(right)?
        }
        BinaryPredicate::LeftSortsAfterRight => {
            left_value > Expander::new(ctx, io).string(right)?
        }
        BinaryPredicate::ArithmeticEqualTo
        | BinaryPredicate::ArithmeticNotEqualTo
        | BinaryPredicate::ArithmeticLessThan
        | BinaryPredicate::ArithmeticLessThanOrEqualTo
        | BinaryPredicate::ArithmeticGreaterThan
        | BinaryPredicate::ArithmeticGreaterThanOrEqualTo => {
            let left = Expander::new(ctx, io).arithmetic(left)?;
            let right = Expander::new(ctx, io).arithmetic(right)?;
            match predicate {
                BinaryPredicate::ArithmeticEqualTo => left == right,
                BinaryPredicate::ArithmeticNotEqualTo => left != right,
                BinaryPredicate::ArithmeticLessThan => left < right,
                BinaryPredicate::ArithmeticLessThanOrEqualTo => left <= right,
                BinaryPredicate::ArithmeticGreaterThan => left > right,
                _ => left >= right,
            }
        }
        BinaryPredicate::FilesReferToSameDeviceAndInodeNumbers => {
            let right = Expander::new(ctx, io).string(right)?;
            ctx.resolve(&left_value).ok() == ctx.resolve(&right).ok()
        }
        BinaryPredicate::LeftFileIsNewerOrExistsWhenRightDoesNot
        | BinaryPredicate::LeftFileIsOlderOrDoesNotExistWhenRightDoes => false,
    }))
}
