//! `jq`, by jaq (the engine behind the bundled `jq.query` tool): a filter
//! over JSON read from files or standard input, with jq's common options
//! and exit statuses (2 usage, 3 a filter that does not compile, 5 an
//! error while running, 1 or 4 under `-e`).

use std::io::{self, Read, Write};

use crate::plain;

use jaq_core::compile::Undefined;
use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, ValT, Vars, data};
use jaq_json::Val;
use jaq_json::write::{Pp, write};

/// What the command line asks for.
#[derive(Default)]
struct Options {
    raw_output: bool,
    join_output: bool,
    compact: bool,
    null_input: bool,
    slurp: bool,
    raw_input: bool,
    exit_status: bool,
    sort_keys: bool,
    indent: Option<String>,
    named: Vec<(String, Val)>,
}

/// Runs `jq ARGS...` and returns its exit status.
pub fn main(args: Vec<String>) -> i32 {
    let (options, filter, files) = match parse(args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("jq: {message}");
            eprintln!("Use jq --help for help with command-line options,");
            eprintln!("or see the jq manpage, or online docs  at https://jqlang.github.io/jq");
            return 2;
        }
    };
    let inputs = match read_inputs(&options, &files) {
        Ok(inputs) => inputs,
        Err(message) => {
            eprintln!("jq: error: {message}");
            return 2;
        }
    };
    run(&options, &filter, inputs)
}

fn parse(args: Vec<String>) -> Result<(Options, String, Vec<String>), String> {
    let mut options = Options::default();
    let mut positional = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut take = |what: &str| args.next().ok_or_else(|| format!("{arg} takes {what}"));
        match arg.as_str() {
            "--raw-output" => options.raw_output = true,
            "--join-output" => {
                options.raw_output = true;
                options.join_output = true;
            }
            "--compact-output" => options.compact = true,
            "--null-input" => options.null_input = true,
            "--slurp" => options.slurp = true,
            "--raw-input" => options.raw_input = true,
            "--exit-status" => options.exit_status = true,
            "--sort-keys" => options.sort_keys = true,
            "--tab" => options.indent = Some("\t".to_owned()),
            "--monochrome-output" | "--color-output" | "--ascii-output" => {}
            "--indent" => {
                let width: usize = take("a number")?
                    .parse()
                    .map_err(|_| "--indent takes a number from 0 to 7".to_owned())?;
                if width > 7 {
                    return Err("Cannot indent more than 7 characters".to_owned());
                }
                options.indent = Some(" ".repeat(width));
                if width == 0 {
                    options.compact = true;
                }
            }
            "--arg" => {
                let name = take("a name and a value")?;
                let value = take("a name and a value")?;
                options.named.push((name, Val::from(value)));
            }
            "--argjson" => {
                let name = take("a name and a JSON text")?;
                let text = take("a name and a JSON text")?;
                let value = jaq_json::read::parse_single(text.as_bytes())
                    .map_err(|_| format!("Invalid JSON text passed to --argjson: {text}"))?;
                options.named.push((name, value));
            }
            "--" => {
                positional.extend(args.by_ref());
                break;
            }
            _ if arg.starts_with("--") => return Err(format!("Unknown option: {arg}")),
            _ if arg.starts_with('-') && arg.len() > 1 => {
                for flag in arg[1..].chars() {
                    match flag {
                        'r' => options.raw_output = true,
                        'j' => {
                            options.raw_output = true;
                            options.join_output = true;
                        }
                        'c' => options.compact = true,
                        'n' => options.null_input = true,
                        's' => options.slurp = true,
                        'R' => options.raw_input = true,
                        'e' => options.exit_status = true,
                        'S' => options.sort_keys = true,
                        'M' | 'C' | 'a' => {}
                        other => return Err(format!("Unknown option: -{other}")),
                    }
                }
            }
            _ => positional.push(arg),
        }
    }
    let mut positional = positional.into_iter();
    let filter = positional
        .next()
        .ok_or("no filter given: jq [OPTION]... FILTER [FILE]...")?;
    Ok((options, filter, positional.collect()))
}

/// The values the filter runs on, in order.
fn read_inputs(options: &Options, files: &[String]) -> Result<Vec<Val>, String> {
    // Like jq, `-n` reads no input at all.
    if options.null_input {
        return Ok(vec![Val::Null]);
    }
    let mut texts = Vec::new();
    if files.is_empty() {
        let mut bytes = Vec::new();
        io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|error| format!("standard input: {error}"))?;
        texts.push(("<stdin>".to_owned(), bytes));
    } else {
        for file in files {
            let bytes = std::fs::read(file)
                .map_err(|error| format!("Could not open {file}: {}", plain(&error)))?;
            texts.push((file.clone(), bytes));
        }
    }
    if options.raw_input {
        let whole: Vec<u8> = texts.into_iter().flat_map(|(_, bytes)| bytes).collect();
        let text = String::from_utf8_lossy(&whole).into_owned();
        return Ok(if options.slurp {
            vec![Val::from(text)]
        } else {
            text.lines()
                .map(|line| Val::from(line.to_owned()))
                .collect()
        });
    }
    let mut values = Vec::new();
    for (name, bytes) in &texts {
        for value in jaq_json::read::parse_many(bytes) {
            values.push(value.map_err(|error| format!("{name}: {error} (while parsing)"))?);
        }
    }
    Ok(if options.slurp {
        vec![values.into_iter().collect()]
    } else {
        values
    })
}

