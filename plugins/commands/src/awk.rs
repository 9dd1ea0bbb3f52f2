//! `awk`, by awk-rs: POSIX awk with gawk's common extensions. This module
//! reads awk's command line (`-F`, `-v`, `-f`, operands) and hands the
//! program and its inputs to the interpreter. Inputs open when the program
//! reaches them, so `BEGIN` prints before a missing file is reported.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};

use awk_rs::{Interpreter, Lexer, Parser};

/// awk's variables that live in the interpreter itself rather than its
/// variable table: a `-v` assignment to one becomes a `BEGIN` assignment
/// ahead of the program's own.
const SPECIAL_VARIABLES: &[&str] = &["FS", "OFS", "ORS", "RS", "SUBSEP", "OFMT", "CONVFMT"];

/// Runs `awk ARGS...` and returns its exit status.
pub fn main(args: Vec<String>) -> i32 {
    match run(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("awk: {message}");
            2
        }
    }
}

/// What awk's command line asks for.
#[derive(Default)]
struct Invocation {
    separator: Option<String>,
    assignments: Vec<(String, String)>,
    program: Option<String>,
    operands: Vec<String>,
}

fn parse(args: Vec<String>) -> Result<Invocation, String> {
    let mut invocation = Invocation::default();
    let mut sources: Vec<String> = Vec::new();
    let mut args = args.into_iter();
    let mut rest = Vec::new();
    while let Some(arg) = args.next() {
        let mut value_of = |option: &str, attached: &str| -> Result<String, String> {
            if attached.is_empty() {
                args.next()
                    .ok_or_else(|| format!("option {option} needs an argument"))
            } else {
                Ok(attached.to_owned())
            }
        };
        if arg == "--" {
            rest.extend(args.by_ref());
            break;
        } else if let Some(fs) = arg.strip_prefix("-F") {
            invocation.separator = Some(unescape(&value_of("-F", fs)?));
        } else if let Some(assignment) = arg.strip_prefix("-v") {
            let assignment = value_of("-v", assignment)?;
            let (name, value) = assignment
                .split_once('=')
                .filter(|(name, _)| is_name(name))
                .ok_or_else(|| format!("-v {assignment}: not a NAME=value assignment"))?;
            invocation
                .assignments
                .push((name.to_owned(), unescape(value)));
        } else if let Some(path) = arg.strip_prefix("-f") {
            let path = value_of("-f", path)?;
            let source = std::fs::read_to_string(&path)
                .map_err(|error| format!("cannot read program file {path}: {error}"))?;
            sources.push(source);
        } else if arg.starts_with('-') && arg != "-" {
            return Err(format!("unknown option {arg}; awk takes -F, -v, -f and --"));
        } else {
            rest.push(arg);
            rest.extend(args.by_ref());
            break;
        }
    }
    let mut rest = rest.into_iter();
    invocation.program = if sources.is_empty() {
        Some(
            rest.next()
                .ok_or("no program given: awk 'PROGRAM' [FILE...]")?,
        )
    } else {
        Some(sources.join("\n"))
    };
    invocation.operands = rest.collect();
    Ok(invocation)
}

fn run(args: Vec<String>) -> Result<i32, String> {
    let invocation = parse(args)?;
    let mut source = String::new();
    let mut variables = Vec::new();
    for (name, value) in &invocation.assignments {
        if SPECIAL_VARIABLES.contains(&name.as_str()) {
            source.push_str(&format!("BEGIN {{ {name} = {} }}\n", literal(value)));
        } else {
            variables.push((name.clone(), value.clone()));
        }
    }
    source.push_str(invocation.program.as_deref().unwrap_or_default());

    let tokens = Lexer::new(&source)
        .tokenize()
        .map_err(|error| format!("syntax error: {error}"))?;
    let program = Parser::new(tokens)
        .parse()
        .map_err(|error| format!("syntax error: {error}"))?;
    let mut interpreter = Interpreter::new(&program);
    if let Some(separator) = &invocation.separator {
        interpreter.set_fs(separator);
    }
    for (name, value) in &variables {
        interpreter.set_variable(name, value);
    }

    // Operands are files, `-` for standard input, or NAME=value assignments,
    // which apply before the program runs.
    let mut files = Vec::new();
    for operand in &invocation.operands {
        match operand.split_once('=') {
            Some((name, value)) if is_name(name) => {
                interpreter.set_variable(name, &unescape(value));
            }
            _ => files.push(operand.clone()),
        }
    }
    let mut argv = vec!["awk".to_owned()];
    argv.extend(invocation.operands.iter().cloned());
    interpreter.set_args(argv);

    let inputs: Vec<BufReader<Input>> = if files.is_empty() {
        interpreter.set_filenames(vec![String::new()]);
        vec![BufReader::new(Input::Stdin)]
    } else {
        interpreter.set_filenames(files.clone());
        files
            .iter()
            .map(|name| BufReader::new(Input::named(name)))
            .collect()
    };
    let stdout = io::stdout();
    let mut output = io::BufWriter::new(stdout.lock());
    let result = interpreter.run(inputs, &mut output);
    let flushed = output.flush();
    match result {
        Ok(code) => {
            flushed.map_err(|error| format!("write error: {error}"))?;
            Ok(code)
        }
        Err(error) => Err(error.to_string()),
    }
}

/// One input of the program, opened when first read.
enum Input {
    Stdin,
    Unopened(String),
    Open(File),
}

impl Input {
    fn named(name: &str) -> Self {
        if name == "-" {
            Self::Stdin
        } else {
            Self::Unopened(name.to_owned())
        }
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Self::Unopened(name) = self {
            let file = File::open(&*name).map_err(|error| {
                io::Error::new(error.kind(), format!("cannot open {name}: {error}"))
            })?;
            *self = Self::Open(file);
        }
        match self {
            Self::Stdin => io::stdin().lock().read(buf),
            Self::Open(file) => file.read(buf),
            Self::Unopened(_) => unreachable!("opened above"),
        }
    }
}

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An awk string literal holding `value` exactly.
fn literal(value: &str) -> String {
    let mut text = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => text.push_str("\\\""),
            '\\' => text.push_str("\\\\"),
            '\n' => text.push_str("\\n"),
            c => text.push(c),
        }
    }
    text.push('"');
    text
}

/// The value of a command-line assignment or separator, whose escapes
/// (`\t`, `\n`, `\\`, `\/`, octal) awk reads as in a string literal.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\x08'),
            Some('f') => out.push('\x0c'),
            Some('v') => out.push('\x0b'),
            Some('a') => out.push('\x07'),
            Some(digit @ '0'..='7') => {
                let mut code = digit.to_digit(8).unwrap_or_default();
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(next) => {
                            code = code * 8 + next;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}
