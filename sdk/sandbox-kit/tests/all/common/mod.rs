//! Helpers shared by the kit's integration tests.

#![allow(dead_code)]

use cordon_sandbox_kit::shell::{self, Output};
use cordon_sandbox_kit::{EmptyBase, FileSystem, MemoryStaging, NoInterpreters, Overlay};

/// A staged workspace over an empty base.
pub(crate) type MemoryFs = Overlay<EmptyBase, MemoryStaging>;

/// A staged workspace holding `files` (path, contents).
pub(crate) fn memory_fs(files: &[(&str, &str)]) -> MemoryFs {
    let fs = Overlay::new(EmptyBase, MemoryStaging::new());
    for (path, contents) in files {
        fs.write(path, contents.as_bytes()).unwrap();
    }
    fs
}

/// Runs `line` at the workspace root with no stdin and no time limit.
pub(crate) fn sh(fs: &dyn FileSystem, line: &str) -> Output {
    shell::run(fs, &NoInterpreters, line, "", &[], b"", 0).unwrap()
}

/// Runs `line` and returns (exit code, stdout, stderr) as text.
pub(crate) fn run(fs: &dyn FileSystem, line: &str) -> (i32, String, String) {
    text(sh(fs, line))
}

/// Runs `line` with `stdin`.
pub(crate) fn run_with(fs: &dyn FileSystem, line: &str, stdin: &str) -> (i32, String, String) {
    text(shell::run(fs, &NoInterpreters, line, "", &[], stdin.as_bytes(), 0).unwrap())
}

/// An output as (exit code, stdout, stderr) text.
pub(crate) fn text(output: Output) -> (i32, String, String) {
    (
        output.exit_code,
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Stdout of `line`, asserting it succeeded without stderr.
pub(crate) fn out(fs: &dyn FileSystem, line: &str) -> String {
    let (code, stdout, stderr) = run(fs, line);
    assert_eq!((code, stderr.as_str()), (0, ""), "{line}");
    stdout
}
