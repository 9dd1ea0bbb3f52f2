//! `find`: paths beneath starting points (default `.`), printed like GNU find
//! as the start joined with the path below it (`./a/b` for `find .`), in walk
//! order (sorted by name). The expression is GNU find's: tests `-name GLOB`,
//! `-iname GLOB`, `-path GLOB`, `-type f|d|l`, `-empty`, `-true`, `-false`;
//! operators `!`/`-not`, `-a`/`-and` (or nothing), `-o`/`-or` and
//! parentheses; actions `-print`, `-exec CMD {} ;` (once per path), `-exec
//! CMD {} +` (once, with every path), and `-delete` (files and empty
//! directories); without an action, what matches is printed. `-maxdepth N`
//! and `-mindepth N` bound the depth. Commands of `-exec` run in the shell,
//! like any command of the line.

use super::Outcome;
use crate::error::Error;
use crate::fs::{Kind, Meta, Node, Prune};
use crate::path;
use crate::pattern::matcher;
use crate::shell::context::{Ctx, Interrupt, report};
use crate::shell::io::{Input, Io};
use globset::GlobMatcher;

/// The expression.
enum Expr {
    /// The file name matches.
    Name(GlobMatcher),
    /// The path as printed matches (`*` crosses `/` here, as in GNU find).
    Path(GlobMatcher),
    /// The kind is this.
    Type(Kind),
    /// An empty file or directory.
    Empty,
    /// Always this.
    Constant(bool),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// Print the path.
    Print,
    /// Run a command with `{}` replaced by the path; true when it succeeds.
    Exec(Vec<String>),
    /// Run a command once at the end, `{}` replaced by every path.
    ExecAll(usize),
    /// Remove the path.
    Delete,
}

/// The parsed command line's expression and options.
struct Query {
    expr: Expr,
    min_depth: usize,
    max_depth: Option<usize>,
    /// The commands of `-exec ... +`, each with the paths it collects.
    batches: Vec<(Vec<String>, Vec<String>)>,
}

/// `find [PATH...] [EXPRESSION]`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let split = args
        .iter()
        .position(|arg| arg.starts_with('-') || arg == "!" || arg == "(")
        .unwrap_or(args.len());
    let (starts, expression) = args.split_at(split);
    let mut query = match parse(expression) {
        Ok(query) => query,
        Err(message) => {
            io.errln(format_args!("find: {message}"));
            return Ok(1);
        }
    };
    let default_start = [".".to_owned()];
    let starts = if starts.is_empty() {
        &default_start[..]
    } else {
        starts
    };
    let mut status = 0;
    for start in starts {
        let found = ctx.resolve(start).and_then(|root| {
            let meta = ctx.fs.meta(&root)?.ok_or_else(|| Error::not_found(&root))?;
            let mut nodes = vec![Node::base(root.clone(), meta)];
            if meta.is_dir() && query.max_depth != Some(0) {
                nodes.extend(ctx.fs.walk(&root, Prune::Nothing)?);
            }
            Ok((root, nodes))
        });
        let (root, nodes) = match found {
            Ok(found) => found,
            Err(error) => {
                report(io, "find", &format!("'{start}'"), &error);
                status = 1;
                continue;
            }
        };
        for node in nodes {
            ctx.tick()?;
            let relative = path::strip_dir(&node.path, &root).unwrap_or_default();
            let depth = if relative.is_empty() {
                0
            } else {
                relative.split('/').count()
            };
            if depth < query.min_depth || query.max_depth.is_some_and(|max| depth > max) {
                continue;
            }
            let shown = if relative.is_empty() {
                start.clone()
            } else {
                format!("{}/{relative}", start.trim_end_matches('/'))
            };
            let mut visit = Visit {
                shown: &shown,
                path: &node.path,
                meta: node.meta,
                failed: false,
            };
            evaluate(ctx, io, &query.expr, &mut visit, &mut query.batches)?;
            if visit.failed {
                status = 1;
            }
        }
    }
    for (command, paths) in std::mem::take(&mut query.batches) {
        if paths.is_empty() {
            continue;
        }
        let mut words = Vec::new();
        for word in command {
            if word == "{}" {
                words.extend(paths.iter().cloned());
            } else {
                words.push(word);
            }
        }
        if run_command(ctx, io, &words)? != 0 {
            status = 1;
        }
    }
    Ok(status)
}

