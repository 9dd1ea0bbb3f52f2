//! Everyday commands for sandbox backends' shells: uutils coreutils, `awk`
//! (awk-rs), `diff` (similar) and `jq` (jaq), one component serving each
//! command its manifest names. The shell hands a command it does not have
//! to the host, which runs a fresh instance of this bundle over the
//! command's view of the workspace; the command's name is `argv[0]`, its
//! streams are the command's, and its exit status comes back through
//! Cordon's own `interpreter` interface, whole (WASI's `run` would carry
//! only success or failure).

wit_bindgen::generate!({
    path: "../../wit",
    world: "interpreter-plugin",
});

mod awk;
mod diff;
mod jq;
mod uutils;

use std::io::{self, Write};

use exports::cordon::plugin::interpreter::Guest;

/// The bundle.
struct Commands;

impl Guest for Commands {
    fn run(args: Vec<String>, cwd: String, env: Vec<(String, String)>) -> i32 {
        let name = std::env::args().next().unwrap_or_default();
        if let Err(error) = std::env::set_current_dir(&cwd) {
            eprintln!("{name}: {cwd}: {error}");
            return 126;
        }
        for (variable, value) in env {
            // SAFETY: one thread runs in this instance, and nothing else
            // reads the environment while it changes.
            unsafe { std::env::set_var(variable, value) };
        }
        let code = match name.as_str() {
            "awk" => awk::main(args),
            "diff" => diff::main(args),
            "jq" => jq::main(args),
            other => match uutils::find(other) {
                Some(utility) => utility(args),
                None => {
                    eprintln!("{name}: not a command of this bundle");
                    127
                }
            },
        };
        let _ = io::stdout().flush();
        let _ = io::stderr().flush();
        code
    }
}

export!(Commands);

/// An I/O error's message without Rust's ` (os error N)` suffix, as GNU
/// tools print it.
pub(crate) fn plain(error: &io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}
