//! Cordon's JavaScript interpreter: QuickJS, through rquickjs, with the part
//! of Node.js's API that scripts lean on. A sandbox backend's shell hands
//! it `node script.js` (or a `.js`, `.mjs` or `.cjs` script); the host runs
//! a fresh instance of this bundle whose only file system is the command's
//! view (the workspace, the active skills' folders read-only, a `/tmp` of
//! its own), and whose exit status comes back whole through Cordon's
//! `interpreter` interface.
//!
//! The rooms: `cli` reads node's command line, `engine` runs a program and
//! its event loop to the end, `host` gives the script's JavaScript the few
//! native operations it needs (files, streams, clocks), `resolve` finds
//! modules as Node does, `modules` loads ES modules, and `node.js` builds
//! Node's globals and built-in modules out of those operations.

wit_bindgen::generate!({
    path: "../../wit",
    world: "interpreter-plugin",
});

mod cli;
mod engine;
mod host;
mod modules;
mod resolve;

use std::io::{self, Write};

use exports::cordon::plugin::interpreter::Guest;

/// The bundle.
struct Node;

impl Guest for Node {
    fn run(args: Vec<String>, cwd: String, env: Vec<(String, String)>) -> i32 {
        if let Err(error) = std::env::set_current_dir(&cwd) {
            eprintln!("node: cannot enter {cwd}: {error}");
            return 1;
        }
        for (variable, value) in env {
            // SAFETY: one thread runs in this instance, and nothing else
            // reads the environment while it changes.
            unsafe { std::env::set_var(variable, value) };
        }
        let status = match cli::parse(&args) {
            Ok(program) => engine::run(program),
            Err(refusal) => {
                eprintln!("{}", refusal.message);
                refusal.status
            }
        };
        let _ = io::stdout().flush();
        let _ = io::stderr().flush();
        status
    }
}

export!(Node);
