//! The builtins that change the shell itself, so only the shell can run
//! them: `set`, `shift`, `exit`, `return`, `break`, `continue`, `local`,
//! `declare`/`typeset`, `export`, `readonly`, `unset`, `read`, `eval`,
//! `source`/`.`, `trap`, `let`, `command`, `type`, `exec`, `builtin`, `wait`
//! and `:`, `which` (which names what the shell can run), and `xargs`, which
//! runs commands as only the shell can
//! ([`super::xargs`]). The sandbox's other commands are in
//! [`super::commands`].

use super::context::{Ctx, Interrupt, Status};
use super::exec;
use super::expand::Expander;
use super::io::Io;
use super::vars::{Value, is_name};

/// The names [`run`] serves.
pub(super) const NAMES: &[&str] = &[
    ":", ".", "break", "builtin", "command", "continue", "declare", "eval", "exec", "exit",
    "export", "let", "local", "read", "readonly", "return", "set", "shift", "source", "trap",
    "type", "typeset", "unset", "wait", "which", "xargs",
];

/// Runs the builtin `name`, or `None` if there is none by that name.
pub(super) fn run(ctx: &mut Ctx, name: &str, args: &[String], io: &Io) -> Option<Status> {
    let mut io = io.clone();
    let io = &mut io;
    Some(match name {
        ":" | "wait" => Ok(0),
        "set" => Ok(set(ctx, args, io)),
        "shift" => Ok(shift(ctx, args, io)),
        "exit" => count(ctx, "exit", args, io).and_then(|code| Err(Interrupt::Exit(code))),
        "return" => count(ctx, "return", args, io).and_then(|code| Err(Interrupt::Return(code))),
        "break" => levels(args, io, "break").and_then(|n| Err(Interrupt::Break(n))),
        "continue" => levels(args, io, "continue").and_then(|n| Err(Interrupt::Continue(n))),
        "local" => {
            if ctx.functions_running == 0 {
                io.errln("local: can only be used in a function");
                Ok(1)
            } else {
                Ok(declare(ctx, "local", args, io, true))
            }
        }
        "declare" | "typeset" => {
            let local = ctx.functions_running > 0 && !args.iter().any(|arg| arg == "-g");
            Ok(declare(ctx, name, args, io, local))
        }
        "export" | "readonly" => Ok(declare(ctx, name, args, io, false)),
        "unset" => Ok(unset(ctx, args, io)),
        "read" => Ok(read(ctx, args, io)),
        "eval" => eval(ctx, &args.join(" "), io),
        "source" | "." => source(ctx, name, args, io),
        "trap" => Ok(trap(ctx, args, io)),
        "let" => let_(ctx, args, io),
        "command" | "builtin" => command(ctx, name, args, io),
        "type" => Ok(type_(ctx, args, io)),
        "which" => Ok(which(ctx, args, io)),
        "xargs" => super::xargs::run(ctx, args, io),
        "exec" => match args.split_first() {
            None => Ok(0),
            Some((name, rest)) => {
                exec::dispatch(ctx, name, rest, io).and_then(|code| Err(Interrupt::Exit(code)))
            }
        },
        _ => return None,
    })
}

/// `exit N` and `return N`: the status (default `$?`), wrapped to 0-255.
fn count(ctx: &Ctx, name: &str, args: &[String], io: &mut Io) -> Result<i32, Interrupt> {
    match args.first() {
        None => Ok(ctx.status),
        Some(arg) => match arg.parse::<i64>() {
            Ok(code) => Ok(i32::try_from(code.rem_euclid(256)).unwrap_or_default()),
            Err(_) => {
                io.errln(format_args!("sh: {name}: {arg}: numeric argument required"));
                Ok(2)
            }
        },
    }
}

/// `break N` and `continue N`: how many loops, at least 1.
fn levels(args: &[String], io: &mut Io, name: &str) -> Result<u32, Interrupt> {
    match args.first() {
        None => Ok(1),
        Some(arg) => match arg.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => {
                io.errln(format_args!("sh: {name}: {arg}: loop count out of range"));
                Err(Interrupt::Exit(1))
            }
        },
    }
}

