//! `grep`: lines matching patterns in files or stdin. Flags: `-i`, `-v`, `-n`,
//! `-c`, `-l`, `-L`, `-r`/`-R` (searches `.` when no path is given, skipping
//! `.git` directories), `-E`, `-F`, `-G`, `-o`, `-w`, `-x`, `-H`, `-h`, `-q`,
//! `-s`, `-e PATTERN` (repeatable), their long names (`--ignore-case`...),
//! and in recursive searches `--include=GLOB`, `--exclude=GLOB` and
//! `--exclude-dir=GLOB` on file and directory names, and context lines
//! (`-A N`, `-B N`, `-C N` and their long names, groups parted by `--`);
//! `--color` is accepted and ignored. Without `-E`, patterns are POSIX basic expressions. Binary
//! files print `Binary file NAME matches`. Exit status 0 when a line was
//! selected, 1 when none was, 2 on error.

use super::dialect::basic_to_extended;
use super::{Outcome, options};
use crate::error::Error;
use crate::fs::{Kind, Prune};
use crate::path;
use crate::search::{is_binary, matching_lines};
use crate::shell::args::Args;
use crate::shell::context::{Ctx, report};
use crate::shell::expand::glob::Pattern;
use crate::shell::io::Io;
use regex::bytes::{Regex, RegexBuilder};
use std::ops::ControlFlow;

/// How matching lines are shown.
struct Show {
    invert: bool,
    numbers: bool,
    count: bool,
    files_with: bool,
    files_without: bool,
    only: bool,
    quiet: bool,
    names: bool,
    /// Lines shown before and after each selected line.
    context: (usize, usize),
}

/// Long options and the short flag each is.
const LONG: &[(&str, &str)] = &[
    ("--ignore-case", "-i"),
    ("--invert-match", "-v"),
    ("--line-number", "-n"),
    ("--count", "-c"),
    ("--files-with-matches", "-l"),
    ("--files-without-match", "-L"),
    ("--recursive", "-r"),
    ("--dereference-recursive", "-R"),
    ("--extended-regexp", "-E"),
    ("--fixed-strings", "-F"),
    ("--basic-regexp", "-G"),
    ("--only-matching", "-o"),
    ("--word-regexp", "-w"),
    ("--line-regexp", "-x"),
    ("--with-filename", "-H"),
    ("--no-filename", "-h"),
    ("--quiet", "-q"),
    ("--silent", "-q"),
    ("--no-messages", "-s"),
    ("--text", "-a"),
];

/// Which files a recursive search reads, by name.
#[derive(Default)]
struct Filter {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
    exclude_dir: Vec<Pattern>,
}

impl Filter {
    /// Whether the file at `relative` (below the searched directory) is read.
    fn reads(&self, relative: &str) -> bool {
        let name = path::file_name(relative);
        let (dirs, _) = relative.rsplit_once('/').unwrap_or(("", relative));
        (self.include.is_empty() || self.include.iter().any(|glob| glob.matches(name)))
            && !self.exclude.iter().any(|glob| glob.matches(name))
            && !dirs
                .split('/')
                .filter(|dir| !dir.is_empty())
                .any(|dir| self.exclude_dir.iter().any(|glob| glob.matches(dir)))
    }
}

/// `args` with the long options turned into short flags and the file
/// filters taken out, or a usage error.
fn long_options(args: &[String]) -> Result<(Vec<String>, Filter), String> {
    let mut filter = Filter::default();
    let mut short = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            short.push(arg.clone());
            short.extend(rest.cloned());
            break;
        }
        let (name, value) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let list = match name {
            "--include" => Some(&mut filter.include),
            "--exclude" => Some(&mut filter.exclude),
            "--exclude-dir" => Some(&mut filter.exclude_dir),
            _ => None,
        };
        if let Some(list) = list {
            let glob = match value {
                Some(value) => value,
                None => rest
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("option '{name}' requires an argument"))?,
            };
            let compiled = Pattern::new(&glob).ok_or_else(|| format!("invalid glob '{glob}'"))?;
            list.push(compiled);
            continue;
        }
        match (name, LONG.iter().find(|(long, _)| *long == name)) {
            (_, Some((_, flag))) => short.push((*flag).to_owned()),
            ("--color" | "--colour", _) => {}
            ("--regexp", _) => {
                short.push("-e".to_owned());
                short.extend(value.or_else(|| rest.next().cloned()));
            }
            ("--after-context" | "--before-context" | "--context", _) => {
                short.push(format!("-{}", name[2..3].to_ascii_uppercase()));
                short.extend(value.or_else(|| rest.next().cloned()));
            }
            _ => short.push(arg.clone()),
        }
    }
    Ok((short, filter))
}

