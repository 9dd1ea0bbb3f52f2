//! Every behaviour of a hostile guest has a test. A hostile guest exists to
//! try what the host must refuse; a behaviour no test exercises proves
//! nothing. Each guest's behaviours are read from its source (a tool's name,
//! a backend attempt's name, a hook mode), and each must be named, quoted,
//! in a test file that loads that guest.

use std::path::{Path, PathBuf};

/// The test files of this binary and of the CLI's, each with its text.
fn test_files() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<(PathBuf, String)> = [dir.join("all"), dir.join("../host/cli/tests/all")]
        .iter()
        .flat_map(|dir| {
            std::fs::read_dir(dir).unwrap_or_else(|error| panic!("read {}: {error}", dir.display()))
        })
        .map(|entry| entry.expect("a tests folder entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read a test file");
            (path, text)
        })
        .collect();
    files.sort();
    files
}

/// The source of a guest written in another language: its `app.py` or `app.js`.
fn language_source(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("guests")
        .join(name);
    ["app.py", "app.js"]
        .iter()
        .map(|file| dir.join(file))
        .filter(|path| path.is_file())
        .map(|path| std::fs::read_to_string(path).expect("read guest source"))
        .collect()
}

/// The modes of the hostile skill's script: the keys of its `MODES` table.
fn skill_modes() -> Vec<String> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("guests/hostile-skill/scripts/attack.py");
    let text = std::fs::read_to_string(&script).expect("read the hostile skill's script");
    script_modes(&text)
}

/// The quoted keys of the `MODES = { ... }` table in `text`.
fn script_modes(text: &str) -> Vec<String> {
    let body = text
        .split_once("MODES = {")
        .and_then(|(_, rest)| rest.split_once('}'))
        .map(|(body, _)| body)
        .expect("the script's `MODES` table");
    body.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('"')?;
            let (name, after) = rest.split_once('"')?;
            after.trim_start().starts_with(':').then(|| name.to_owned())
        })
        .collect()
}

/// The modes of the hostile skill's script no test file using the skill
/// (naming `"hostile-skill"`) quotes.
fn untested_skill_modes(modes: &[String]) -> Vec<String> {
    let files: Vec<String> = test_files()
        .into_iter()
        .filter(|(_, text)| text.contains("\"hostile-skill\""))
        .map(|(_, text)| text)
        .collect();
    assert!(!files.is_empty(), "no test file uses hostile-skill");
    modes
        .iter()
        .filter(|mode| {
            let quoted = format!("\"{mode}\"");
            !files.iter().any(|text| text.contains(&quoted))
        })
        .map(|mode| format!("hostile-skill: {mode}"))
        .collect()
}