/// `set [-euxf] [-o NAME] [+...] [--] [ARG...]`.
fn set(ctx: &mut Ctx, args: &[String], io: &mut Io) -> i32 {
    let mut rest = args.iter().peekable();
    while let Some(arg) = rest.peek() {
        let (on, letters) = match arg.as_bytes().first() {
            Some(b'-') if arg.as_str() == "--" => {
                rest.next();
                ctx.vars.positional = rest.cloned().collect();
                return 0;
            }
            Some(b'-') if arg.len() > 1 => (true, arg[1..].to_owned()),
            Some(b'+') if arg.len() > 1 => (false, arg[1..].to_owned()),
            _ => break,
        };
        rest.next();
        for letter in letters.chars() {
            let option = match letter {
                'e' => "errexit",
                'u' => "nounset",
                'x' => "xtrace",
                'f' => "noglob",
                'o' => match rest.next() {
                    Some(name) => name.as_str(),
                    None => {
                        io.outln(format_args!("errexit\t{}", on_off(ctx.options.errexit)));
                        io.outln(format_args!("nounset\t{}", on_off(ctx.options.nounset)));
                        io.outln(format_args!("pipefail\t{}", on_off(ctx.options.pipefail)));
                        return 0;
                    }
                },
                // Options without meaning here (`-h`, `-B`, `-v`...) are kept quiet.
                _ => continue,
            };
            let flag = match option {
                "errexit" => &mut ctx.options.errexit,
                "nounset" => &mut ctx.options.nounset,
                "pipefail" => &mut ctx.options.pipefail,
                "noglob" => &mut ctx.options.noglob,
                "xtrace" => &mut ctx.options.xtrace,
                "posix" | "noclobber" | "verbose" | "hashall" | "braceexpand" | "monitor" => {
                    continue;
                }
                other => {
                    io.errln(format_args!("sh: set: {other}: invalid option name"));
                    return 2;
                }
            };
            *flag = on;
        }
    }
    let operands: Vec<String> = rest.cloned().collect();
    if !operands.is_empty() {
        ctx.vars.positional = operands;
    }
    0
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// `shift [N]`.
fn shift(ctx: &mut Ctx, args: &[String], io: &mut Io) -> i32 {
    let n = match args.first().map(|arg| arg.parse::<usize>()) {
        None => 1,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            io.errln(format_args!(
                "sh: shift: {}: numeric argument required",
                args[0]
            ));
            return 1;
        }
    };
    if n > ctx.vars.positional.len() {
        return 1;
    }
    ctx.vars.positional.drain(..n);
    0
}

/// `local`, `declare`, `typeset`, `export` and `readonly`: each `NAME` or
/// `NAME=value` set (and, for `local` and `declare` in a function, made
/// local to it). Options other than `-a` are accepted and ignored: there
/// are no child processes to export to, and no attribute changes a value.
fn declare(ctx: &mut Ctx, name: &str, args: &[String], io: &mut Io, local: bool) -> i32 {
    let mut status = 0;
    let mut array = false;
    let mut print = true;
    for arg in args {
        if let Some(flags) = arg.strip_prefix('-').filter(|flags| !flags.is_empty()) {
            array |= flags.contains('a');
            continue;
        }
        print = false;
        let (var, value, append) = match arg.split_once('=') {
            Some((var, value)) => match var.strip_suffix('+') {
                Some(var) => (var, Some(value), true),
                None => (var, Some(value), false),
            },
            None => (arg.as_str(), None, false),
        };
        if !is_name(var) {
            io.errln(format_args!("sh: {name}: `{arg}': not a valid identifier"));
            status = 1;
            continue;
        }
        if local {
            ctx.vars.make_local(var);
        }
        match value {
            Some(value) if append => {
                let current = ctx.vars.scalar(var).unwrap_or_default().to_owned();
                ctx.vars.set(var, format!("{current}{value}"));
            }
            Some(value) => ctx.vars.set(var, value.to_owned()),
            None if array && ctx.vars.get(var).is_none() => {
                ctx.vars.assign(var, Value::Array(Vec::new()));
            }
            None if local && ctx.vars.get(var).is_some() => ctx.vars.unset(var),
            None => {}
        }
    }
    if print && name == "export" {
        for (var, value) in ctx.vars.environment() {
            io.outln(format_args!("declare -x {var}=\"{value}\""));
        }
    }
    status
}

/// `unset [-v|-f] NAME...`.
fn unset(ctx: &mut Ctx, args: &[String], io: &mut Io) -> i32 {
    let mut functions = false;
    for arg in args {
        match arg.as_str() {
            "-f" => functions = true,
            "-v" => functions = false,
            name if functions => {
                ctx.functions.remove(name);
            }
            name if is_name(name) => ctx.vars.unset(name),
            name => {
                io.errln(format_args!("sh: unset: `{name}': not a valid identifier"));
                return 1;
            }
        }
    }
    0
}

