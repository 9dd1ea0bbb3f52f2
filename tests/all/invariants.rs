//! `docs/invariants.md` stays true to the code: every file it names exists,
//! and every test it cites as proof is a test in the file it names.

use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests folder lies in the repository")
        .to_owned()
}

/// Every span of `text` between backticks.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Whether `source` defines a test function `name`.
fn defines_test(source: &str, name: &str) -> bool {
    let lines: Vec<&str> = source.lines().collect();
    lines.iter().enumerate().any(|(index, line)| {
        let defines = line.trim_start().starts_with(&format!("async fn {name}("))
            || line.trim_start().starts_with(&format!("fn {name}("));
        defines
            && lines[..index]
                .iter()
                .rev()
                .take(2)
                .any(|above| above.contains("#[test]") || above.contains("#[tokio::test"))
    })
}

#[test]
fn every_file_and_test_the_invariants_name_exists() {
    let root = repository();
    let doc = std::fs::read_to_string(root.join("docs/invariants.md")).expect("read the doc");
    let mut checked = 0;
    let mut problems = Vec::new();
    for row in doc.lines().filter(|line| line.starts_with("| **")) {
        let mut file: Option<String> = None;
        for span in code_spans(row) {
            let (path, test) = match span.split_once("::") {
                Some(("", test)) => (file.clone(), Some(test)),
                Some((path, test)) if path.ends_with(".rs") => (Some(path.to_owned()), Some(test)),
                _ if span.ends_with(".rs") => (Some(span.to_owned()), None),
                _ => continue,
            };
            let Some(path) = path else {
                problems.push(format!("`{span}` names no file before it"));
                continue;
            };
            let Ok(source) = std::fs::read_to_string(root.join(&path)) else {
                problems.push(format!("{path} does not exist"));
                continue;
            };
            if let Some(test) = test {
                if !defines_test(&source, test) {
                    problems.push(format!("{path} has no test `{test}`"));
                }
                file = Some(path);
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} references found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Whether `word` begins with `name` as a whole identifier.
fn starts_with_identifier(word: &str, name: &str) -> bool {
    word.strip_prefix(name).is_some_and(|rest| {
        !rest
            .chars()
            .next()
            .is_some_and(|next| next.is_alphanumeric() || next == '_')
    })
}

/// Whether `source` defines `name`: an item (function, type, trait,
/// constant, module, macro) of that name, or an enum variant or field.
fn defines_item(source: &str, name: &str) -> bool {
    const KEYWORDS: [&str; 9] = [
        "fn",
        "struct",
        "enum",
        "trait",
        "const",
        "static",
        "type",
        "mod",
        "macro_rules!",
    ];
    source.lines().any(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let item = words
            .windows(2)
            .any(|pair| KEYWORDS.contains(&pair[0]) && starts_with_identifier(pair[1], name));
        let member = words
            .iter()
            .find(|word| !word.starts_with("pub"))
            .is_some_and(|word| starts_with_identifier(word, name) && word.len() > name.len());
        item || member
    })
}

#[test]
fn every_item_the_invariants_place_in_a_file_is_defined_there() {
    let root = repository();
    let doc = std::fs::read_to_string(root.join("docs/invariants.md")).expect("read the doc");
    let identifier = |span: &str| {
        span.split("::").all(|part| {
            part.chars()
                .next()
                .is_some_and(|first| first.is_alphabetic() || first == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
    };
    let mut checked = 0;
    let mut problems = Vec::new();
    for row in doc.lines().filter(|line| line.starts_with("| **")) {
        // The second column says where each rule is kept: a file, then the
        // items of it that keep the rule.
        let Some(place) = row.split(" | ").nth(1) else {
            continue;
        };
        let mut file: Option<(String, String)> = None;
        for span in code_spans(place) {
            if span.ends_with(".rs") {
                let source = std::fs::read_to_string(root.join(span)).unwrap_or_default();
                file = Some((span.to_owned(), source));
                continue;
            }
            let Some((path, source)) = &file else {
                continue;
            };
            if !identifier(span) {
                continue;
            }
            let name = span.rsplit("::").next().unwrap_or(span);
            if !defines_item(source, name) {
                problems.push(format!("{path} defines no `{span}`"));
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} items found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
