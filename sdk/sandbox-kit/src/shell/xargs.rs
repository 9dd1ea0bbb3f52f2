//! `xargs`: a command run with arguments read from standard input, in this
//! shell (there are no processes to start), each run counted against the
//! line's limits. Items are separated by blanks and newlines, with quotes
//! and backslashes as GNU xargs reads them, or by NUL (`-0`) or a delimiter
//! (`-d`); `-n N` and `-L N` batch them, `-I STR` runs once per line with
//! `STR` replaced, `-r` runs nothing for empty input, `-t` prints each
//! command on stderr. Exit status as GNU's: 123 when a run failed, 124 when
//! one exited 255 (which stops the rest), 126 or 127 when the command cannot
//! run.

use super::context::{Ctx, Status};
use super::exec;
use super::io::{Input, Io};

/// How items are read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Split {
    /// Blanks and newlines, with quotes and backslashes.
    Blanks,
    /// Lines, for `-I` and `-L`.
    Lines,
    /// One byte.
    Byte(u8),
}

/// What the options ask.
#[derive(Debug)]
struct Options {
    split: Split,
    per_run: Option<usize>,
    replace: Option<String>,
    skip_empty: bool,
    trace: bool,
}

/// Runs `xargs ARGS`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Status {
    let (options, command) = match parse(args) {
        Ok(parsed) => parsed,
        Err(message) => {
            io.errln(format_args!("xargs: {message}"));
            return Ok(1);
        }
    };
    let input = String::from_utf8_lossy(&io.stdin()).into_owned();
    let items = match items(&input, &options.split) {
        Ok(items) => items,
        Err(message) => {
            io.errln(format_args!("xargs: {message}"));
            return Ok(1);
        }
    };
    let (name, fixed) = match command.split_first() {
        Some((name, fixed)) => (name.clone(), fixed.to_vec()),
        None => ("echo".to_owned(), Vec::new()),
    };
    let runs: Vec<Vec<String>> = if let Some(marker) = &options.replace {
        items
            .iter()
            .map(|item| fixed.iter().map(|arg| arg.replace(marker, item)).collect())
            .collect()
    } else if items.is_empty() {
        if options.skip_empty {
            Vec::new()
        } else {
            vec![fixed.clone()]
        }
    } else {
        let size = options.per_run.unwrap_or(items.len()).max(1);
        items
            .chunks(size)
            .map(|batch| fixed.iter().cloned().chain(batch.iter().cloned()).collect())
            .collect()
    };
    let mut failed = false;
    for args in runs {
        ctx.budget.step()?;
        if options.trace {
            io.errln(format_args!("{name} {}", args.join(" ")));
        }
        let child = Io {
            stdin: Input::new(Vec::new()),
            stdout: io.stdout.clone(),
            stderr: io.stderr.clone(),
        };
        match exec::dispatch(ctx, &name, &args, &child)? {
            0 => {}
            255 => {
                io.errln(format_args!(
                    "xargs: {name}: exited with status 255; aborting"
                ));
                return Ok(124);
            }
            code @ (126 | 127) => return Ok(code),
            _ => failed = true,
        }
    }
    Ok(if failed { 123 } else { 0 })
}

/// The options and the command with its fixed arguments.
fn parse(args: &[String]) -> Result<(Options, Vec<String>), String> {
    let mut options = Options {
        split: Split::Blanks,
        per_run: None,
        replace: None,
        skip_empty: false,
        trace: false,
    };
    let mut rest = args.iter();
    let count = |value: Option<&String>, flag: &str| -> Result<usize, String> {
        let value = value.ok_or_else(|| format!("option requires an argument -- '{flag}'"))?;
        value
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("invalid number \"{value}\" for -{flag} option"))
    };
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--" => break,
            "-0" | "--null" => options.split = Split::Byte(0),
            "-r" | "--no-run-if-empty" => options.skip_empty = true,
            "-t" | "--verbose" => options.trace = true,
            "-n" => options.per_run = Some(count(rest.next(), "n")?),
            "-L" => {
                options.per_run = Some(count(rest.next(), "L")?);
                options.split = Split::Lines;
            }
            "-P" => {
                rest.next();
            }
            "-d" => {
                let delimiter = rest.next().ok_or("option requires an argument -- 'd'")?;
                options.split = Split::Byte(delimiter_byte(delimiter)?);
            }
            "-I" | "-i" => {
                let marker = if arg == "-i" {
                    "{}".to_owned()
                } else {
                    rest.next()
                        .ok_or("option requires an argument -- 'I'")?
                        .clone()
                };
                options.replace = Some(marker);
                options.split = Split::Lines;
            }
            flag if flag.starts_with("-n") && flag.len() > 2 => {
                options.per_run = Some(count(Some(&flag[2..].to_owned()), "n")?);
            }
            flag if flag.starts_with("-I") && flag.len() > 2 => {
                options.replace = Some(flag[2..].to_owned());
                options.split = Split::Lines;
            }
            flag if flag.starts_with('-') && flag.len() > 1 => {
                return Err(format!("invalid option -- '{}'", &flag[1..]));
            }
            _ => {
                let mut command = vec![arg.clone()];
                command.extend(rest.cloned());
                return Ok((options, command));
            }
        }
    }
    Ok((options, rest.cloned().collect()))
}

/// The byte `-d` names: one character, or an escape such as `\n`.
fn delimiter_byte(text: &str) -> Result<u8, String> {
    match text {
        "\\n" => Ok(b'\n'),
        "\\t" => Ok(b'\t'),
        "\\0" => Ok(0),
        _ if text.len() == 1 => Ok(text.as_bytes()[0]),
        _ => Err(format!("invalid delimiter \"{text}\"")),
    }
}

/// The items of `input`.
fn items(input: &str, split: &Split) -> Result<Vec<String>, String> {
    match split {
        Split::Byte(byte) => {
            let separator = char::from(*byte);
            let mut items: Vec<String> = input.split(separator).map(str::to_owned).collect();
            if items.last().is_some_and(String::is_empty) {
                items.pop();
            }
            Ok(items)
        }
        Split::Lines => Ok(input
            .lines()
            .map(|line| line.trim_start().to_owned())
            .filter(|line| !line.is_empty())
            .collect()),
        Split::Blanks => blanks(input),
    }
}

/// Items separated by blanks and newlines, quotes and backslashes read as
/// GNU xargs reads them.
fn blanks(input: &str) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut started = false;
    let mut chars = input.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if started {
                    items.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            '\'' | '"' => {
                started = true;
                loop {
                    match chars.next() {
                        Some(end) if end == c => break,
                        Some('\n') | None => {
                            let kind = if c == '\'' { "single" } else { "double" };
                            return Err(format!(
                                "unmatched {kind} quote; by default quotes are special to xargs unless you use the -0 option"
                            ));
                        }
                        Some(other) => current.push(other),
                    }
                }
            }
            '\\' => {
                started = true;
                current.extend(chars.next());
            }
            other => {
                started = true;
                current.push(other);
            }
        }
    }
    if started {
        items.push(current);
    }
    Ok(items)
}
