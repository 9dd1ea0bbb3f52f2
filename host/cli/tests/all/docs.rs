//! Every command the README and the book show runs as written. Each document's
//! `console` blocks are a trycmd case: their `$ cordon ...` lines run one after
//! another, in a scratch checkout of the repository (the bundled plugins, built,
//! the Python interpreter, the examples and the README), and what each prints
//! must match the block, with `...` standing for lines left out and `[..]` for
//! part of a line. A snippet that drifts from what `cordon` does fails here.
//!
//! Commands that are not `cordon` (installing a toolchain, the scripts, cargo)
//! sit in `sh` blocks; the suite runs those scripts itself. Usage synopses sit
//! in `text` blocks. [`no_cordon_command_is_left_unchecked`] holds the line:
//! a `cordon` command anywhere else, or a console block in a document this file
//! does not check, fails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cordon_test_artifacts as artifacts;

use crate::support::postgres_schema;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The documents whose console blocks this file runs, each with the test that
/// runs it.
const CHECKED: &[&str] = &[
    "README.md",
    "docs/tools/python.md",
    "docs/tools/javascript.md",
    "docs/tools/go.md",
    "docs/tools/c.md",
    "docs/tools/rust.md",
    "docs/bundles/approvals.md",
    "docs/bundles/finding-plugins.md",
    "docs/agents/running.md",
    "docs/skills.md",
    "docs/network.md",
    "docs/postgres.md",
];

/// Documents whose `cordon` commands no offline test can run, with why; the
/// guard below lets their `sh` blocks hold `cordon` commands, and counts them.
const UNCHECKABLE: &[(&str, &str)] = &[(
    "docs/agents/models.md",
    "each needs a model provider's key or a local model server",
)];

#[test]
fn the_readme_runs_as_written() {
    check("README.md");
}

#[test]
fn the_python_tool_page_runs_as_written() {
    check("docs/tools/python.md");
}

#[test]
fn the_javascript_tool_page_runs_as_written() {
    check("docs/tools/javascript.md");
}

#[test]
fn the_go_tool_page_runs_as_written() {
    check("docs/tools/go.md");
}

#[test]
fn the_c_tool_page_runs_as_written() {
    check("docs/tools/c.md");
}

#[test]
fn the_rust_tool_page_runs_as_written() {
    check("docs/tools/rust.md");
}

#[test]
fn the_approvals_page_runs_as_written() {
    check("docs/bundles/approvals.md");
}

#[test]
fn the_finding_plugins_page_runs_as_written() {
    check("docs/bundles/finding-plugins.md");
}

#[test]
fn the_running_agents_page_runs_as_written() {
    check("docs/agents/running.md");
}

#[test]
fn the_skills_page_runs_as_written() {
    check("docs/skills.md");
}

#[test]
fn the_network_page_runs_as_written() {
    check("docs/network.md");
}

#[test]
fn the_postgres_page_runs_as_written() {
    let Some(store) = postgres_schema("the_postgres_page_runs_as_written", "docs") else {
        return;
    };
    check_with("docs/postgres.md", &[("CORDON_STORE", &store)]);
}

/// Run the console blocks of `document` (relative to the repository's root)
/// in a scratch checkout of its own.
fn check(document: &str) {
    check_with(document, &[]);
}

/// [`check`] with the environment variables `env` set, as the document says
/// to set them.
fn check_with(document: &str, env: &[(&str, &str)]) {
    let scratch = tempfile::tempdir().unwrap();
    let name = Path::new(document).file_stem().unwrap().to_str().unwrap();
    let case = scratch.path().join(format!("{name}.md"));
    std::fs::copy(root().join(document), &case).unwrap();
    // trycmd runs a case's commands in `NAME.in` when it is there.
    let checkout = scratch.path().join(format!("{name}.in"));
    fill_checkout(&checkout);
    let home = scratch.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let compiled = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cordon-compiled");
    // A home of its own, so no skill, config or plugin of the machine's user
    // is found; cargo and rustup (which the Rust template's build runs) keep
    // theirs.
    let mut environment: Vec<(String, String)> = Vec::new();
    for (name, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        let value = std::env::var_os(name)
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(default)));
        if let Some(value) = value {
            environment.push((name.to_owned(), value.display().to_string()));
        }
    }
    let state = compiled.with_extension("state");
    for (name, value) in [
        ("HOME", home.clone()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_STATE_HOME", state),
        ("CORDON_CACHE_DIR", compiled),
    ] {
        environment.push((name.to_owned(), value.display().to_string()));
    }
    environment.push(("NO_COLOR".to_owned(), "1".to_owned()));
    environment.extend(
        env.iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned())),
    );
    // The pages show what a person sees once the bundled components are in
    // the compile cache; the first command on a fresh machine also says
    // `compiling N components, cached afterwards`. Compile them first, as
    // that first command would, whichever test reaches the cache first.
    let warmed = std::process::Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["plugins", "check", "plugins"])
        .current_dir(&checkout)
        .envs(environment.iter().map(|(name, value)| (name, value)))
        .output()
        .unwrap();
    assert!(
        warmed.status.success(),
        "the bundled plugins of {document}'s checkout do not check: {}",
        String::from_utf8_lossy(&warmed.stderr)
    );
    let cases = trycmd::TestCases::new();
    for (name, value) in &environment {
        cases.env(name, value);
    }
    cases
        .register_bin("cordon", Path::new(env!("CARGO_BIN_EXE_cordon")))
        .timeout(Duration::from_secs(600))
        .case(&case)
        .run();
}

