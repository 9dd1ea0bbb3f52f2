//! `files.search`: lines matching a regular expression in the text files under a path.

use crate::pattern::PathPattern;
use crate::{paths, text, walk};
use cordon_sdk::{Annotations, Tool, ToolError};
use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Matches returned when `max_results` is omitted.
const DEFAULT_MAX_RESULTS: usize = 100;
/// The largest `max_results` honoured.
const MAX_RESULTS: usize = 1000;
/// Files larger than this are skipped.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Matched lines longer than this many characters are cut short.
const MAX_LINE_CHARS: usize = 300;

/// Arguments of `files.search`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// Regular expression (Rust `regex` syntax) matched against each line.
    pattern: String,
    /// File or directory to search, relative to the workspace root. Defaults to `.`.
    path: Option<String>,
    /// Glob limiting which files are searched: `*.rs` matches file names,
    /// `src/**/*.rs` matches paths relative to `path`.
    glob: Option<String>,
    /// Match letters regardless of case.
    #[serde(default)]
    case_insensitive: bool,
    /// Most matches to return. Defaults to 100; at most 1000.
    max_results: Option<usize>,
}

/// What `files.search` returns.
#[derive(Serialize)]
pub(crate) struct SearchOutput {
    /// Matching lines in path order, then line order.
    matches: Vec<Match>,
    /// Whether the search stopped at `max_results`.
    truncated: bool,
    /// Number of text files searched.
    files_searched: usize,
    /// Number of files skipped as binary, not UTF-8, unreadable or over 4 MiB.
    files_skipped: usize,
}

/// One matching line.
#[derive(Serialize)]
struct Match {
    /// File path relative to the workspace root.
    path: String,
    /// Line number, counting from 1.
    line: usize,
    /// The line's text, cut to 300 characters.
    text: String,
}

/// The `files.search` tool.
pub(crate) struct Search;

impl Tool for Search {
    const NAME: &'static str = "files.search";
    const DESCRIPTION: &'static str = "Search the text files under a workspace path for lines \
        matching a regular expression, like grep -rn. Returns each match's path, line number and \
        text. Binary files, files over 4 MiB and `.git` directories are skipped; `glob` narrows \
        the files searched.";
    type Args = SearchArgs;
    type Output = SearchOutput;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(args: SearchArgs) -> Result<SearchOutput, ToolError> {
        let regex = RegexBuilder::new(&args.pattern)
            .case_insensitive(args.case_insensitive)
            .build()
            .map_err(|error| {
                ToolError::InvalidInput(format!("invalid regex {:?}: {error}", args.pattern))
            })?;
        let glob = args.glob.as_deref().map(PathPattern::new).transpose()?;
        let root = paths::resolve(args.path.as_deref().unwrap_or("."))?;
        let shown = paths::shown(&root);
        let metadata = std::fs::metadata(&root).map_err(|e| paths::io_error(&shown, &e))?;
        let files: Box<dyn Iterator<Item = PathBuf>> = if metadata.is_dir() {
            Box::new(files_below(&root, glob))
        } else {
            Box::new(std::iter::once(root.clone()))
        };
        let max = args
            .max_results
            .unwrap_or(DEFAULT_MAX_RESULTS)
            .clamp(1, MAX_RESULTS);
        let mut output = SearchOutput {
            matches: Vec::new(),
            truncated: false,
            files_searched: 0,
            files_skipped: 0,
        };
        for file in files {
            match text_of(&file) {
                Some(text) => {
                    output.files_searched += 1;
                    if search_text(
                        &regex,
                        &paths::shown(&file),
                        &text,
                        max,
                        &mut output.matches,
                    ) {
                        output.truncated = true;
                        break;
                    }
                }
                None => output.files_skipped += 1,
            }
        }
        Ok(output)
    }
}

/// The regular files below `root` that `glob` admits.
fn files_below(root: &Path, glob: Option<PathPattern>) -> impl Iterator<Item = PathBuf> {
    walk::below(root)
        .filter(|item| item.file_type().is_file())
        .filter(move |item| {
            glob.as_ref().is_none_or(|glob| {
                item.path()
                    .strip_prefix(root)
                    .is_ok_and(|relative| glob.matches(relative))
            })
        })
        .map(walkdir::DirEntry::into_path)
}

/// The contents of `file` when it is a readable UTF-8 text file of searchable size.
fn text_of(file: &Path) -> Option<String> {
    let metadata = std::fs::metadata(file).ok()?;
    if metadata.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(file).ok()?;
    if text::looks_binary(&bytes) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Adds the lines of `text` matching `regex` to `matches`; true once `max` is reached
/// with more matches left.
fn search_text(
    regex: &Regex,
    path: &str,
    text: &str,
    max: usize,
    matches: &mut Vec<Match>,
) -> bool {
    for (index, line) in text.lines().enumerate() {
        if !regex.is_match(line) {
            continue;
        }
        if matches.len() == max {
            return true;
        }
        matches.push(Match {
            path: path.to_owned(),
            line: index + 1,
            text: line.chars().take(MAX_LINE_CHARS).collect(),
        });
    }
    false
}
