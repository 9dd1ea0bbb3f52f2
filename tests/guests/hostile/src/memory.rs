//! Probes for state left behind in a component instance between calls.

use std::sync::atomic::{AtomicU64, Ordering};

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
