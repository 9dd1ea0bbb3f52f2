//! What the workspace benches share: calling a built-in tool outside a run,
//! timing it, and the median of the times.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_kernel::{CallContext, StateSnapshot, ToolSet};
use serde_json::Value;

/// Call `name` with `args`, which must succeed, and return its output.
pub(crate) async fn call(tools: &dyn ToolSet, name: &str, args: Value) -> Value {
    tools
        .call(
            name,
            args,
            CallContext::outside_run(Arc::new(StateSnapshot::default())),
        )
        .await
        .result
        .unwrap_or_else(|error| panic!("{name}: {error}"))
        .content
}

/// How long `work` took.
pub(crate) async fn timed(work: impl std::future::Future<Output = Value>) -> Duration {
    let started = Instant::now();
    std::hint::black_box(work.await);
    started.elapsed()
}

/// The median of `times`.
pub(crate) fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}
