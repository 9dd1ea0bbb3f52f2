//! `sed`: a stream editor for the common scripts. Commands: `s/RE/REP/FLAGS`
//! (any delimiter; flags `g`, `p`, `i`/`I` and a number N for the N-th match;
//! `&`, `\1`..`\9`, `\n` and `\t` in REP), `d`, `p`, `q` and `=`, each with an
//! optional address (`N`, `$`, `/RE/`) or range (`A,B`) and `!` to negate.
//! Commands are separated by `;` or line breaks; `-e` may repeat. Options:
//! `-n`, `-E`/`-r` (extended expressions; basic otherwise), `-i` (edit files
//! in place). Other commands (`a`, `i`, `c`, `y`, `{`, ...) are refused.

use super::dialect::basic_to_extended;
use super::{Outcome, inputs, options};
use crate::shell::context::{Ctx, report};
use crate::shell::io::Io;
use regex::bytes::{Regex, RegexBuilder};

/// One address.
enum Addr {
    Line(usize),
    Last,
    Match(Regex),
}

/// Which lines a command applies to.
enum Address {
    Every,
    One(Addr),
    Range(Addr, Addr),
}

/// One piece of a replacement.
enum Part {
    Text(Vec<u8>),
    Whole,
    Group(usize),
}

/// An `s` command.
struct Substitution {
    regex: Regex,
    replacement: Vec<Part>,
    global: bool,
    occurrence: usize,
    print: bool,
}

/// What a command does.
enum Action {
    Substitute(Substitution),
    Delete,
    Print,
    Quit,
    LineNumber,
}

/// One command with its address.
struct Command {
    address: Address,
    negated: bool,
    action: Action,
}

/// `sed [-nEri] [-e SCRIPT]... [SCRIPT] [FILE...]`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "sed", args, "nErisz", "e")?;
    let mut operands = args.operands.clone();
    let mut scripts: Vec<String> = args.values('e').map(str::to_owned).collect();
    if scripts.is_empty() {
        if operands.is_empty() {
            io.errln("sed: no script given");
            return Ok(1);
        }
        scripts.push(operands.remove(0));
    }
    let extended = args.has('E') || args.has('r');
    let commands = match parse(&scripts.join("\n"), extended) {
        Ok(commands) => commands,
        Err(message) => {
            io.errln(format_args!("sed: -e expression #1: {message}"));
            return Ok(1);
        }
    };
    let quiet = args.has('n');
    if args.has('i') {
        if operands.is_empty() {
            io.errln("sed: no input files");
            return Ok(1);
        }
        let mut status = 0;
        for operand in &operands {
            let Some(data) = ctx.input(io, "sed", operand) else {
                status = 2;
                continue;
            };
            let edited = execute(ctx, &commands, quiet, &data)?;
            let written = ctx
                .resolve(operand)
                .and_then(|file| ctx.fs.write(&file, &edited));
            if let Err(error) = written {
                report(io, "sed", operand, &error);
                status = 4;
            }
        }
        return Ok(status);
    }
    let (read, all_read) = inputs(ctx, io, "sed", &operands);
    let mut data = Vec::new();
    for (_, input) in read {
        if !data.is_empty() && !data.ends_with(b"\n") {
            data.push(b'\n');
        }
        data.extend(input);
    }
    let edited = execute(ctx, &commands, quiet, &data)?;
    io.out(&edited);
    Ok(if all_read { 0 } else { 2 })
}

/// Runs `commands` over the lines of `data`; the output.
fn execute(
    ctx: &mut Ctx,
    commands: &[Command],
    quiet: bool,
    data: &[u8],
) -> Result<Vec<u8>, super::Stop> {
    let ends_in_newline = data.ends_with(b"\n");
    let lines: Vec<&[u8]> = super::lines(data).collect();
    let mut active = vec![false; commands.len()];
    let mut out = Vec::new();
    let count = lines.len();
    for (index, line) in lines.into_iter().enumerate() {
        ctx.tick()?;
        let number = index + 1;
        let last = number == count;
        let newline = !last || ends_in_newline;
        let mut space = line.to_vec();
        let mut deleted = false;
        let mut quit = false;
        for (command, active) in commands.iter().zip(active.iter_mut()) {
            if command.applies(active, number, last, &space) == command.negated {
                continue;
            }
            match &command.action {
                Action::Substitute(substitution) => {
                    if let Some(replaced) = substitution.apply(&space) {
                        space = replaced;
                        if substitution.print {
                            emit(&mut out, &space, true);
                        }
                    }
                }
                Action::Delete => {
                    deleted = true;
                    break;
                }
                Action::Print => emit(&mut out, &space, true),
                Action::LineNumber => emit(&mut out, number.to_string().as_bytes(), true),
                Action::Quit => {
                    quit = true;
                    break;
                }
            }
        }
        if !deleted && !quiet {
            emit(&mut out, &space, newline);
        }
        if quit {
            break;
        }
    }
    Ok(out)
}

