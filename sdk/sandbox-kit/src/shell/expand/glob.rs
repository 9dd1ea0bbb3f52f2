//! Shell patterns: one [`Pattern`] type, translated to a regular
//! expression by the shell grammar's own pattern translator, used by `case`,
//! `[[ == ]]`, `${x#pattern}` and pathname expansion. Pathname expansion
//! matches component by component against the working directory; a glob
//! that matches nothing stays as written, as in bash; `*` and `?` do not
//! match a leading `.`.

use regex::Regex;

use crate::fs::FileSystem;
use crate::path;
use crate::shell::context::Ctx;

/// A compiled shell pattern.
pub(in crate::shell) struct Pattern {
    regex: Regex,
}

impl Pattern {
    /// `pattern` compiled, or `None` if it is malformed.
    pub(in crate::shell) fn new(pattern: &str) -> Option<Self> {
        let translated = brush_parser::pattern::pattern_to_regex_str(pattern, true).ok()?;
        let regex = Regex::new(&format!("^(?s:{translated})$")).ok()?;
        Some(Self { regex })
    }

    /// Whether the whole of `text` matches.
    pub(in crate::shell) fn matches(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

/// Whether `pattern` has unescaped glob characters.
fn has_glob(pattern: &str) -> bool {
    brush_parser::pattern::pattern_has_glob_metacharacters(pattern, false)
}

/// The paths matching `pattern` (relative to the working directory, or
/// absolute within the workspace or a skill's folder), as written, sorted.
pub(in crate::shell) fn paths(ctx: &Ctx, pattern: &str) -> Vec<String> {
    let fs = ctx.fs;
    let absolute = pattern.starts_with('/');
    let components: Vec<&str> = pattern.split('/').collect();
    let start = if absolute {
        String::new()
    } else {
        ctx.cwd.clone()
    };
    let mut candidates = vec![(String::new(), start)];
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
            if !has_glob(component) {
                let literal = crate::shell::escapes::literal(component);
                if let Ok(resolved) = path::resolve(&dir, &literal) {
                    next.push((shown_in(&literal), resolved));
                }
                continue;
            }
            let Some(matcher) = Pattern::new(component) else {
                return Vec::new();
            };
            let Ok(entries) = list(fs, &dir) else {
                continue;
            };
            for (name, is_dir) in entries {
                let hidden = name.starts_with('.') && !component.starts_with('.');
                if !hidden && matcher.matches(&name) && (last || is_dir) {
                    next.push((shown_in(&name), path::join(&dir, &name)));
                }
            }
        }
        candidates = next;
    }
    let mut found: Vec<String> = candidates
        .into_iter()
        .filter(|(_, resolved)| fs.meta(resolved).is_ok_and(|meta| meta.is_some()))
        .map(|(shown, _)| shown)
        .collect();
    found.sort();
    found
}

/// The entries of `dir` as names and whether each is a directory.
fn list(fs: &dyn FileSystem, dir: &str) -> crate::error::Result<Vec<(String, bool)>> {
    Ok(fs
        .list(dir)?
        .into_iter()
        .map(|(name, meta)| (name, meta.is_dir()))
        .collect())
}
