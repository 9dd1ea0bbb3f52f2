//! A first start as a new user sees it: compiling components says so, with a
//! progress bar on a terminal; a start from the cache says nothing unless
//! `-v` asks; diagnostics are coloured only on a terminal and never with
//! `NO_COLOR`.

use cordon_test_artifacts as artifacts;

use crate::support::{Project, both, text};

/// A project with the notes and jq bundles and a component cache of its own.
fn project() -> Project {
    let project = Project::with_own_cache();
    project.bundled("notes", artifacts::NOTES);
    project.bundled("jq", artifacts::JQ);
    project
}

#[test]
fn compiling_says_so_once_and_verbose_shows_every_load() {
    let project = project();
    let first = project.cordon(&["tool", "list"]);
    assert!(first.status.success(), "{}", both(&first));
    assert!(
        text(&first.stderr).contains("compiling 2 components, cached afterwards"),
        "{}",
        both(&first)
    );
    let second = project.cordon(&["tool", "list"]);
    assert!(
        !text(&second.stderr).contains("compiling"),
        "{}",
        both(&second)
    );
    let verbose = project.cordon(&["tool", "list", "-v"]);
    let said = text(&verbose.stderr);
    for bundle in ["notes", "jq"] {
        assert!(
            said.contains(&format!("loaded {bundle}: from the cache in")),
            "{said}"
        );
    }
    let uncached = project.cordon(&["tool", "list", "-v", "--no-cache"]);
    assert!(
        text(&uncached.stderr).contains("loaded jq: compiled, not cached in"),
        "{}",
        both(&uncached)
    );
}

#[test]
fn a_terminal_shows_a_progress_bar_while_components_compile() {
    let project = project();
    let (output, shown) = project.at_terminal(&["tool", "list"], "");
    assert!(output.status.success(), "{shown}");
    assert!(
        shown.contains("compiling 2 components, cached afterwards"),
        "{shown}"
    );
    assert!(
        shown.contains("/2] compiling "),
        "the bar names what compiles: {shown}"
    );
    assert!(shown.contains("jq.query"), "{shown}");
}

#[test]
fn diagnostics_are_coloured_on_a_terminal_unless_no_color_is_set() {
    let project = project();
    let warm = project.cordon(&["tool", "list"]);
    assert!(warm.status.success(), "{}", both(&warm));
    // A damaged cache entry is a warning, and is replaced.
    let damage = || {
        for entry in std::fs::read_dir(project.cache.path()).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "cwasm") {
                std::fs::write(&path, b"not machine code").unwrap();
            }
        }
    };
    damage();
    let (_, coloured) = project.at_terminal(&["tool", "list"], "");
    let warning = coloured
        .lines()
        .find(|line| line.contains("refused a compiled component from the cache"))
        .unwrap_or_else(|| panic!("the damage is warned about: {coloured}"));
    assert!(
        warning.contains('\u{1b}'),
        "coloured on a terminal: {warning:?}"
    );

    damage();
    let (_, plain) = project.at_terminal_with(&["tool", "list"], "", &[("NO_COLOR", "1")]);
    let warning = plain
        .lines()
        .find(|line| line.contains("refused a compiled component from the cache"))
        .unwrap_or_else(|| panic!("the damage is warned about: {plain}"));
    assert!(
        !warning.contains('\u{1b}'),
        "no colour with NO_COLOR: {warning:?}"
    );

    damage();
    let piped = project.cordon(&["tool", "list"]);
    let said = text(&piped.stderr);
    assert!(
        said.contains("refused a compiled component from the cache"),
        "{said}"
    );
    assert!(
        !said.contains('\u{1b}'),
        "no colour off a terminal: {said:?}"
    );
}

#[test]
fn more_verbosity_keeps_the_dependencies_logs_out_until_asked_for_them() {
    let project = project();
    let warm = project.cordon(&["tool", "list"]);
    assert!(warm.status.success(), "{}", both(&warm));
    let debug = project.cordon(&["tool", "list", "-vv"]);
    assert!(debug.status.success(), "{}", both(&debug));
    let said = text(&debug.stderr);
    assert!(said.contains("loaded jq:"), "{said}");
    assert!(
        !said.contains("wasmtime::"),
        "no dependency's debug lines at -vv: {said}"
    );
    let everything = project.cordon(&["tool", "list", "-vvvv"]);
    assert!(
        text(&everything.stderr).contains("wasmtime::"),
        "-vvvv lets them through: {}",
        both(&everything)
    );
}