/// Appends a line to the output.
fn emit(out: &mut Vec<u8>, line: &[u8], newline: bool) {
    out.extend_from_slice(line);
    if newline {
        out.push(b'\n');
    }
}

impl Addr {
    fn matches(&self, number: usize, last: bool, space: &[u8]) -> bool {
        match self {
            Addr::Line(line) => *line == number,
            Addr::Last => last,
            Addr::Match(regex) => regex.is_match(space),
        }
    }
}

impl Command {
    /// Whether the address selects this line, updating a range's state.
    fn applies(&self, active: &mut bool, number: usize, last: bool, space: &[u8]) -> bool {
        match &self.address {
            Address::Every => true,
            Address::One(addr) => addr.matches(number, last, space),
            Address::Range(start, end) => {
                if *active {
                    let ended = match end {
                        Addr::Line(line) => number >= *line,
                        other => other.matches(number, last, space),
                    };
                    *active = !ended;
                    true
                } else if start.matches(number, last, space) {
                    *active = match end {
                        Addr::Line(line) => *line > number,
                        Addr::Last => !last,
                        Addr::Match(_) => true,
                    };
                    true
                } else {
                    false
                }
            }
        }
    }
}

impl Substitution {
    /// `space` with the substitution made, or `None` if nothing matched.
    fn apply(&self, space: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut copied = 0;
        let mut changed = false;
        for (index, captures) in self.regex.captures_iter(space).enumerate() {
            if index + 1 < self.occurrence {
                continue;
            }
            let Some(whole) = captures.get(0) else {
                continue;
            };
            out.extend_from_slice(&space[copied..whole.start()]);
            for part in &self.replacement {
                match part {
                    Part::Text(text) => out.extend_from_slice(text),
                    Part::Whole => out.extend_from_slice(whole.as_bytes()),
                    Part::Group(group) => {
                        out.extend_from_slice(
                            captures.get(*group).map_or(&[][..], |m| m.as_bytes()),
                        );
                    }
                }
            }
            copied = whole.end();
            changed = true;
            if !self.global {
                break;
            }
        }
        changed.then(|| {
            out.extend_from_slice(&space[copied..]);
            out
        })
    }
}

/// A script being parsed.
struct Parser<'s> {
    chars: std::iter::Peekable<std::str::Chars<'s>>,
    extended: bool,
}

/// Parses a whole script.
fn parse(script: &str, extended: bool) -> Result<Vec<Command>, String> {
    let mut parser = Parser {
        chars: script.chars().peekable(),
        extended,
    };
    let mut commands = Vec::new();
    loop {
        while parser
            .chars
            .peek()
            .is_some_and(|c| c.is_whitespace() || *c == ';')
        {
            parser.chars.next();
        }
        if parser.chars.peek().is_none() {
            return Ok(commands);
        }
        commands.push(parser.command()?);
    }
}