/// `read [-r] [-a ARRAY] [-d DELIM] [-p PROMPT] [-s] [-t N] [-n N] [NAME...]`:
/// one record of stdin split on `IFS` into the names (the last takes the
/// rest); `REPLY` without names. Status 1 at the end of input.
fn read(ctx: &mut Ctx, args: &[String], io: &mut Io) -> i32 {
    let mut raw = false;
    let mut array = None;
    let mut delimiter = b'\n';
    let mut names = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "-r" => raw = true,
            "-s" => {}
            "-a" => array = rest.next().cloned(),
            "-d" => {
                delimiter = rest
                    .next()
                    .and_then(|text| text.bytes().next())
                    .unwrap_or(0);
            }
            "-p" | "-t" | "-n" | "-N" | "-u" => {
                rest.next();
            }
            "-rs" | "-sr" => raw = true,
            _ => names.push(arg.clone()),
        }
    }
    let Some((record, ended)) = io.stdin.record(delimiter) else {
        for name in &names {
            ctx.vars.set(name, String::new());
        }
        return 1;
    };
    let line = String::from_utf8_lossy(&record).into_owned();
    let ifs = ctx
        .vars
        .scalar("IFS")
        .map_or_else(|| " \t\n".to_owned(), str::to_owned);
    if let Some(array) = array {
        let items = split_ifs(&line, raw, &ifs, usize::MAX);
        ctx.vars
            .assign(&array, Value::Array(items.into_iter().map(Some).collect()));
    } else if names.is_empty() {
        let reply = if raw {
            line
        } else {
            super::escapes::literal(&line)
        };
        ctx.vars.set("REPLY", reply);
    } else {
        let mut fields = split_ifs(&line, raw, &ifs, names.len()).into_iter();
        for name in &names {
            ctx.vars.set(name, fields.next().unwrap_or_default());
        }
    }
    i32::from(!ended)
}

/// `line` split on `ifs` into at most `most` fields, the last keeping the
/// rest with its surrounding `IFS` whitespace trimmed. Unless `raw`, a
/// backslash makes the next character literal: kept, and never a separator.
fn split_ifs(line: &str, raw: bool, ifs: &str, most: usize) -> Vec<String> {
    let mut chars: Vec<(char, bool)> = Vec::with_capacity(line.len());
    let mut rest = line.chars();
    while let Some(c) = rest.next() {
        match c {
            '\\' if !raw => chars.extend(rest.next().map(|next| (next, true))),
            _ => chars.push((c, false)),
        }
    }
    let separator = |(c, literal): (char, bool)| !literal && ifs.contains(c);
    let white = |(c, literal): (char, bool)| separator((c, literal)) && c.is_ascii_whitespace();
    let text = |run: &[(char, bool)]| run.iter().map(|(c, _)| c).collect::<String>();
    let skip_white = |mut at: usize| {
        while at < chars.len() && white(chars[at]) {
            at += 1;
        }
        at
    };
    let mut fields = Vec::new();
    let mut at = skip_white(0);
    while at < chars.len() {
        if fields.len() + 1 == most {
            let mut end = chars.len();
            while end > at && white(chars[end - 1]) {
                end -= 1;
            }
            fields.push(text(&chars[at..end]));
            break;
        }
        let Some(found) = chars[at..].iter().position(|&c| separator(c)) else {
            fields.push(text(&chars[at..]));
            break;
        };
        let end = at + found;
        fields.push(text(&chars[at..end]));
        at = end + 1;
        if white(chars[end]) {
            at = skip_white(at);
            if at < chars.len() && separator(chars[at]) && !white(chars[at]) {
                at += 1;
            }
        }
        at = skip_white(at);
    }
    fields
}

/// `eval TEXT`: `text` parsed and run in this shell.
pub(super) fn eval(ctx: &mut Ctx, text: &str, io: &Io) -> Status {
    match super::parse::program(text) {
        Ok(program) => exec::program(ctx, &program, io),
        Err(message) => {
            io.stderr
                .borrow_mut()
                .push(format!("sh: eval: {message}\n").as_bytes());
            Ok(2)
        }
    }
}

