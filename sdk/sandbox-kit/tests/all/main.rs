//! The sandbox kit as a backend uses it, on a real folder: the shell
//! language, its commands, scripts and the workspace operations, one module
//! each. They share one test binary; run one group with `cargo test -p
//! cordon-sandbox-kit --test all commands::`.

mod common;

mod commands;
mod dir_base;
mod scripts;
mod shell_language;
mod workspace_ops;