impl Parser<'_> {
    fn command(&mut self) -> Result<Command, String> {
        let address = match self.address()? {
            None => Address::Every,
            Some(start) => {
                if self.chars.peek() == Some(&',') {
                    self.chars.next();
                    let end = self.address()?.ok_or("unexpected `,'")?;
                    Address::Range(start, end)
                } else {
                    Address::One(start)
                }
            }
        };
        self.skip_blanks();
        let negated = self.chars.peek() == Some(&'!');
        if negated {
            self.chars.next();
            self.skip_blanks();
        }
        let action = match self.chars.next() {
            Some('s') => Action::Substitute(self.substitution()?),
            Some('d') => Action::Delete,
            Some('p') => Action::Print,
            Some('q') => Action::Quit,
            Some('=') => Action::LineNumber,
            Some(other) => return Err(format!("the command `{other}' is not supported")),
            None => return Err("missing command".into()),
        };
        self.skip_blanks();
        match self.chars.peek() {
            None | Some(';' | '\n') => Ok(Command {
                address,
                negated,
                action,
            }),
            Some(other) => Err(format!("extra characters after command: `{other}'")),
        }
    }

    fn skip_blanks(&mut self) {
        while self.chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            self.chars.next();
        }
    }

    fn address(&mut self) -> Result<Option<Addr>, String> {
        match self.chars.peek() {
            Some('$') => {
                self.chars.next();
                Ok(Some(Addr::Last))
            }
            Some(c) if c.is_ascii_digit() => {
                let mut digits = String::new();
                while let Some(c) = self.chars.peek().filter(|c| c.is_ascii_digit()) {
                    digits.push(*c);
                    self.chars.next();
                }
                let line = digits
                    .parse()
                    .map_err(|_| format!("invalid line number {digits}"))?;
                Ok(Some(Addr::Line(line)))
            }
            Some('/') | Some('\\') => {
                let delimiter = match self.chars.next() {
                    Some('\\') => self.chars.next().ok_or("unterminated address regex")?,
                    _ => '/',
                };
                let pattern = self.until(delimiter, "unterminated address regex")?;
                Ok(Some(Addr::Match(self.regex(&pattern, false)?)))
            }
            _ => Ok(None),
        }
    }

    /// The text up to an unescaped `delimiter`, with `\delimiter` unescaped
    /// and other escapes kept.
    fn until(&mut self, delimiter: char, unterminated: &str) -> Result<String, String> {
        let mut text = String::new();
        loop {
            match self.chars.next() {
                None => return Err(unterminated.to_owned()),
                Some(c) if c == delimiter => return Ok(text),
                Some('\\') => match self.chars.next() {
                    Some(c) if c == delimiter => text.push(c),
                    Some(c) => {
                        text.push('\\');
                        text.push(c);
                    }
                    None => return Err(unterminated.to_owned()),
                },
                Some(c) => text.push(c),
            }
        }
    }

    fn regex(&self, pattern: &str, case_insensitive: bool) -> Result<Regex, String> {
        let pattern = if self.extended {
            pattern.to_owned()
        } else {
            basic_to_extended(pattern)
        };
        RegexBuilder::new(&pattern)
            .case_insensitive(case_insensitive)
            .build()
            .map_err(|error| format!("invalid regular expression {pattern:?}: {error}"))
    }

    fn substitution(&mut self) -> Result<Substitution, String> {
        let delimiter = self
            .chars
            .next()
            .filter(|c| *c != '\n' && *c != '\\')
            .ok_or("unterminated `s' command")?;
        let pattern = self.until(delimiter, "unterminated `s' command")?;
        let replacement = parse_replacement(&self.until(delimiter, "unterminated `s' command")?);
        let mut global = false;
        let mut print = false;
        let mut case_insensitive = false;
        let mut occurrence = String::new();
        while let Some(&flag) = self.chars.peek() {
            match flag {
                'g' => global = true,
                'p' => print = true,
                'i' | 'I' => case_insensitive = true,
                '0'..='9' => occurrence.push(flag),
                ';' | '\n' | ' ' | '\t' => break,
                other => return Err(format!("unknown option to `s': `{other}'")),
            }
            self.chars.next();
        }
        let occurrence = if occurrence.is_empty() {
            1
        } else {
            occurrence
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .ok_or("number option to `s' command may not be zero")?
        };
        Ok(Substitution {
            regex: self.regex(&pattern, case_insensitive)?,
            replacement,
            global,
            occurrence,
            print,
        })
    }
}

/// Parses a replacement: `&` is the match, `\N` a group, `\n` and `\t`
/// control characters, and any other escaped character itself.
fn parse_replacement(text: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = text.chars();
    let flush = |literal: &mut String, parts: &mut Vec<Part>| {
        if !literal.is_empty() {
            parts.push(Part::Text(std::mem::take(literal).into_bytes()));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '&' => {
                flush(&mut literal, &mut parts);
                parts.push(Part::Whole);
            }
            '\\' => match chars.next() {
                Some(digit @ '0'..='9') => {
                    flush(&mut literal, &mut parts);
                    let group = digit.to_digit(10).map_or(0, |d| d as usize);
                    parts.push(if group == 0 {
                        Part::Whole
                    } else {
                        Part::Group(group)
                    });
                }
                Some('n') => literal.push('\n'),
                Some('t') => literal.push('\t'),
                Some(other) => literal.push(other),
                None => literal.push('\\'),
            },
            _ => literal.push(c),
        }
    }
    flush(&mut literal, &mut parts);
    parts
}
