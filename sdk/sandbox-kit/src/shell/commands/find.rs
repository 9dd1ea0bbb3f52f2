//! `find`: paths beneath starting points (default `.`), printed like GNU find
//! as the start joined with the path below it (`./a/b` for `find .`), in walk
//! order (sorted by name). Tests: `-name GLOB`, `-iname GLOB`, `-path GLOB`,
//! `-type f|d|l`, `-maxdepth N`, `-mindepth N`, all joined by "and"; `-print`
//! and `-a` are accepted. Operators (`-o`, `!`, `( )`) and actions such as `-exec` or
//! `-delete` are refused.

use super::Outcome;
use crate::error::Error;
use crate::fs::{Kind, Meta, Node, Prune};
use crate::path;
use crate::pattern::matcher;
use crate::shell::context::{Ctx, report};
use crate::shell::io::Io;
use globset::GlobMatcher;

/// One test a path must pass.
enum Test {
    /// The file name matches.
    Name(GlobMatcher),
    /// The path as printed matches (`*` crosses `/` here, as in GNU find).
    Path(GlobMatcher),
    /// The kind is this.
    Type(Kind),
}

/// The parsed expression.
#[derive(Default)]
struct Query {
    tests: Vec<Test>,
    min_depth: usize,
    max_depth: Option<usize>,
}

/// `find [PATH...] [TEST...]`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let split = args
        .iter()
        .position(|arg| arg.starts_with('-') || arg == "!" || arg == "(")
        .unwrap_or(args.len());
    let (starts, expression) = args.split_at(split);
    let query = match parse(expression) {
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
            if query.matches(&shown, &node.path, node.meta) {
                io.outln(shown);
            }
        }
    }
    Ok(status)
}

impl Query {
    fn matches(&self, shown: &str, path: &str, meta: Meta) -> bool {
        self.tests.iter().all(|test| match test {
            Test::Name(glob) => glob.is_match(path::file_name(path)),
            Test::Path(glob) => glob.is_match(shown),
            Test::Type(kind) => meta.kind == *kind,
        })
    }
}

/// Parses the tests after the starting points.
fn parse(expression: &[String]) -> Result<Query, String> {
    let mut query = Query::default();
    let mut rest = expression.iter();
    while let Some(test) = rest.next() {
        let mut value = || {
            rest.next()
                .cloned()
                .ok_or_else(|| format!("missing argument to `{test}'"))
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
        match test.as_str() {
            "-name" => query.tests.push(Test::Name(
                matcher(&value()?, false).map_err(|error| error.message().to_owned())?,
            )),
            "-iname" => query.tests.push(Test::Name(glob(&value()?, true, false)?)),
            "-path" | "-wholename" => query.tests.push(Test::Path(glob(&value()?, false, true)?)),
            "-type" => {
                let kind = match value()?.as_str() {
                    "f" => Kind::File,
                    "d" => Kind::Dir,
                    "l" => Kind::Symlink,
                    other => return Err(format!("unknown argument to -type: {other}")),
                };
                query.tests.push(Test::Type(kind));
            }
            "-maxdepth" | "-mindepth" => {
                let given = value()?;
                let depth: usize = given
                    .parse()
                    .map_err(|_| format!("invalid argument `{given}' to `{test}'"))?;
                if test == "-maxdepth" {
                    query.max_depth = Some(depth);
                } else {
                    query.min_depth = depth;
                }
            }
            "-print" | "-a" | "-and" => {}
            "-o" | "-or" | "!" | "-not" | "(" | ")" => {
                return Err(format!("the operator `{test}' is not supported"));
            }
            other => return Err(format!("`{other}' is not supported")),
        }
    }
    Ok(query)
}
