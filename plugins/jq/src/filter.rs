//! Parsing, compiling and running a jq filter, with jaq's errors turned into
//! messages that point at the offending part of the filter.

use cordon_sdk::ToolError;
use jaq_core::compile::Undefined;
use jaq_core::load::{Arena, File, Loader, lex};
use jaq_core::{Compiler, Ctx, Vars, data};
use jaq_json::Val;

/// The most results one call returns; a filter producing more is an error.
const MAX_RESULTS: usize = 10_000;

/// Runs `code` on `input` and collects every value it produces.
pub(crate) fn run(code: &str, input: Val) -> Result<Vec<Val>, ToolError> {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let arena = Arena::default();
    let modules = Loader::new(defs)
        .load(&arena, File { code, path: () })
        .map_err(|errors| {
            let messages = errors
                .into_iter()
                .flat_map(|(_, error)| load_error(code, error));
            invalid_filter(messages.collect())
        })?;
    let filter = Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errors| {
            let messages = errors.into_iter().flat_map(|(_, errors)| errors);
            invalid_filter(
                messages
                    .map(|(name, kind)| undefined(name, &kind))
                    .collect(),
            )
        })?;

    let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
    let mut results = Vec::new();
    for item in filter.id.run((ctx, input)) {
        match item {
            Ok(_) if results.len() == MAX_RESULTS => {
                return Err(ToolError::Failed(format!(
                    "the filter produced more than {MAX_RESULTS} results; \
                     narrow it, for example with limit(n; f) or first(f)"
                )));
            }
            Ok(value) => results.push(value),
            Err(exception) => match exception.get_err() {
                Ok(error) => return Err(ToolError::Failed(format!("jq error: {error}"))),
                Err(exception) => match exception.get_halt() {
                    Ok(0) => break,
                    Ok(code) => {
                        return Err(ToolError::Failed(format!(
                            "the filter halted with exit code {code}"
                        )));
                    }
                    Err(_) => {
                        return Err(ToolError::Failed(
                            "the filter stopped with an unhandled control exception".to_owned(),
                        ));
                    }
                },
            },
        }
    }
    Ok(results)
}

fn invalid_filter(messages: Vec<String>) -> ToolError {
    ToolError::InvalidInput(format!("invalid jq filter: {}", messages.join("; ")))
}

fn load_error(code: &str, error: jaq_core::load::Error<&str>) -> Vec<String> {
    use jaq_core::load::Error;
    match error {
        Error::Io(errors) => errors
            .into_iter()
            .map(|(path, message)| format!("cannot load module {path}: {message}"))
            .collect(),
        Error::Lex(errors) => errors
            .into_iter()
            .map(|(expect, found)| expected(code, &lexed(&expect), found))
            .collect(),
        Error::Parse(errors) => errors
            .into_iter()
            .map(|(expect, found)| expected(code, expect.as_str(), found))
            .collect(),
    }
}

/// What the lexer expected; jaq names the delimiters it knows and panics on others.
fn lexed(expect: &lex::Expect<&str>) -> String {
    match expect {
        lex::Expect::Delim(open) if !matches!(*open, "(" | "[" | "{" | "\"") => {
            format!("a match for `{open}`")
        }
        known => known.as_str().to_owned(),
    }
}

fn expected(code: &str, what: &str, found: &str) -> String {
    let found_text: String = found.chars().take(20).collect();
    let found_text = if found_text.is_empty() {
        "the end of the filter".to_owned()
    } else {
        format!("`{found_text}`")
    };
    match column(code, found) {
        Some(column) => format!("expected {what} at column {column}, found {found_text}"),
        None => format!("expected {what}, found {found_text}"),
    }
}

/// The 1-based character column at which `part`, a slice of `code`, starts.
fn column(code: &str, part: &str) -> Option<usize> {
    let offset = (part.as_ptr() as usize).checked_sub(code.as_ptr() as usize)?;
    let before = code.get(..offset)?;
    Some(before.chars().count() + 1)
}

fn undefined(name: &str, kind: &Undefined) -> String {
    match kind {
        Undefined::Filter(arity) => format!("undefined filter {name}/{arity}"),
        other => format!("undefined {} {name}", other.as_str()),
    }
}
