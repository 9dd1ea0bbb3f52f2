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
//! waits on itself. The slots stay held until the chain's instance is taken
//! down ([`crate::teardown`]), which may be after its answer has gone, so a
//! call admitted meanwhile never finds the pool short of a slot it counted.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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

    /// How many slots calls hold now.
    pub(crate) fn held(&self) -> u32 {
        let free = u32::try_from(self.slots.available_permits()).unwrap_or(u32::MAX);
        self.size.saturating_sub(free)
    }

    /// Hold the slots a chain needs once they are free: `slots` for one
    /// instance, or enough for a chain of nested calls when `nests`, and
    /// `reserved` more for what it starts beside (an interpreter a backend's
    /// shell runs). Waits at most `timeout`. Work already inside a chain
    /// runs on its slots and holds none of its own.
    pub(crate) async fn admit(
        &self,
        slots: u32,
        nests: bool,
        reserved: u32,
        timeout: Duration,
    ) -> Result<Held, PoolFull> {
        if inside_chain() {
            return Ok(Held(None));
        }
        let levels = if nests { MAX_CALL_DEPTH + 1 } else { 1 };
        let wanted = levels
            .saturating_mul(slots.max(1))
            .saturating_add(reserved)
            .min(self.size.max(1));
        let permit =
            tokio::time::timeout(timeout, Arc::clone(&self.slots).acquire_many_owned(wanted))
                .await
                .ok()
                .and_then(Result::ok)
                .ok_or(PoolFull {
                    size: self.size,
                    waited: timeout.as_millis(),
                })?;
        Ok(Held(Some(permit)))
    }
}

/// Slots of the pool held for one chain, freed when this is dropped; none
/// for work inside a chain, which runs on the chain's.
pub(crate) struct Held(Option<OwnedSemaphorePermit>);

impl Held {
    /// Run `future` on these slots: whatever it starts runs on them too.
    pub(crate) async fn scope<F: Future>(&self, future: F) -> F::Output {
        ADMITTED.scope((), future).await
    }

    /// Whether these are a chain's own slots, rather than the enclosing
    /// chain's.
    pub(crate) fn starts_chain(&self) -> bool {
        self.0.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `future` on one slot of `pool`, waiting at most `timeout`.
    async fn run<F: Future>(
        pool: &Admission,
        timeout: Duration,
        future: F,
    ) -> Result<F::Output, PoolFull> {
        let held = pool.admit(1, false, 0, timeout).await?;
        Ok(held.scope(future).await)
    }

    #[tokio::test]
    async fn a_call_waits_for_a_slot_and_gives_up_at_its_timeout() {
        let pool = Arc::new(Admission::new(1));
        let (release, held) = tokio::sync::oneshot::channel::<()>();
        let holder = {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move {
                run(&pool, Duration::from_secs(5), async {
                    held.await.ok();
                })
                .await
            })
        };
        tokio::task::yield_now().await;
        let full = run(&pool, Duration::from_millis(20), async {})
            .await
            .unwrap_err();
        assert_eq!(full.size, 1);
        assert!(full.to_string().contains("--max-instances"), "{full}");
        let waiting = {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move { run(&pool, Duration::from_secs(5), async { 7 }).await })
        };
        release.send(()).unwrap();
        holder.await.unwrap().unwrap();
        assert_eq!(waiting.await.unwrap().unwrap(), 7);
    }

    #[tokio::test]
    async fn work_inside_a_chain_runs_on_the_chains_slots() {
        let pool = Admission::new(1);
        let nested = run(&pool, Duration::from_secs(1), async {
            assert!(inside_chain());
            let inner = pool
                .admit(1, false, 0, Duration::from_millis(10))
                .await
                .unwrap();
            assert!(!inner.starts_chain());
            inner.scope(async { 3 }).await
        })
        .await
        .unwrap();
        assert_eq!(nested, 3);
        assert!(!inside_chain());
    }

    #[tokio::test]
    async fn slots_stay_held_after_the_work_until_they_are_let_go() {
        let pool = Admission::new(1);
        let held = pool
            .admit(1, false, 0, Duration::from_millis(10))
            .await
            .unwrap();
        assert!(held.starts_chain());
        held.scope(async {}).await;
        assert!(
            pool.admit(1, false, 0, Duration::from_millis(10))
                .await
                .is_err(),
            "the work ended, but its slots are still held"
        );
        drop(held);
        assert!(
            pool.admit(1, false, 0, Duration::from_millis(10))
                .await
                .is_ok()
        );
    }
}
