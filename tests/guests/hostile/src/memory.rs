//! Probes for state left behind in a component instance between calls.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use crate::args::NoArgs;
use serde_json::json;

static CALLS: AtomicU64 = AtomicU64::new(0);

hostile_tool!(
    Counter,
    "hostile.counter",
    "Count calls in a global: a fresh instance per call always answers 1.",
    NoArgs,
    |_| Ok(json!({ "calls": CALLS.fetch_add(1, Ordering::Relaxed) + 1 }))
);

/// Zeroed memory spanning the part of a pool slot kept resident between
/// instances and the part beyond it.
const SCRATCH_BYTES: usize = 3 << 20;
static SCRATCH: [AtomicU8; SCRATCH_BYTES] = [const { AtomicU8::new(0) }; SCRATCH_BYTES];

hostile_tool!(
    Scratch,
    "hostile.scratch",
    "Count the bytes an earlier call left in 3 MiB of zeroed memory, then mark every page of it.",
    NoArgs,
    |_| {
        let left = SCRATCH
            .iter()
            .filter(|byte| byte.load(Ordering::Relaxed) != 0)
            .count();
        for byte in SCRATCH.iter().step_by(512) {
            byte.store(0xA5, Ordering::Relaxed);
        }
        Ok(json!({ "left": left }))
    }
);
