//! Simple commands: words expanded, then redirections applied, then the
//! command found: a function, a shell builtin, a command of the sandbox,
//! or a script or interpreter ([`crate::shell::commands`]). Assignments
//! alone set variables; before a command they hold for it alone.

use std::rc::Rc;

use brush_parser::ast::{
    Assignment, AssignmentName, AssignmentValue, CommandPrefixOrSuffixItem, FunctionBody,
    IoRedirect, SimpleCommand,
};

use super::redirect;
use crate::shell::builtins;
use crate::shell::context::{Ctx, Interrupt, Status};
use crate::shell::expand::Expander;
use crate::shell::io::Io;
use crate::shell::vars::Value;

/// Builtins whose `NAME=value` arguments are assignments, expanded without
/// splitting.
const DECLARATIONS: &[&str] = &["export", "local", "declare", "typeset", "readonly"];

/// Runs `command`.
pub(super) fn run(ctx: &mut Ctx, command: &SimpleCommand, io: &Io) -> Status {
    let substitutions = ctx.substitutions;
    let mut assignments: Vec<&Assignment> = Vec::new();
    let mut redirects: Vec<IoRedirect> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let prefix = command.prefix.iter().flat_map(|prefix| prefix.0.iter());
    for item in prefix {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(redirect) => redirects.push(redirect.clone()),
            CommandPrefixOrSuffixItem::AssignmentWord(assignment, _) => {
                assignments.push(assignment);
            }
            CommandPrefixOrSuffixItem::Word(word) => {
                words.extend(Expander::new(ctx, io).fields(&word.value)?);
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(..) => return no_processes(io),
        }
    }
    if let Some(name) = &command.word_or_name {
        words.extend(Expander::new(ctx, io).fields(&name.value)?);
    }
    let declaration = words
        .first()
        .filter(|first| DECLARATIONS.contains(&first.as_str()))
        .cloned();
    for item in command.suffix.iter().flat_map(|suffix| suffix.0.iter()) {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(redirect) => redirects.push(redirect.clone()),
            CommandPrefixOrSuffixItem::AssignmentWord(assignment, _)
                if let Some(builtin) = &declaration =>
            {
                words.push(declared(ctx, io, builtin, assignment)?);
            }
            CommandPrefixOrSuffixItem::AssignmentWord(_, word)
            | CommandPrefixOrSuffixItem::Word(word) => {
                words.extend(Expander::new(ctx, io).fields(&word.value)?);
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(..) => return no_processes(io),
        }
    }
    if ctx.options.xtrace {
        trace(io, &assignments, &words);
    }
    let Some((name, args)) = words.split_first() else {
        for assignment in &assignments {
            assign(ctx, io, assignment)?;
        }
        let status = if ctx.substitutions == substitutions {
            0
        } else {
            ctx.status
        };
        return redirect::around(ctx, Some(&redirects), io, |_, _| Ok(status));
    };
    let mut hidden = Vec::new();
    for assignment in &assignments {
        let name = target_name(assignment);
        hidden.push((name.to_owned(), ctx.vars.get(name).cloned()));
        assign(ctx, io, assignment)?;
    }
    let status = redirect::around(ctx, Some(&redirects), io, |ctx, io| {
        dispatch(ctx, name, args, io)
    });
    for (name, value) in hidden.into_iter().rev() {
        match value {
            Some(value) => ctx.vars.assign(&name, value),
            None => ctx.vars.unset(&name),
        }
    }
    status
}

/// Runs the command `name`: a function, a builtin, or a command.
pub(in crate::shell) fn dispatch(ctx: &mut Ctx, name: &str, args: &[String], io: &Io) -> Status {
    if let Some(body) = ctx.functions.get(name).cloned() {
        return run_function(ctx, &body, args, io);
    }
    if let Some(status) = builtins::run(ctx, name, args, io) {
        return status;
    }
    let mut io = io.clone();
    crate::shell::commands::run(ctx, name, args, &mut io)
}

/// Runs a function's `body` with the positional parameters `args`.
pub(in crate::shell) fn run_function(
    ctx: &mut Ctx,
    body: &Rc<FunctionBody>,
    args: &[String],
    io: &Io,
) -> Status {
    ctx.budget.enter()?;
    let positional = std::mem::replace(&mut ctx.vars.positional, args.to_vec());
    ctx.vars.enter_function();
    ctx.functions_running += 1;
    let status = redirect::around(
        ctx,
        body.1.as_ref().map(|list| list.0.as_slice()),
        io,
        |ctx, io| super::compound::run(ctx, &body.0, io),
    );
    ctx.functions_running -= 1;
    ctx.vars.leave_function();
    ctx.vars.positional = positional;
    ctx.budget.leave();
    match status {
        Err(Interrupt::Return(status)) => {
            ctx.status = status;
            Ok(status)
        }
        other => other,
    }
}

