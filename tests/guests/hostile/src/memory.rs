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

/// The part of a pool slot kept resident between instances is the first
/// MiB of linear memory, where Rust lays out the stack, growing down from
/// 1 MiB; no call reaches this deep into it.
const DEEP_STACK: std::ops::Range<usize> = (64 << 10)..(512 << 10);
/// The end of the part kept resident.
const RESIDENT_END: usize = 1 << 20;

/// Zeroed memory beyond the part kept resident.
const SCRATCH_BYTES: usize = 3 << 20;
static SCRATCH: [AtomicU8; SCRATCH_BYTES] = [const { AtomicU8::new(0) }; SCRATCH_BYTES];

hostile_tool!(
    Scratch,
    "hostile.scratch",
    "Count the bytes an earlier call left in memory no call touches (the deep stack and 3 MiB of zeroed data), then mark every page of it.",
    NoArgs,
    |_| {
        let local = 0u8;
        let stack = std::hint::black_box(&local) as *const u8 as usize;
        let scratch = SCRATCH.as_ptr() as usize;
        if !(DEEP_STACK.end..RESIDENT_END).contains(&stack) || scratch < RESIDENT_END {
            return Err(cordon_sdk::ToolError::Failed(format!(
                "memory is not laid out as the probe expects: stack at {stack:#x}, scratch at {scratch:#x}"
            )));
        }
        // SAFETY: the deep stack is linear memory this call's own frames
        // never reach; reading and writing it raw is what a hostile component
        // would do to find what an earlier one left.
        let deep = DEEP_STACK
            .filter(|&address| unsafe { std::ptr::read_volatile(address as *const u8) } != 0)
            .count();
        let beyond = SCRATCH
            .iter()
            .filter(|byte| byte.load(Ordering::Relaxed) != 0)
            .count();
        for address in DEEP_STACK.step_by(512) {
            // SAFETY: as above.
            unsafe { std::ptr::write_volatile(address as *mut u8, 0xA5) };
        }
        for byte in SCRATCH.iter().step_by(512) {
            byte.store(0xA5, Ordering::Relaxed);
        }
        Ok(json!({ "left": deep + beyond }))
    }
);