/// `source FILE [ARG...]` / `. FILE`: the file run in this shell, with the
/// positional parameters `ARG...` while it runs, if any.
fn source(ctx: &mut Ctx, name: &str, args: &[String], io: &mut Io) -> Status {
    let Some((file, rest)) = args.split_first() else {
        io.errln(format_args!("sh: {name}: filename argument required"));
        return Ok(2);
    };
    let Some(data) = ctx.input(io, name, file) else {
        return Ok(1);
    };
    let text = String::from_utf8_lossy(&data);
    let program = match super::parse::program(&text) {
        Ok(program) => program,
        Err(message) => {
            io.errln(format_args!("sh: {file}: {message}"));
            return Ok(2);
        }
    };
    ctx.budget.enter()?;
    let positional =
        (!rest.is_empty()).then(|| std::mem::replace(&mut ctx.vars.positional, rest.to_vec()));
    let status = exec::program(ctx, &program, io);
    if let Some(positional) = positional {
        ctx.vars.positional = positional;
    }
    ctx.budget.leave();
    match status {
        Err(Interrupt::Return(code)) => Ok(code),
        other => other,
    }
}

/// `trap ACTION SIGNAL...`: an `EXIT` (or `0`) action runs when the shell
/// ends; there are no other signals to catch, so other traps are accepted
/// and never run. `trap - EXIT` clears it.
fn trap(ctx: &mut Ctx, args: &[String], io: &mut Io) -> i32 {
    match args {
        [] => {
            if let Some(action) = &ctx.exit_trap {
                io.outln(format_args!("trap -- '{action}' EXIT"));
            }
            0
        }
        [action, signals @ ..] => {
            if signals
                .iter()
                .any(|signal| matches!(signal.as_str(), "EXIT" | "0"))
            {
                ctx.exit_trap = (action != "-" && !action.is_empty()).then(|| action.clone());
            }
            0
        }
    }
}

/// `let EXPR...`: 0 if the last is non-zero.
fn let_(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Status {
    let mut last = 0;
    for arg in args {
        last = Expander::new(ctx, io).arithmetic(arg)?;
    }
    Ok(i32::from(last == 0))
}

/// `command [-v|-V] NAME [ARG...]` and `builtin NAME [ARG...]`: the
/// command run passing over functions, or with `-v` said where it is.
fn command(ctx: &mut Ctx, name: &str, args: &[String], io: &mut Io) -> Status {
    match args.split_first() {
        Some((flag, names)) if name == "command" && (flag == "-v" || flag == "-V") => {
            let mut status = 0;
            for name in names {
                match kind_of(ctx, name) {
                    Some(_) if flag == "-v" => io.outln(name),
                    Some(kind) => io.outln(format_args!("{name} is {kind}")),
                    None => status = 1,
                }
            }
            Ok(status)
        }
        Some((target, rest)) => {
            if let Some(status) = run(ctx, target, rest, io) {
                return status;
            }
            if name == "builtin" {
                io.errln(format_args!("sh: builtin: {target}: not a shell builtin"));
                return Ok(1);
            }
            super::commands::run(ctx, target, rest, io)
        }
        None => Ok(0),
    }
}

/// `type NAME...`.
fn type_(ctx: &mut Ctx, args: &[String], io: &mut Io) -> i32 {
    let mut status = 0;
    for name in args.iter().filter(|arg| !arg.starts_with('-')) {
        match kind_of(ctx, name) {
            Some(kind) => io.outln(format_args!("{name} is {kind}")),
            None => {
                io.errln(format_args!("sh: type: {name}: not found"));
                status = 1;
            }
        }
    }
    status
}

/// `which NAME...`: each name the shell can run, printed as it is (there
/// are no program files to point at); status 1 if any cannot run.
fn which(ctx: &mut Ctx, args: &[String], io: &mut Io) -> i32 {
    let mut status = 0;
    for name in args.iter().filter(|arg| !arg.starts_with('-')) {
        if kind_of(ctx, name).is_some() {
            io.outln(name);
        } else {
            status = 1;
        }
    }
    status
}

/// What `name` names, as `type` says it.
fn kind_of(ctx: &Ctx, name: &str) -> Option<&'static str> {
    if ctx.functions.contains_key(name) {
        Some("a function")
    } else if NAMES.contains(&name) || super::commands::exists(name) {
        Some("a shell builtin")
    } else if crate::interpreters::language_of(name).is_some() {
        Some("an interpreter the host may provide")
    } else {
        None
    }
}
