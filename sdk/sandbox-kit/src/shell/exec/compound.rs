//! Compound commands: `{ }`, `( )`, `if`, `case`, `for`, `for (( ))`,
//! `while`, `until` and `(( ))`, with `break` and `continue` counting the
//! loops they leave.

use brush_parser::ast::{
    ArithmeticForClauseCommand, CaseClauseCommand, CaseItemPostAction, CompoundCommand,
    CompoundList, ForClauseCommand, IfClauseCommand, WhileOrUntilClauseCommand,
};

use super::{condition, list_, subshell};
use crate::shell::context::{Ctx, Interrupt, Status};
use crate::shell::expand::Expander;
use crate::shell::expand::glob::Pattern;
use crate::shell::io::Io;

/// What a loop does after its body stopped.
enum Next {
    /// Go round again.
    Again,
    /// Leave the loop.
    Leave,
}

/// Runs `command`.
pub(super) fn run(ctx: &mut Ctx, command: &CompoundCommand, io: &Io) -> Status {
    match command {
        CompoundCommand::BraceGroup(group) => list_(ctx, &group.list, io),
        CompoundCommand::Subshell(group) => subshell(ctx, |ctx| list_(ctx, &group.list, io)),
        CompoundCommand::IfClause(clause) => if_(ctx, clause, io),
        CompoundCommand::CaseClause(clause) => case(ctx, clause, io),
        CompoundCommand::ForClause(clause) => for_(ctx, clause, io),
        CompoundCommand::ArithmeticForClause(clause) => arithmetic_for(ctx, clause, io),
        CompoundCommand::WhileClause(clause) => while_(ctx, clause, io, true),
        CompoundCommand::UntilClause(clause) => while_(ctx, clause, io, false),
        CompoundCommand::Arithmetic(command) => {
            let value = Expander::new(ctx, io).arithmetic(&command.expr.value)?;
            Ok(i32::from(value == 0))
        }
        CompoundCommand::Coprocess(_) => {
            io.stderr
                .borrow_mut()
                .push(b"sh: coproc: there are no processes to run one in\n");
            Ok(2)
        }
    }
}

fn if_(ctx: &mut Ctx, clause: &IfClauseCommand, io: &Io) -> Status {
    if condition(ctx, &clause.condition, io)? == 0 {
        return list_(ctx, &clause.then, io);
    }
    for branch in clause.elses.iter().flatten() {
        match &branch.condition {
            Some(test) if condition(ctx, test, io)? != 0 => continue,
            _ => return list_(ctx, &branch.body, io),
        }
    }
    ctx.status = 0;
    Ok(0)
}

fn case(ctx: &mut Ctx, clause: &CaseClauseCommand, io: &Io) -> Status {
    let value = Expander::new(ctx, io).string(&clause.value.value)?;
    let mut status = 0;
    let mut falling_through = false;
    for item in &clause.cases {
        let mut matched = falling_through;
        if !matched {
            for pattern in &item.patterns {
                let pattern = Expander::new(ctx, io).pattern(&pattern.value)?;
                if Pattern::new(&pattern).is_some_and(|pattern| pattern.matches(&value)) {
                    matched = true;
                    break;
                }
            }
        }
        if !matched {
            continue;
        }
        status = match &item.cmd {
            Some(body) => list_(ctx, body, io)?,
            None => 0,
        };
        match item.post_action {
            CaseItemPostAction::ExitCase => return Ok(status),
            CaseItemPostAction::UnconditionallyExecuteNextCaseItem => falling_through = true,
            CaseItemPostAction::ContinueEvaluatingCases => falling_through = false,
        }
    }
    ctx.status = status;
    Ok(status)
}

fn for_(ctx: &mut Ctx, clause: &ForClauseCommand, io: &Io) -> Status {
    let values = match &clause.values {
        Some(words) => {
            let mut values = Vec::new();
            for word in words {
                values.extend(Expander::new(ctx, io).fields(&word.value)?);
            }
            values
        }
        None => ctx.vars.positional.clone(),
    };
    let mut status = 0;
    for value in values {
        ctx.vars.set(&clause.variable_name, value);
        match body(ctx, &clause.body.list, io, &mut status)? {
            Next::Again => {}
            Next::Leave => break,
        }
    }
    ctx.status = status;
    Ok(status)
}

fn arithmetic_for(ctx: &mut Ctx, clause: &ArithmeticForClauseCommand, io: &Io) -> Status {
    if let Some(init) = &clause.initializer {
        Expander::new(ctx, io).arithmetic(&init.value)?;
    }
    let mut status = 0;
    loop {
        if let Some(test) = &clause.condition
            && Expander::new(ctx, io).arithmetic(&test.value)? == 0
        {
            break;
        }
        match body(ctx, &clause.body.list, io, &mut status)? {
            Next::Again => {}
            Next::Leave => break,
        }
        if let Some(update) = &clause.updater {
            Expander::new(ctx, io).arithmetic(&update.value)?;
        }
    }
    ctx.status = status;
    Ok(status)
}

fn while_(ctx: &mut Ctx, clause: &WhileOrUntilClauseCommand, io: &Io, until_fails: bool) -> Status {
    let mut status = 0;
    loop {
        ctx.budget.step()?;
        let held = condition(ctx, &clause.0, io)? == 0;
        if held != until_fails {
            break;
        }
        match body(ctx, &clause.1.list, io, &mut status)? {
            Next::Again => {}
            Next::Leave => break,
        }
    }
    ctx.status = status;
    Ok(status)
}

/// Runs a loop's body once, keeping its status in `status`; what the loop
/// does next, or the `break`/`continue` that reaches outer loops.
fn body(ctx: &mut Ctx, list: &CompoundList, io: &Io, status: &mut i32) -> Result<Next, Interrupt> {
    match list_(ctx, list, io) {
        Ok(done) => {
            *status = done;
            Ok(Next::Again)
        }
        Err(Interrupt::Break(1)) => Ok(Next::Leave),
        Err(Interrupt::Break(n)) => Err(Interrupt::Break(n - 1)),
        Err(Interrupt::Continue(1)) => Ok(Next::Again),
        Err(Interrupt::Continue(n)) => Err(Interrupt::Continue(n - 1)),
        Err(other) => Err(other),
    }
}