/// The name an assignment sets.
fn target_name(assignment: &Assignment) -> &str {
    match &assignment.name {
        AssignmentName::VariableName(name) | AssignmentName::ArrayElementName(name, _) => name,
    }
}

/// Performs `assignment` in the shell.
pub(in crate::shell) fn assign(
    ctx: &mut Ctx,
    io: &Io,
    assignment: &Assignment,
) -> Result<(), Interrupt> {
    match (&assignment.name, &assignment.value) {
        (AssignmentName::VariableName(name), AssignmentValue::Scalar(word)) => {
            let mut value = Expander::new(ctx, io).string(&word.value)?;
            if assignment.append {
                value = format!("{}{value}", ctx.vars.scalar(name).unwrap_or_default());
            }
            ctx.vars.set(name, value);
        }
        (AssignmentName::ArrayElementName(name, index), AssignmentValue::Scalar(word)) => {
            let index = Expander::new(ctx, io).arithmetic(index)?;
            let mut value = Expander::new(ctx, io).string(&word.value)?;
            let Ok(index) = usize::try_from(index) else {
                io.stderr
                    .borrow_mut()
                    .push(format!("sh: {name}[{index}]: bad array subscript\n").as_bytes());
                return Err(Interrupt::Exit(1));
            };
            if assignment.append
                && let Some(Value::Array(items)) = ctx.vars.get(name)
                && let Some(Some(current)) = items.get(index)
            {
                value = format!("{current}{value}");
            }
            ctx.vars.set_element(name, index, value);
        }
        (name, AssignmentValue::Array(elements)) => {
            let name = match name {
                AssignmentName::VariableName(name) | AssignmentName::ArrayElementName(name, _) => {
                    name
                }
            };
            let mut items: Vec<Option<String>> = match (assignment.append, ctx.vars.get(name)) {
                (true, Some(Value::Array(items))) => items.clone(),
                (true, Some(Value::Scalar(text))) => vec![Some(text.clone())],
                _ => Vec::new(),
            };
            for (index, element) in elements {
                match index {
                    Some(index) => {
                        let index = Expander::new(ctx, io).arithmetic(&index.value)?;
                        let value = Expander::new(ctx, io).string(&element.value)?;
                        let index = usize::try_from(index).unwrap_or_default();
                        if items.len() <= index {
                            items.resize(index + 1, None);
                        }
                        items[index] = Some(value);
                    }
                    None => {
                        let fields = Expander::new(ctx, io).fields(&element.value)?;
                        items.extend(fields.into_iter().map(Some));
                    }
                }
            }
            ctx.vars.assign(name, Value::Array(items));
        }
    }
    Ok(())
}

/// A declaration builtin's `NAME=value` argument, its value expanded as one
/// string. An array value (`local a=(x y)`) is assigned here, local to the
/// running function for `local` and `declare`, and the builtin gets its
/// name alone.
fn declared(
    ctx: &mut Ctx,
    io: &Io,
    builtin: &str,
    assignment: &Assignment,
) -> Result<String, Interrupt> {
    let name = target_name(assignment);
    match (&assignment.name, &assignment.value) {
        (AssignmentName::VariableName(_), AssignmentValue::Scalar(value)) => {
            let value = Expander::new(ctx, io).string(&value.value)?;
            let operator = if assignment.append { "+=" } else { "=" };
            Ok(format!("{name}{operator}{value}"))
        }
        _ => {
            if matches!(builtin, "local" | "declare" | "typeset") && ctx.functions_running > 0 {
                ctx.vars.make_local(name);
            }
            assign(ctx, io, assignment)?;
            Ok(name.to_owned())
        }
    }
}

/// `set -x`: the command on stderr before it runs.
fn trace(io: &Io, assignments: &[&Assignment], words: &[String]) {
    let mut line = String::from("+");
    for assignment in assignments {
        if let AssignmentValue::Scalar(word) = &assignment.value {
            line.push_str(&format!(" {}={}", target_name(assignment), word.value));
        }
    }
    for word in words {
        line.push(' ');
        line.push_str(word);
    }
    line.push('\n');
    io.stderr.borrow_mut().push(line.as_bytes());
}

/// Refuses a process substitution (`<(cmd)`): status 1.
fn no_processes(io: &Io) -> Status {
    io.stderr
        .borrow_mut()
        .push(b"sh: process substitution: there are no processes to run one in\n");
    Ok(1)
}