/// `grep [OPTION...] PATTERN [FILE...]`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let (args, filter) = match long_options(args) {
        Ok(parsed) => parsed,
        Err(message) => {
            io.errln(format_args!("grep: {message}"));
            return Ok(2);
        }
    };
    let args = options(io, "grep", &args, "ivnclLrREFGowxHhqsIa", "emABC")?;
    let mut context = (0, 0);
    for (flag, slot) in [('C', None), ('B', Some(0)), ('A', Some(1))] {
        if let Some(value) = args.values(flag).last() {
            let lines = super::count(io, "grep", value)?;
            match slot {
                None => context = (lines, lines),
                Some(0) => context.0 = lines,
                Some(_) => context.1 = lines,
            }
        }
    }
    let mut operands = args.operands.clone();
    let mut patterns: Vec<String> = args.values('e').map(str::to_owned).collect();
    if patterns.is_empty() {
        if operands.is_empty() {
            io.errln("grep: no pattern given");
            return Ok(2);
        }
        patterns.push(operands.remove(0));
    }
    let regex = match compile(&args, &patterns) {
        Ok(regex) => regex,
        Err(message) => {
            io.errln(format_args!("grep: {message}"));
            return Ok(2);
        }
    };
    let recursive = args.has('r') || args.has('R');
    let implicit_start = operands.is_empty() && recursive;
    if implicit_start {
        operands.push(".".to_owned());
    }
    let show = Show {
        invert: args.has('v'),
        numbers: args.has('n'),
        count: args.has('c'),
        files_with: args.has('l'),
        files_without: args.has('L'),
        only: args.has('o'),
        quiet: args.has('q'),
        names: !args.has('h') && (args.has('H') || recursive || operands.len() > 1),
        context,
    };
    let mut selected = false;
    let mut errors = false;
    if operands.is_empty() {
        let stdin = io.stdin();
        selected = search(ctx, io, &regex, &show, "(standard input)", &stdin)?;
        return Ok(i32::from(!selected));
    }
    let mut buf = Vec::new();
    for operand in &operands {
        let files = ctx.resolve(operand).and_then(|target| {
            let meta = ctx
                .fs
                .meta(&target)?
                .ok_or_else(|| Error::not_found(&target))?;
            if !meta.is_dir() {
                return Ok(vec![(operand.clone(), None)]);
            }
            if !recursive {
                return Err(Error::Invalid("Is a directory".into()));
            }
            Ok(ctx
                .fs
                .walk(&target, Prune::GitDirs)?
                .into_iter()
                .filter(|node| node.meta.kind == Kind::File)
                .filter(|node| {
                    filter.reads(path::strip_dir(&node.path, &target).unwrap_or_default())
                })
                .map(|node| {
                    let relative = path::strip_dir(&node.path, &target).unwrap_or_default();
                    let shown = if implicit_start {
                        relative.to_owned()
                    } else {
                        format!("{}/{relative}", operand.trim_end_matches('/'))
                    };
                    (shown, Some(node))
                })
                .collect())
        });
        let files = match files {
            Ok(files) => files,
            Err(error) => {
                if !args.has('s') {
                    report(io, "grep", operand, &error);
                }
                errors = true;
                continue;
            }
        };
        for (shown, node) in files {
            ctx.tick()?;
            let data = match &node {
                Some(node) => ctx.fs.contents(node, &mut buf).map(<[u8]>::to_vec),
                None => ctx.resolve(&shown).and_then(|file| ctx.fs.read(&file)),
            };
            match data {
                Ok(data) => {
                    if search(ctx, io, &regex, &show, &shown, &data)? {
                        selected = true;
                        if show.quiet {
                            return Ok(0);
                        }
                    }
                }
                Err(error) => {
                    if !args.has('s') {
                        report(io, "grep", &shown, &error);
                    }
                    errors = true;
                }
            }
        }
    }
    Ok(if errors && !(show.quiet && selected) {
        2
    } else {
        i32::from(!selected)
    })
}

