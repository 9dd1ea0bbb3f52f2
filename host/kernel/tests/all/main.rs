//! The kernel's loop through its ports, with in-memory models, tools,
//! hooks and stores (see `support`), one module per concern. They share one
//! test binary; run one group with `cargo test -p cordon-kernel --test all
//! served::`.

mod support;

mod delegation;
mod files;
mod hooks;
mod run;
mod served;
mod skills;
