//! Word expansion: variables (unquoted ones split on whitespace), then globs
//! for words with unquoted `*`, `?` or `[`, matched component by component
//! against the working directory. A glob that matches nothing stays as
//! written, as in bash; `*` and `?` do not match a leading `.`.

use super::context::Ctx;
use super::syntax::{Piece, Word};
use crate::fs::FileSystem;
use crate::path;
use crate::pattern::{has_glob_chars, matcher};

/// One field being built: its text, the same as a glob pattern with quoted
/// metacharacters escaped, and whether it has unquoted glob characters.
#[derive(Default)]
struct Field {
    text: String,
    pattern: String,
    globs: bool,
    quoted: bool,
}

impl Field {
    fn push_quoted(&mut self, text: &str) {
        self.text.push_str(text);
        self.pattern.push_str(&globset::escape(text));
        self.quoted = true;
    }

    fn push_bare(&mut self, text: &str) {
        self.text.push_str(text);
        for c in text.chars() {
            match c {
                '*' | '?' | '[' => {
                    self.globs = true;
                    self.pattern.push(c);
                }
                '{' | '}' => self.pattern.push_str(&globset::escape(&c.to_string())),
                _ => self.pattern.push(c),
            }
        }
    }

    /// Appends text from an unquoted variable: taken literally, but an empty
    /// value does not make the field exist.
    fn push_unquoted_value(&mut self, text: &str) {
        self.text.push_str(text);
        self.pattern.push_str(&globset::escape(text));
    }

    fn is_empty(&self) -> bool {
        self.text.is_empty() && !self.quoted
    }
}

/// The value of variable `name`; unset variables are empty.
fn value(ctx: &Ctx, name: &str) -> String {
    if name == "?" {
        ctx.status.to_string()
    } else {
        ctx.vars.get(name).cloned().unwrap_or_default()
    }
}

/// `word` expanded into fields: variables, splitting, globs.
pub(super) fn fields(ctx: &Ctx, word: &Word) -> Vec<String> {
    let mut done: Vec<Field> = Vec::new();
    let mut current = Field::default();
    for piece in word {
        match piece {
            Piece::Bare(text) => current.push_bare(text),
            Piece::Quoted(text) => current.push_quoted(text),
            Piece::Var { name, quoted: true } => current.push_quoted(&value(ctx, name)),
            Piece::Var {
                name,
                quoted: false,
            } => {
                let value = value(ctx, name);
                let mut parts = value.split([' ', '\t', '\n']);
                if let Some(first) = parts.next() {
                    current.push_unquoted_value(first);
                }
                for part in parts {
                    done.push(std::mem::take(&mut current));
                    current.push_unquoted_value(part);
                }
            }
        }
    }
    done.push(current);
    let mut out = Vec::new();
    for field in done.into_iter().filter(|field| !field.is_empty()) {
        if field.globs {
            let mut matches = glob(ctx.fs, &ctx.cwd, &field.pattern);
            if !matches.is_empty() {
                matches.sort();
                out.append(&mut matches);
                continue;
            }
        }
        out.push(field.text);
    }
    out
}

/// `word` expanded to one string, without splitting or globbing, as for
/// assignments and redirection targets.
pub(super) fn plain(ctx: &Ctx, word: &Word) -> String {
    word.iter()
        .map(|piece| match piece {
            Piece::Bare(text) | Piece::Quoted(text) => text.clone(),
            Piece::Var { name, .. } => value(ctx, name),
        })
        .collect()
}

/// The paths matching `pattern` relative to `cwd`, as written (relative).
fn glob(fs: &dyn FileSystem, cwd: &str, pattern: &str) -> Vec<String> {
    if pattern.starts_with('/') {
        return Vec::new();
    }
    let components: Vec<&str> = pattern.split('/').collect();
    let mut candidates = vec![(String::new(), cwd.to_owned())];
    for (index, component) in components.iter().enumerate() {
        let last = index + 1 == components.len();
        let mut next = Vec::new();
        for (shown, dir) in candidates {
            let shown_in = |name: &str| {
                if index == 0 {
                    name.to_owned()
                } else {
                    format!("{shown}/{name}")
                }
            };
            if component.is_empty() {
                if last {
                    next.push((format!("{shown}/"), dir));
                } else if index == 0 {
                    next.push((String::new(), dir));
                }
                continue;
            }
            if !has_glob_chars(component) {
                if let Ok(resolved) = path::resolve(&dir, component) {
                    next.push((shown_in(component), resolved));
                }
                continue;
            }
            let Ok(matcher) = matcher(component, false) else {
                return Vec::new();
            };
            let Ok(entries) = fs.list(&dir) else {
                continue;
            };
            for (name, meta) in entries {
                let hidden = name.starts_with('.') && !component.starts_with('.');
                if !hidden && matcher.is_match(&name) && (last || meta.is_dir()) {
                    next.push((shown_in(&name), path::join(&dir, &name)));
                }
            }
        }
        candidates = next;
    }
    candidates
        .into_iter()
        .filter(|(_, resolved)| fs.meta(resolved).is_ok_and(|meta| meta.is_some()))
        .map(|(shown, _)| shown)
        .collect()
}
