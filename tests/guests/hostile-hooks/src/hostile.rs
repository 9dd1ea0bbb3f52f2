//! The hostile behaviours shared by every phase: ending abruptly, never ending,
//! exhausting memory, and reaching for capabilities beyond the manifest.

use std::hint::black_box;

use cordon_sdk::{log, state, tools};
use serde_json::json;

/// Panics, which traps the instance.
pub(crate) fn trap() -> ! {
    panic!("hostile hook panicked")
}

/// Spins forever; `black_box` keeps the optimizer from removing the loop.
pub(crate) fn spin() -> ! {
    loop {
        black_box(());
    }
}

/// Allocates and touches memory until the host's limit stops the instance.
pub(crate) fn hoard() -> ! {
    let mut hoard = Vec::new();
    loop {
        hoard.push(black_box(vec![1_u8; 1 << 20]));
    }
}

/// Tries, in order, the environment, the filesystem, another tool and an
/// ungranted state key, logging each outcome as a warning; a success is logged
/// too, so that a test can see a leak rather than just a missing refusal.
pub(crate) fn reach(phase: &str) {
    report(phase, "env HOME", std::env::var("HOME"));
    report(
        phase,
        "read /etc/passwd",
        std::fs::read_to_string("/etc/passwd"),
    );
    report(
        phase,
        "call hostile.echo",
        tools::call("hostile.echo", &json!({})),
    );
    report(phase, "set secret.flag", state::set("secret.flag", &true));
}

fn report<T: std::fmt::Debug, E: std::fmt::Display>(
    phase: &str,
    attempt: &str,
    outcome: Result<T, E>,
) {
    match outcome {
        Ok(value) => log::warn(&format!("{phase}: {attempt} succeeded: {value:?}")),
        Err(error) => log::warn(&format!("{phase}: {attempt} refused: {error}")),
    }
}