/// The path being judged.
struct Visit<'a> {
    shown: &'a str,
    path: &'a str,
    meta: Meta,
    /// Whether an action on it failed.
    failed: bool,
}

fn evaluate(
    ctx: &mut Ctx,
    io: &mut Io,
    expr: &Expr,
    visit: &mut Visit,
    batches: &mut [(Vec<String>, Vec<String>)],
) -> Result<bool, Interrupt> {
    Ok(match expr {
        Expr::Name(glob) => glob.is_match(path::file_name(visit.path)),
        Expr::Path(glob) => glob.is_match(visit.shown),
        Expr::Type(kind) => visit.meta.kind == *kind,
        Expr::Empty => match visit.meta.kind {
            Kind::File => visit.meta.size == 0,
            Kind::Dir => ctx.fs.list(visit.path).is_ok_and(|list| list.is_empty()),
            Kind::Symlink => false,
        },
        Expr::Constant(value) => *value,
        Expr::Not(inner) => !evaluate(ctx, io, inner, visit, batches)?,
        Expr::And(left, right) => {
            evaluate(ctx, io, left, visit, batches)? && evaluate(ctx, io, right, visit, batches)?
        }
        Expr::Or(left, right) => {
            evaluate(ctx, io, left, visit, batches)? || evaluate(ctx, io, right, visit, batches)?
        }
        Expr::Print => {
            io.outln(visit.shown);
            true
        }
        Expr::Exec(command) => {
            let words: Vec<String> = command
                .iter()
                .map(|word| word.replace("{}", visit.shown))
                .collect();
            run_command(ctx, io, &words)? == 0
        }
        Expr::ExecAll(index) => {
            if let Some((_, paths)) = batches.get_mut(*index) {
                paths.push(visit.shown.to_owned());
            }
            true
        }
        Expr::Delete => {
            let removed = match visit.meta.kind {
                Kind::Dir if ctx.fs.list(visit.path).is_ok_and(|list| !list.is_empty()) => {
                    Err(Error::Invalid(format!(
                        "cannot delete '{}': Directory not empty",
                        visit.shown
                    )))
                }
                _ => ctx.fs.remove(visit.path),
            };
            match removed {
                Ok(()) => true,
                Err(error) => {
                    report(io, "find", visit.shown, &error);
                    visit.failed = true;
                    false
                }
            }
        }
    })
}

/// Runs `words` as a command of the shell, with no input; its status.
fn run_command(ctx: &mut Ctx, io: &mut Io, words: &[String]) -> Result<i32, Interrupt> {
    let Some((name, args)) = words.split_first() else {
        return Ok(0);
    };
    ctx.budget.step()?;
    let child = Io {
        stdin: Input::new(Vec::new()),
        stdout: io.stdout.clone(),
        stderr: io.stderr.clone(),
    };
    crate::shell::exec::dispatch(ctx, name, args, &child)
}

/// Parses the expression after the starting points.
fn parse(expression: &[String]) -> Result<Query, String> {
    let mut parser = Parser {
        words: expression,
        at: 0,
        min_depth: 0,
        max_depth: None,
        batches: Vec::new(),
        acts: false,
    };
    let expr = if expression.is_empty() {
        Expr::Constant(true)
    } else {
        parser.or()?
    };
    if let Some(extra) = parser.words.get(parser.at) {
        return Err(format!("unexpected `{extra}'"));
    }
    let expr = if parser.acts {
        expr
    } else {
        Expr::And(Box::new(expr), Box::new(Expr::Print))
    };
    Ok(Query {
        expr,
        min_depth: parser.min_depth,
        max_depth: parser.max_depth,
        batches: parser.batches,
    })
}

