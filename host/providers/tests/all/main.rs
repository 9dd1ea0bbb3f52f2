//! The model providers against recorded and scripted servers on loopback
//! (see `support`), one module per provider, and runs driven through them.
//! They share one test binary; run one group with `cargo test -p
//! cordon-providers --test all openai::`.

mod support;

mod anthropic;
mod openai;
mod runs;
