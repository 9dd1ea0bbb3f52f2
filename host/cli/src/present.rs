//! A pending call as a person deciding about it reads it: a file write or
//! edit as a unified diff (a write against the file as the workspace folder
//! holds it), any other call's arguments one per line, long values cut.
//!
//! The path comes from the model, so the prompt reads only a regular file
//! inside the folder, by a relative path with no `..`, and at most
//! [`MAX_DIFF_BYTES`] of it: a path at `/dev/zero`, a FIFO, a symlink out of
//! the folder or a huge file is named, never read.

use std::io::Read;
use std::path::{Component, Path};

use serde_json::Value;
use similar::TextDiff;

/// The most lines of one value or diff shown.
const MAX_LINES: usize = 40;

/// The largest text either side of a diff.
const MAX_DIFF_BYTES: usize = 256 * 1024;

/// `args` of a call, shown for a decision; `folder` is where a written
/// file's current content is read from.
pub(crate) fn present(args: &Value, folder: Option<&Path>) -> String {
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    if let (Some(path), Some(content)) = (text("path"), text("content")) {
        let before = match folder {
            Some(folder) => match current(folder, path) {
                Ok(before) => before,
                Err(why) => {
                    return format!("    {path}: {why}; it would get {} bytes", content.len());
                }
            },
            None => String::new(),
        };
        return diff(path, &before, content);
    }
    if let (Some(path), Some(old), Some(new)) =
        (text("path"), text("old_string"), text("new_string"))
    {
        return diff(path, old, new);
    }
    match args {
        Value::Object(fields) if !fields.is_empty() => fields
            .iter()
            .map(|(key, value)| {
                let shown = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                let mut lines = shown.lines();
                let first = lines.next().unwrap_or_default();
                let rest: Vec<String> = lines.map(|line| format!("      {line}")).collect();
                let mut entry = format!("    {key}: {first}");
                for line in cut(rest) {
                    entry.push('\n');
                    entry.push_str(&line);
                }
                entry
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Object(_) => "    (no arguments)".to_owned(),
        other => format!("    {other}"),
    }
}

/// The text of the file at `path` in `folder`, empty when there is none yet;
/// why it is not shown when it is not a small regular file inside.
fn current(folder: &Path, path: &str) -> Result<String, &'static str> {
    let relative = Path::new(path);
    if !relative
        .components()
        .all(|component| matches!(component, Component::Normal(_) | Component::CurDir))
    {
        return Err("not a path inside the workspace folder");
    }
    let file = folder.join(relative);
    let metadata = match std::fs::symlink_metadata(&file) {
        Ok(metadata) => metadata,
        Err(_) => return Ok(String::new()),
    };
    if !metadata.is_file() {
        return Err("not a regular file, so it is not read");
    }
    if metadata.len() > MAX_DIFF_BYTES as u64 {
        return Err("too large to show as a diff");
    }
    let mut text = String::new();
    std::fs::File::open(&file)
        .and_then(|opened| opened.take(MAX_DIFF_BYTES as u64).read_to_string(&mut text))
        .map_err(|_| "not readable as text")?;
    Ok(text)
}

/// The unified diff from `before` to `after` of the file at `path`, or their
/// sizes when either is too large to diff.
fn diff(path: &str, before: &str, after: &str) -> String {
    if before.len().max(after.len()) > MAX_DIFF_BYTES {
        return format!(
            "    {path}: too large to show as a diff ({} bytes now, {} after)",
            before.len(),
            after.len()
        );
    }
    let diff = TextDiff::from_lines(before, after);
    let unified = diff
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    let lines: Vec<String> = unified.lines().map(|line| format!("    {line}")).collect();
    if lines.is_empty() {
        return format!("    {path}: no change");
    }
    cut(lines).join("\n")
}

/// `lines`, at most [`MAX_LINES`] of them, saying how many more there were.
fn cut(mut lines: Vec<String>) -> Vec<String> {
    if lines.len() > MAX_LINES {
        let more = lines.len() - MAX_LINES;
        lines.truncate(MAX_LINES);
        lines.push(format!("    ... {more} more lines"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_write_is_a_diff_against_the_folder_and_an_edit_a_diff_of_its_strings() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("a.txt"), "one\ntwo\n").unwrap();
        let shown = present(
            &json!({"path": "a.txt", "content": "one\nthree\n"}),
            Some(folder.path()),
        );
        assert!(shown.contains("--- a/a.txt"), "{shown}");
        assert!(
            shown.contains("-two") && shown.contains("+three"),
            "{shown}"
        );
        let fresh = present(
            &json!({"path": "b.txt", "content": "new\n"}),
            Some(folder.path()),
        );
        assert!(fresh.contains("+new"), "{fresh}");
        let edit = present(
            &json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
            None,
        );
        assert!(edit.contains("-two") && edit.contains("+2"), "{edit}");
    }

    #[test]
    fn a_write_the_model_points_outside_or_at_a_device_is_named_not_read() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(
            folder.path().join("big.txt"),
            "x".repeat(MAX_DIFF_BYTES + 1),
        )
        .unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/hostname", folder.path().join("link")).unwrap();
        for (path, says) in [
            ("/dev/zero", "not a path inside"),
            ("../../etc/passwd", "not a path inside"),
            ("/etc/passwd", "not a path inside"),
            ("big.txt", "too large"),
            ("link", "not a regular file"),
            (".", "not a regular file"),
        ] {
            let shown = present(&json!({"path": path, "content": "x"}), Some(folder.path()));
            assert!(shown.contains(says), "{path}: {shown}");
        }
        let huge = "y\n".repeat(MAX_DIFF_BYTES);
        let shown = present(
            &json!({"path": "new.txt", "content": huge}),
            Some(folder.path()),
        );
        assert!(shown.contains("too large to show as a diff"), "{shown}");
    }

    #[test]
    fn other_arguments_are_one_per_line_and_long_values_are_cut() {
        let shown = present(&json!({"title": "Milk", "tags": ["a"]}), None);
        assert_eq!(shown, "    tags: [\"a\"]\n    title: Milk");
        let long = (0..100)
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let shown = present(&json!({ "body": long }), None);
        assert!(shown.contains("... 59 more lines"), "{shown}");
        assert_eq!(present(&json!({}), None), "    (no arguments)");
    }
}
