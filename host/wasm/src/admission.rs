//! Admission to the instance pool. The pooling allocator holds a fixed number
//! of instance slots; a call that found none free would fail as a crash. So
//! every call that starts a chain of instances (a tool call from the loop or
//! the command line, a hook, a backend operation, a bundle describing itself)
//! first waits for slots, bounded by its own timeout, and fails as a `limit`
//! naming the pool when none free in time.
//!
//! A call holds the slots its whole chain may need: its component's
//! footprint (one slot for every component Cordon knows of, more for a
//! component bigger than a slot), and, for a bundle granted tool calls, that
//! much again per level a chain may nest plus once for a hook or backend
//! operation running beside them; for a backend operation that may run an
//! interpreter, the biggest interpreter's too. Everything started inside an
//! admitted chain (nested calls, their hooks, a workspace tool they call, an
//! interpreter a shell runs) runs on the chain's slots, so a chain never
//! waits on itself.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::capabilities::tools::MAX_CALL_DEPTH;

tokio::task_local! {
    /// Set while a future runs on an admitted chain's slots.
    static ADMITTED: ();
}

/// The slots of the instance pool.
pub(crate) struct Admission {
    slots: Arc<Semaphore>,
    size: u32,
}

/// No slot freed in time.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "no instance slot freed within {waited} ms: all {size} slots of the instance pool are busy; raise it with `--max-instances N` or `max-instances` in the operator config"
)]
pub(crate) struct PoolFull {
    pub(crate) size: u32,
    pub(crate) waited: u128,
}

/// Whether the current task runs on an admitted chain's slots.
pub(crate) fn inside_chain() -> bool {
    ADMITTED.try_with(|()| ()).is_ok()
}

/// Run `future` on the current chain's slots if `inside`: how work handed to
/// another thread keeps its chain.
pub(crate) async fn within<F: Future>(inside: bool, future: F) -> F::Output {
    if inside {
        ADMITTED.scope((), future).await
    } else {
        future.await
    }
}

impl Admission {
    /// A pool of `size` slots.
    pub(crate) fn new(size: u32) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(size as usize)),
            size,
        }
    }

    /// How many slots the pool has.
    pub(crate) fn size(&self) -> u32 {
        self.size
    }

    /// Run `future` once the slots its chain needs are free: `slots` for
    /// one instance, or enough for a chain of nested calls when `nests`,
    /// and `reserved` more for what it starts beside (an interpreter a
    /// backend's shell runs). Waits at most `timeout`.
    pub(crate) async fn run<F: Future>(
        &self,
        slots: u32,
        nests: bool,
        reserved: u32,
        timeout: Duration,
        future: F,
    ) -> Result<F::Output, PoolFull> {
        if inside_chain() {
            return Ok(future.await);
        }
        let levels = if nests { MAX_CALL_DEPTH + 1 } else { 1 };
        let wanted = levels
            .saturating_mul(slots.max(1))
            .saturating_add(reserved)
            .min(self.size.max(1));
        let slots = tokio::time::timeout(timeout, self.slots.acquire_many(wanted))
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or(PoolFull {
                size: self.size,
                waited: timeout.as_millis(),
            })?;
        let output = ADMITTED.scope((), future).await;
        drop(slots);
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_waits_for_a_slot_and_gives_up_at_its_timeout() {
        let pool = Arc::new(Admission::new(1));
        let (release, held) = tokio::sync::oneshot::channel::<()>();
        let holder = {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move {
                pool.run(1, false, 0, Duration::from_secs(5), async {
                    held.await.ok();
                })
                .await
            })
        };
        tokio::task::yield_now().await;
        let full = pool
            .run(1, false, 0, Duration::from_millis(20), async {})
            .await
            .unwrap_err();
        assert_eq!(full.size, 1);
        assert!(full.to_string().contains("--max-instances"), "{full}");
        let waiting = {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move {
                pool.run(1, false, 0, Duration::from_secs(5), async { 7 })
                    .await
            })
        };
        release.send(()).unwrap();
        holder.await.unwrap().unwrap();
        assert_eq!(waiting.await.unwrap().unwrap(), 7);
    }

    #[tokio::test]
    async fn work_inside_a_chain_runs_on_the_chains_slots() {
        let pool = Admission::new(1);
        let nested = pool
            .run(1, false, 0, Duration::from_secs(1), async {
                assert!(inside_chain());
                pool.run(1, false, 0, Duration::from_millis(10), async { 3 })
                    .await
            })
            .await
            .unwrap();
        assert_eq!(nested.unwrap(), 3);
        assert!(!inside_chain());
    }
}