fn run(options: &Options, code: &str, inputs: Vec<Val>) -> i32 {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let arena = Arena::default();
    let modules = match Loader::new(defs).load(&arena, File { code, path: () }) {
        Ok(modules) => modules,
        Err(errors) => {
            for (_, error) in errors {
                eprintln!("jq: error: {}", load_error(error));
            }
            eprintln!("jq: 1 compile error");
            return 3;
        }
    };
    let mut names: Vec<String> = vec!["$ENV".to_owned()];
    names.extend(options.named.iter().map(|(name, _)| format!("${name}")));
    let filter = match Compiler::default()
        .with_funs(funs)
        .with_global_vars(names.iter().map(String::as_str))
        .compile(modules)
    {
        Ok(filter) => filter,
        Err(errors) => {
            for (name, kind) in errors.into_iter().flat_map(|(_, errors)| errors) {
                match kind {
                    Undefined::Filter(arity) => {
                        eprintln!("jq: error: {name}/{arity} is not defined");
                    }
                    other => eprintln!("jq: error: {} {name} is not defined", other.as_str()),
                }
            }
            eprintln!("jq: 1 compile error");
            return 3;
        }
    };
    let environment =
        Val::from_map(std::env::vars().map(|(name, value)| (Val::from(name), Val::from(value))))
            .unwrap_or(Val::Null);
    let mut values = vec![environment];
    values.extend(options.named.iter().map(|(_, value)| value.clone()));
    let vars = Vars::new(values);

    let printer = Pp {
        indent: (!options.compact)
            .then(|| options.indent.clone().unwrap_or_else(|| "  ".to_owned())),
        sort_keys: options.sort_keys,
        sep_space: !options.compact,
        ..Pp::default()
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut last: Option<Val> = None;
    let mut status = 0;
    for input in inputs {
        let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, vars.clone());
        for item in filter.id.run((ctx, input)) {
            match item {
                Ok(value) => {
                    if let Err(error) = print(&mut out, options, &printer, &value) {
                        eprintln!("jq: error: writing output: {error}");
                        return 2;
                    }
                    last = Some(value);
                }
                Err(exception) => match exception.get_err() {
                    Ok(error) => {
                        let _ = out.flush();
                        eprintln!("jq: error (at <unknown>): {error}");
                        status = 5;
                    }
                    Err(exception) => match exception.get_halt() {
                        Ok(code) => {
                            let _ = out.flush();
                            return code;
                        }
                        Err(_) => {
                            eprintln!("jq: error: the filter stopped with an unhandled break");
                            status = 5;
                        }
                    },
                },
            }
        }
    }
    if let Err(error) = out.flush() {
        eprintln!("jq: error: writing output: {error}");
        return 2;
    }
    if status != 0 || !options.exit_status {
        return status;
    }
    match last {
        None => 4,
        Some(Val::Null | Val::Bool(false)) => 1,
        Some(_) => 0,
    }
}

fn print(out: &mut impl Write, options: &Options, printer: &Pp, value: &Val) -> io::Result<()> {
    match value {
        Val::TStr(text) | Val::BStr(text) if options.raw_output => out.write_all(text)?,
        _ => write(out, printer, 0, value)?,
    }
    if !options.join_output {
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn load_error(error: jaq_core::load::Error<&str>) -> String {
    use jaq_core::load::Error;
    match error {
        Error::Io(errors) => errors
            .into_iter()
            .map(|(path, message)| format!("cannot load module {path}: {message}"))
            .collect::<Vec<_>>()
            .join("; "),
        Error::Lex(errors) => errors
            .into_iter()
            .map(|(_, found)| syntax(found))
            .collect::<Vec<_>>()
            .join("; "),
        Error::Parse(errors) => errors
            .into_iter()
            .map(|(expect, found)| format!("{}, expected {}", syntax(found), expect.as_str()))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

fn syntax(found: &str) -> String {
    let near: String = found.chars().take(20).collect();
    if near.is_empty() {
        "syntax error, unexpected end of file".to_owned()
    } else {
        format!("syntax error, unexpected {near}")
    }
}