/// The text of every Rust file of guest `name`'s source.
fn guest_source(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("guests")
        .join(name)
        .join("src");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("read {}: {error}", dir.display()))
        .map(|entry| entry.expect("a guest source entry").path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| std::fs::read_to_string(path).expect("read guest source"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every string literal in `text` that starts with `prefix`.
fn literals_starting(text: &str, prefix: &str) -> Vec<String> {
    let quoted = format!("\"{prefix}");
    let mut found: Vec<String> = text
        .match_indices(&quoted)
        .filter_map(|(at, _)| {
            let rest = &text[at + 1..];
            rest.find('"').map(|end| rest[..end].to_owned())
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The literal patterns of the match arms in `text`: lines such as
/// `"stage-escape" => ...`.
fn match_arms(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('"')?;
            let (name, after) = rest.split_once('"')?;
            after
                .trim_start()
                .starts_with("=>")
                .then(|| name.to_owned())
        })
        .collect()
}

/// The variants of `enum Mode` in `text`, kebab-case as a manifest names them.
fn modes(text: &str) -> Vec<String> {
    let body = text
        .split_once("enum Mode {")
        .and_then(|(_, rest)| rest.split_once('}'))
        .map(|(body, _)| body)
        .expect("the hook guest's `enum Mode`");
    body.lines()
        .map(str::trim)
        .filter_map(|line| line.strip_suffix(','))
        .filter(|name| name.chars().all(char::is_alphanumeric))
        .map(kebab)
        .collect()
}

fn kebab(camel: &str) -> String {
    let mut out = String::new();
    for (index, c) in camel.chars().enumerate() {
        if c.is_uppercase() && index > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The behaviours of `behaviours` (from guest `guest`, whose component is
/// the artifact `constant`) that no test file loading the guest names.
fn untested(guest: &str, constant: &str, behaviours: &[String]) -> Vec<String> {
    let loads = |text: &str| {
        let reference = format!("artifacts::{constant}");
        text.match_indices(&reference).any(|(at, _)| {
            let next = text[at + reference.len()..].chars().next();
            !next.is_some_and(|c| c == '_' || c.is_alphanumeric())
        })
    };
    let files: Vec<String> = test_files()
        .into_iter()
        .filter(|(_, text)| loads(text))
        .map(|(_, text)| text)
        .collect();
    assert!(!files.is_empty(), "no test file loads {guest}");
    behaviours
        .iter()
        .filter(|name| {
            let quoted = format!("\"{name}\"");
            !files.iter().any(|text| text.contains(&quoted))
        })
        .map(|name| format!("{guest}: {name}"))
        .collect()
}

/// The tools of guest `guest` (written in another language) that no test
/// file loading it (from `LANGUAGE_GUESTS_DIR`, by its quoted folder name) names, as `"NAME"` (a scenario shared across languages
/// calls `BUNDLE.NAME`) or `"BUNDLE.NAME"`.
fn untested_in_language(guest: &str, tools: &[String]) -> Vec<String> {
    let named = format!("\"{guest}\"");
    let files: Vec<String> = test_files()
        .into_iter()
        .filter(|(_, text)| text.contains("LANGUAGE_GUESTS_DIR") && text.contains(&named))
        .map(|(_, text)| text)
        .collect();
    assert!(!files.is_empty(), "no test file loads {guest}");
    tools
        .iter()
        .filter_map(|full| {
            let short = full.strip_prefix(&format!("{guest}."))?;
            let named = |text: &String| {
                text.contains(&format!("\"{full}\"")) || text.contains(&format!("\"{short}\""))
            };
            (!files.iter().any(named)).then(|| format!("{guest}: {full}"))
        })
        .collect()
}

#[test]
fn every_behaviour_of_a_hostile_guest_has_a_test() {
    let tools = literals_starting(&guest_source("hostile"), "hostile.");
    let attempts = match_arms(&guest_source("hostile-backend"));
    let hook_modes = modes(&guest_source("hostile-hooks"));
    assert!(tools.len() > 30, "the tool guest's names: {tools:?}");
    assert!(attempts.len() > 15, "the backend's attempts: {attempts:?}");
    assert!(hook_modes.len() > 10, "the hook modes: {hook_modes:?}");
    let net_tools = literals_starting(&guest_source("hostile-net"), "hostile-net.");
    assert!(
        net_tools.len() >= 8,
        "the network guest's names: {net_tools:?}"
    );
    let mut missing = untested("hostile", "HOSTILE", &tools);
    missing.extend(untested("hostile-net", "HOSTILE_NET", &net_tools));
    missing.extend(untested("hostile-backend", "HOSTILE_BACKEND", &attempts));
    missing.extend(untested("hostile-hooks", "HOSTILE_HOOKS", &hook_modes));
    let script_modes = skill_modes();
    assert!(
        script_modes.len() >= 6,
        "the skill script's modes: {script_modes:?}"
    );
    missing.extend(untested_skill_modes(&script_modes));
    for guest in ["hostile-py", "hostile-js"] {
        let tools = literals_starting(&language_source(guest), &format!("{guest}."));
        assert!(tools.len() >= 6, "{guest}'s tools: {tools:?}");
        missing.extend(untested_in_language(guest, &tools));
    }
    assert!(
        missing.is_empty(),
        "hostile behaviours without a test (name each, quoted, in a test that loads its guest):\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn the_readers_of_guest_sources_find_what_they_look_for() {
    let text = "const NAME: &str = \"hostile.echo\";\nmatch path {\n    \"stage-escape\" => a(),\n    other => b(other),\n}\npub(crate) enum Mode {\n    /// Doc.\n    #[default]\n    Record,\n    AllowAll,\n}\n";
    assert_eq!(literals_starting(text, "hostile."), ["hostile.echo"]);
    assert_eq!(match_arms(text), ["stage-escape"]);
    assert_eq!(modes(text), ["record", "allow-all"]);
    let script =
        "MODES = {\n    \"read-outside\": read_outside,\n    \"loop\": loop,\n}\nprint(\"x\")\n";
    assert_eq!(script_modes(script), ["read-outside", "loop"]);
}
