//! Cordon's cross-crate integration and security tests: the host loading
//! and calling real components built from source, hostile ones above all,
//! one module per guarantee. They share one test binary, built and linked
//! once; run one group with `cargo test -p cordon-tests --test all escapes::`.

mod bundles;
mod circles;
mod commands;
mod corpus;
mod effects;
mod escapes;
mod git;
mod hooks;
mod hostile;
mod interpreters;
mod invariants;
mod languages;
mod namespace;
mod network;
mod node;
mod plugins;
mod sandbox;
mod workspace;
