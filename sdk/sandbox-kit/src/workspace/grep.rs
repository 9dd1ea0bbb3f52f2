//! `grep`: lines matching a regular expression in the files under a path. Each
//! file is read whole and searched in one pass ([`crate::search`]).

use crate::error::{Error, Result};
use crate::fs::{FileSystem, Kind, Prune};
use crate::path;
use crate::pattern::FileFilter;
use crate::search::{is_binary, matching_lines, trim_cr};
use regex::bytes::{Regex, RegexBuilder};
use std::ops::ControlFlow;

/// What to search for, as the WIT `grep-query` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepQuery {
    /// A regular expression (Rust `regex` syntax); `^` and `$` match at line
    /// boundaries.
    pub pattern: String,
    /// The file or directory to search, relative to the workspace root.
    pub path: String,
    /// Only files whose path matches this glob: a glob without `/` matches file
    /// names at any depth, one with `/` the whole workspace path.
    pub file_glob: Option<String>,
    /// Match letters regardless of case.
    pub case_insensitive: bool,
    /// Stop after this many matches.
    pub max_matches: u32,
}

/// The lines a `grep` found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GrepResult {
    /// Matching lines in path order, then line order.
    pub matches: Vec<GrepMatch>,
    /// Whether more lines matched than `max-matches` allowed.
    pub truncated: bool,
}

/// One line that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepMatch {
    /// File path relative to the workspace root.
    pub path: String,
    /// 1-based line number.
    pub line: u32,
    /// The line's text without its line ending, invalid UTF-8 replaced.
    pub text: String,
}

/// Compiles a search pattern with line-oriented anchors.
pub(crate) fn compile(pattern: &str, case_insensitive: bool) -> Result<Regex> {
    RegexBuilder::new(pattern)
        .multi_line(true)
        .crlf(true)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|error| Error::Invalid(format!("invalid regular expression {pattern:?}: {error}")))
}

/// Lines matching `query`. A file path searches that file; a directory is
/// searched recursively, skipping `.git` directories, symbolic links and
/// binary files (a NUL
/// byte in the first 8 KiB); a file named directly is searched even if it
/// does not match `file-glob`. `max-matches` of 0 returns no lines.
pub fn grep(fs: &dyn FileSystem, query: &GrepQuery) -> Result<GrepResult> {
    let regex = compile(&query.pattern, query.case_insensitive)?;
    let filter = query
        .file_glob
        .as_deref()
        .map(FileFilter::new)
        .transpose()?;
    let root = path::normalize(&query.path)?;
    let meta = fs.meta(&root)?.ok_or_else(|| Error::not_found(&root))?;
    let mut search = Search {
        regex,
        limit: query.max_matches as usize,
        result: GrepResult::default(),
    };
    if !meta.is_dir() {
        search.file(&root, &fs.read(&root)?);
        return Ok(search.result);
    }
    let mut buf = Vec::new();
    for node in fs.walk(&root, Prune::GitDirs)? {
        if node.meta.kind != Kind::File
            || filter
                .as_ref()
                .is_some_and(|filter| !filter.is_match(&node.path))
        {
            continue;
        }
        let Ok(data) = fs.contents(&node, &mut buf) else {
            continue;
        };
        search.file(&node.path, data);
        if search.result.truncated {
            break;
        }
    }
    Ok(search.result)
}

/// A search in progress.
struct Search {
    regex: Regex,
    limit: usize,
    result: GrepResult,
}

impl Search {
    /// Searches one file unless it is binary, stopping at the limit.
    fn file(&mut self, path: &str, data: &[u8]) {
        if is_binary(data) {
            return;
        }
        let result = &mut self.result;
        let limit = self.limit;
        matching_lines(&self.regex, data, |number, line| {
            if result.matches.len() == limit {
                result.truncated = true;
                return ControlFlow::Break(());
            }
            result.matches.push(GrepMatch {
                path: path.to_owned(),
                line: u32::try_from(number).unwrap_or(u32::MAX),
                text: String::from_utf8_lossy(trim_cr(line)).into_owned(),
            });
            ControlFlow::Continue(())
        });
    }
}