/// Compiles the patterns into one expression as the flags say.
fn compile(args: &Args, patterns: &[String]) -> Result<Regex, String> {
    let alternatives: Vec<String> = patterns
        .iter()
        .flat_map(|pattern| pattern.split('\n'))
        .map(|pattern| {
            let pattern = if args.has('F') {
                regex::escape(pattern)
            } else if args.has('E') {
                pattern.to_owned()
            } else {
                basic_to_extended(pattern)
            };
            if args.has('x') {
                format!("^(?:{pattern})$")
            } else if args.has('w') {
                format!(r"\b(?:{pattern})\b")
            } else {
                format!("(?:{pattern})")
            }
        })
        .collect();
    RegexBuilder::new(&alternatives.join("|"))
        .multi_line(true)
        .case_insensitive(args.has('i'))
        .build()
        .map_err(|error| {
            format!(
                "invalid regular expression {:?}: {error}",
                patterns.join("\n")
            )
        })
}

/// Searches one input shown as `name`; whether any line was selected.
fn search(
    ctx: &mut Ctx,
    io: &mut Io,
    regex: &Regex,
    show: &Show,
    name: &str,
    data: &[u8],
) -> Result<bool, super::Stop> {
    let binary = is_binary(data);
    let lines_only = !(show.quiet || show.count || show.files_with || show.files_without);
    if show.context != (0, 0) && lines_only && !binary && !show.only {
        return with_context(ctx, io, regex, show, name, data);
    }
    let mut selected = 0usize;
    let mut out = Vec::new();
    let quiet_output = show.quiet || show.count || show.files_with || show.files_without;
    let mut emit = |number: usize, line: &[u8]| {
        selected += 1;
        if quiet_output || binary {
            return if show.quiet || show.files_with || (binary && !show.count) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            };
        }
        let prefix = |out: &mut Vec<u8>| {
            if show.names {
                out.extend_from_slice(name.as_bytes());
                out.push(b':');
            }
            if show.numbers {
                out.extend_from_slice(number.to_string().as_bytes());
                out.push(b':');
            }
        };
        if show.only && !show.invert {
            for found in regex.find_iter(line).filter(|found| !found.is_empty()) {
                prefix(&mut out);
                out.extend_from_slice(found.as_bytes());
                out.push(b'\n');
            }
        } else {
            prefix(&mut out);
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        ControlFlow::Continue(())
    };
    if show.invert {
        for (index, line) in super::lines(data).enumerate() {
            ctx.tick()?;
            if !regex.is_match(line) && emit(index + 1, line).is_break() {
                break;
            }
        }
    } else {
        matching_lines(regex, data, emit);
    }
    io.out(&out);
    if binary && selected > 0 && !show.quiet && !show.count && !show.files_with {
        io.outln(format_args!("Binary file {name} matches"));
    }
    if show.count {
        if show.names {
            io.outln(format_args!("{name}:{selected}"));
        } else {
            io.outln(selected);
        }
    }
    if show.files_with && selected > 0 {
        io.outln(name);
    }
    if show.files_without && selected == 0 {
        io.outln(name);
    }
    Ok(selected > 0)
}

/// Searches one input printing `show.context` lines around each selected
/// one, as GNU grep does: context lines marked with `-`, selected ones with
/// `:`, and `--` between groups that do not touch.
fn with_context(
    ctx: &mut Ctx,
    io: &mut Io,
    regex: &Regex,
    show: &Show,
    name: &str,
    data: &[u8],
) -> Result<bool, super::Stop> {
    let (before, after) = show.context;
    let lines: Vec<&[u8]> = super::lines(data).collect();
    let mut out = Vec::new();
    let mut printed_up_to: Option<usize> = None;
    let mut after_until = 0usize;
    let mut selected = false;
    let line_out = |out: &mut Vec<u8>, index: usize, mark: u8| {
        if show.names {
            out.extend_from_slice(name.as_bytes());
            out.push(mark);
        }
        if show.numbers {
            out.extend_from_slice((index + 1).to_string().as_bytes());
            out.push(mark);
        }
        out.extend_from_slice(lines[index]);
        out.push(b'\n');
    };
    for (index, line) in lines.iter().enumerate() {
        ctx.tick()?;
        if regex.is_match(line) != show.invert {
            selected = true;
            let first = index.saturating_sub(before);
            let start = printed_up_to.map_or(first, |last| first.max(last + 1));
            if printed_up_to.is_some_and(|last| start > last + 1) {
                out.extend_from_slice(b"--\n");
            }
            for shown in start..index {
                line_out(&mut out, shown, b'-');
            }
            line_out(&mut out, index, b':');
            printed_up_to = Some(index);
            after_until = index + after;
        } else if printed_up_to.is_some_and(|last| last + 1 == index) && index <= after_until {
            line_out(&mut out, index, b'-');
            printed_up_to = Some(index);
        }
    }
    io.out(&out);
    Ok(selected)
}
