//! `files.read`: a UTF-8 text file, or a range of its lines.

use crate::{paths, text};
use cordon_sdk::{Annotations, Tool, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Largest file `files.read` opens.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Most text one call returns; reading stops at the line that would pass it.
const MAX_TEXT_BYTES: usize = 256 * 1024;
/// Lines returned when `limit` is omitted.
const DEFAULT_LIMIT: usize = 2000;

/// Arguments of `files.read`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    /// File path relative to the workspace root, for example `src/main.rs`.
    path: String,
    /// Line number to start at, counting from 1. Defaults to 1.
    offset: Option<usize>,
    /// Most lines to return. Defaults to 2000.
    limit: Option<usize>,
}

/// What `files.read` returns.
#[derive(Serialize)]
pub(crate) struct ReadOutput {
    /// The path read, relative to the workspace root.
    path: String,
    /// The requested lines, each ending in a newline.
    text: String,
    /// Number of the first line returned, counting from 1.
    start_line: usize,
    /// Number of the last line returned; `start_line - 1` when none was.
    end_line: usize,
    /// Number of lines in the whole file.
    total_lines: usize,
    /// Whether the size cap stopped reading before `limit` lines or the end of the
    /// file; a single line longer than the cap is returned cut short.
    truncated: bool,
}

/// The `files.read` tool.
pub(crate) struct Read;

impl Tool for Read {
    const NAME: &'static str = "files.read";
    const DESCRIPTION: &'static str = "Read a UTF-8 text file in the workspace. Returns the text \
        with the range of line numbers returned and the file's total line count. Use `offset` \
        and `limit` to page through long files; at most 256 KiB of text is returned per call and \
        binary files, files that are not UTF-8 and files over 16 MiB are refused.";
    type Args = ReadArgs;
    type Output = ReadOutput;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(args: ReadArgs) -> Result<ReadOutput, ToolError> {
        let full = paths::resolve(&args.path)?;
        let shown = paths::shown(&full);
        let metadata = std::fs::metadata(&full).map_err(|e| paths::io_error(&shown, &e))?;
        if metadata.is_dir() {
            return Err(ToolError::InvalidInput(format!(
                "{shown} is a directory; use files.list to see its entries"
            )));
        }
        if metadata.len() > MAX_FILE_BYTES {
            return Err(ToolError::Failed(format!(
                "{shown} is {} bytes; files.read opens files up to {MAX_FILE_BYTES} bytes",
                metadata.len()
            )));
        }
        let bytes = std::fs::read(&full).map_err(|e| paths::io_error(&shown, &e))?;
        if text::looks_binary(&bytes) {
            return Err(ToolError::Failed(format!(
                "{shown} contains NUL bytes; it is binary, not text"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|error| {
            ToolError::Failed(format!(
                "{shown} is not UTF-8 text (invalid byte at offset {}); it is probably binary",
                error.utf8_error().valid_up_to()
            ))
        })?;
        select(
            shown,
            &text,
            args.offset.unwrap_or(1),
            args.limit.unwrap_or(DEFAULT_LIMIT),
        )
    }
}

fn select(path: String, text: &str, offset: usize, limit: usize) -> Result<ReadOutput, ToolError> {
    let total_lines = text.lines().count();
    if offset == 0 {
        return Err(ToolError::InvalidInput(
            "offset counts lines from 1".to_owned(),
        ));
    }
    if offset > total_lines.max(1) {
        return Err(ToolError::InvalidInput(format!(
            "offset {offset} is past the end of {path}, which has {total_lines} lines"
        )));
    }
    let mut selected = String::new();
    let mut returned = 0;
    let mut truncated = false;
    for line in text.lines().skip(offset - 1).take(limit) {
        if selected.len() + line.len() + 1 > MAX_TEXT_BYTES {
            truncated = true;
            if returned == 0 {
                selected.push_str(&line[..line.floor_char_boundary(MAX_TEXT_BYTES)]);
                returned = 1;
            }
            break;
        }
        selected.push_str(line);
        selected.push('\n');
        returned += 1;
    }
    Ok(ReadOutput {
        path,
        text: selected,
        start_line: offset,
        end_line: offset + returned - 1,
        total_lines,
        truncated,
    })
}