/// Reads an expression: `-o` binds looser than `-a`, which binds looser
/// than `!`.
struct Parser<'w> {
    words: &'w [String],
    at: usize,
    min_depth: usize,
    max_depth: Option<usize>,
    batches: Vec<(Vec<String>, Vec<String>)>,
    /// Whether the expression has an action of its own.
    acts: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.words.get(self.at).map(String::as_str)
    }

    fn next(&mut self) -> Option<&str> {
        let word = self.words.get(self.at).map(String::as_str);
        self.at += 1;
        word
    }

    fn value(&mut self, test: &str) -> Result<String, String> {
        self.next()
            .map(str::to_owned)
            .ok_or_else(|| format!("missing argument to `{test}'"))
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while matches!(self.peek(), Some("-o" | "-or")) {
            self.at += 1;
            let right = self.and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.not()?;
        loop {
            match self.peek() {
                None | Some("-o" | "-or" | ")") => return Ok(left),
                Some("-a" | "-and") => self.at += 1,
                Some(_) => {}
            }
            let right = self.not()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
    }

    fn not(&mut self) -> Result<Expr, String> {
        if matches!(self.peek(), Some("!" | "-not")) {
            self.at += 1;
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let Some(word) = self.next().map(str::to_owned) else {
            return Err("expected an expression at the end".to_owned());
        };
        let glob = |pattern: &str, case_insensitive: bool, whole_path: bool| {
            globset::GlobBuilder::new(pattern)
                .case_insensitive(case_insensitive)
                .literal_separator(!whole_path)
                .backslash_escape(false)
                .build()
                .map(|glob| glob.compile_matcher())
                .map_err(|error| format!("invalid pattern {pattern:?}: {error}"))
        };
        Ok(match word.as_str() {
            "(" => {
                let inner = self.or()?;
                if self.next() != Some(")") {
                    return Err("missing `)'".to_owned());
                }
                inner
            }
            "-name" => Expr::Name(
                matcher(&self.value(&word)?, false).map_err(|error| error.message().to_owned())?,
            ),
            "-iname" => Expr::Name(glob(&self.value(&word)?, true, false)?),
            "-path" | "-wholename" => Expr::Path(glob(&self.value(&word)?, false, true)?),
            "-type" => Expr::Type(match self.value(&word)?.as_str() {
                "f" => Kind::File,
                "d" => Kind::Dir,
                "l" => Kind::Symlink,
                other => return Err(format!("unknown argument to -type: {other}")),
            }),
            "-empty" => Expr::Empty,
            "-true" => Expr::Constant(true),
            "-false" => Expr::Constant(false),
            "-maxdepth" | "-mindepth" => {
                let given = self.value(&word)?;
                let depth: usize = given
                    .parse()
                    .map_err(|_| format!("invalid argument `{given}' to `{word}'"))?;
                if word == "-maxdepth" {
                    self.max_depth = Some(depth);
                } else {
                    self.min_depth = depth;
                }
                Expr::Constant(true)
            }
            "-print" => {
                self.acts = true;
                Expr::Print
            }
            "-delete" => {
                self.acts = true;
                Expr::Delete
            }
            "-exec" => {
                self.acts = true;
                let mut command = Vec::new();
                loop {
                    match self.next() {
                        None => return Err("missing argument to `-exec'".to_owned()),
                        Some(";") => break Expr::Exec(command),
                        Some("+") if command.last().is_some_and(|last| last == "{}") => {
                            self.batches.push((command, Vec::new()));
                            break Expr::ExecAll(self.batches.len() - 1);
                        }
                        Some(part) => command.push(part.to_owned()),
                    }
                }
            }
            other => return Err(format!("`{other}' is not supported")),
        })
    }
}
