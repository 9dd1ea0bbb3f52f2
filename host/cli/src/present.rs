//! A pending call as a person deciding about it reads it: a file write or
//! edit as a unified diff (a write against the file as the workspace folder
//! holds it), any other call's arguments one per line, long values cut.

use std::path::Path;

use serde_json::Value;
use similar::TextDiff;

/// The most lines of one value or diff shown.
const MAX_LINES: usize = 40;

/// `args` of a call, shown for a decision; `folder` is where a written
/// file's current content is read from.
pub(crate) fn present(args: &Value, folder: Option<&Path>) -> String {
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    if let (Some(path), Some(content)) = (text("path"), text("content")) {
        let before = folder
            .and_then(|folder| std::fs::read_to_string(folder.join(path)).ok())
            .unwrap_or_default();
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

/// The unified diff from `before` to `after` of the file at `path`.
fn diff(path: &str, before: &str, after: &str) -> String {
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