/// What the documents take for granted in the repository's root: the bundled
/// plugins built (as `scripts/build-plugins.sh` leaves them), the Python
/// interpreter built, the examples and the README.
fn fill_checkout(checkout: &Path) {
    let bundled: &[(&str, &str)] = &[
        ("jq", artifacts::JQ),
        ("files", artifacts::FILES),
        ("notes", artifacts::NOTES),
        ("redactor", artifacts::REDACTOR),
        ("guard", artifacts::GUARD),
        ("budget", artifacts::BUDGET),
        ("dir", artifacts::DIR),
        ("memory", artifacts::DIR),
        ("http", artifacts::HTTP),
    ];
    let plugins = Path::new(artifacts::PLUGINS_DIR);
    for (name, component) in bundled {
        let bundle = checkout.join("plugins").join(name);
        std::fs::create_dir_all(&bundle).unwrap();
        std::fs::copy(
            plugins.join(name).join("plugin.toml"),
            bundle.join("plugin.toml"),
        )
        .unwrap();
        std::fs::copy(component, bundle.join(format!("{name}.wasm"))).unwrap();
    }
    copy_folder(&plugins.join("python"), &checkout.join("plugins/python"));
    copy_folder(
        &root().join("examples/demo"),
        &checkout.join("examples/demo"),
    );
    copy_folder(
        &root().join("examples/skills"),
        &checkout.join("examples/skills"),
    );
    // The demo agent looks for where the CLI starts.
    copy_folder(&root().join("host/cli/src"), &checkout.join("host/cli/src"));
    std::fs::copy(root().join("README.md"), checkout.join("README.md")).unwrap();
}

/// Copy the folder `from` to `to`, leaving out Python's byte-code caches.
fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_name() == "__pycache__" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_folder(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).unwrap();
        }
    }
}

/// Every document of the README and the book: no `cordon` command sits in a
/// block the suite does not run, no block lacks a language (trycmd would take
/// it for commands), and every document with console blocks is checked.
#[test]
fn no_cordon_command_is_left_unchecked() {
    let mut documents = vec![root().join("README.md")];
    markdown_under(&root().join("docs"), &mut documents);
    let mut problems = Vec::new();
    let mut commands = 0;
    let mut unchecked = 0;
    for path in &documents {
        let relative = path.strip_prefix(root()).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        for block in fenced_blocks(&text) {
            let place = format!("{relative}:{}", block.line);
            match block.language.as_str() {
                "" => problems.push(format!(
                    "{place}: a block without a language (say `text`, `sh`, `toml`, ...)"
                )),
                "console" => {
                    commands += block.lines.iter().filter(|l| l.starts_with("$ ")).count();
                    if !CHECKED.contains(&relative.as_str()) {
                        problems.push(format!(
                            "{place}: a console block in a document this suite does not check; add it to CHECKED in {}",
                            file!()
                        ));
                    }
                }
                "sh" | "bash" | "shell" => {
                    let uncheckable = UNCHECKABLE.iter().any(|(doc, _)| *doc == relative);
                    for (offset, line) in block.lines.iter().enumerate() {
                        if !runs_cordon(line) {
                            continue;
                        }
                        if uncheckable {
                            unchecked += 1;
                        } else {
                            problems.push(format!(
                                "{relative}:{}: `{}` is a cordon command outside a console block, so nothing runs it",
                                block.line + 1 + offset,
                                line.trim()
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for document in CHECKED {
        let text = std::fs::read_to_string(root().join(document)).unwrap();
        if !fenced_blocks(&text)
            .iter()
            .any(|block| block.language == "console")
        {
            problems.push(format!("{document}: checked, but it has no console block"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        commands >= 30,
        "the documents show {commands} checked commands"
    );
    println!("{commands} documented commands are run by this suite; {unchecked} are not:");
    for (document, why) in UNCHECKABLE {
        println!("  {document}: {why}");
    }
}

/// Whether the shell line `line` runs `cordon`: as its command, after
/// variable assignments, or after `&&`, `||`, `;` or `|`.
fn runs_cordon(line: &str) -> bool {
    let code = line.split(" #").next().unwrap_or(line);
    code.split(['&', '|', ';']).any(|command| {
        command
            .split_whitespace()
            .find(|word| !word.contains('=') && *word != "$")
            .is_some_and(|word| word == "cordon")
    })
}

/// A fenced code block: its language, the line its fence opens on (1-based)
/// and its lines.
struct Block {
    language: String,
    line: usize,
    lines: Vec<String>,
}

fn fenced_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (index, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => {
                open = Some(Block {
                    language: info.split(',').next().unwrap().trim().to_owned(),
                    line: index + 1,
                    lines: Vec::new(),
                });
            }
            (Some(_), Some(_)) => blocks.push(open.take().unwrap()),
            (Some(block), None) => block.lines.push(line.to_owned()),
            (None, None) => {}
        }
    }
    blocks
}

fn markdown_under(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            markdown_under(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            found.push(path);
        }
    }
}

/// Every relative link of the README and the book leads to a file or folder
/// of the repository: moving a page breaks this, not a reader's click.
#[test]
fn every_link_between_the_documents_leads_somewhere() {
    let mut documents = vec![root().join("README.md")];
    markdown_under(&root().join("docs"), &mut documents);
    let mut broken = Vec::new();
    for path in &documents {
        let text = std::fs::read_to_string(path).unwrap();
        let mut in_block = false;
        for (index, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_block = !in_block;
            }
            if in_block {
                continue;
            }
            for target in line
                .split("](")
                .skip(1)
                .filter_map(|rest| rest.split(')').next())
            {
                if target.contains("://") || target.starts_with('#') || target.contains(' ') {
                    continue;
                }
                let file = target.split('#').next().unwrap_or(target);
                if !path.parent().unwrap().join(file).exists() {
                    broken.push(format!(
                        "{}:{}: ({target}) leads nowhere",
                        path.strip_prefix(root()).unwrap().display(),
                        index + 1
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
