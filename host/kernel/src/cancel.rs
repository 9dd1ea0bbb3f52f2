//! Stopping calls already running: whoever asked for a step's calls (an MCP
//! client's `notifications/cancelled`) cancels them, and the tool set running
//! each one awaits the cancellation beside the call, stops its instance, and
//! answers `cancelled`. The step still commits, with the truth: which calls
//! finished and which were stopped.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// A cancellation that calls share; cloning it shares it.
#[derive(Debug, Clone, Default)]
pub struct Cancellation {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    set: AtomicBool,
    waiting: Mutex<Vec<Waker>>,
}

impl Cancellation {
    /// A cancellation nobody has set yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancel every call sharing this cancellation.
    pub fn cancel(&self) {
        self.inner.set.store(true, Ordering::SeqCst);
        let waiting = std::mem::take(
            &mut *self
                .inner
                .waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for waker in waiting {
            waker.wake();
        }
    }

    /// Whether it was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.set.load(Ordering::SeqCst)
    }

    /// A future that completes once it is cancelled.
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled { cancellation: self }
    }
}

/// The future [`Cancellation::cancelled`] returns.
#[derive(Debug)]
pub struct Cancelled<'a> {
    cancellation: &'a Cancellation,
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        let inner = &self.cancellation.inner;
        if inner.set.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        let mut waiting = inner.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        // Checked again under the lock: a cancel between the two checks has
        // taken the list already, and would never wake this waker.
        if inner.set.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        if !waiting.iter().any(|waker| waker.will_wake(context.waker())) {
            waiting.push(context.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_cancel_wakes_every_waiter_and_later_waits_end_at_once() {
        let cancellation = Cancellation::new();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let cancellation = cancellation.clone();
                tokio::spawn(async move { cancellation.cancelled().await })
            })
            .collect();
        tokio::task::yield_now().await;
        assert!(!cancellation.is_cancelled());
        cancellation.cancel();
        for waiter in waiters {
            waiter.await.unwrap();
        }
        cancellation.cancelled().await;
        assert!(cancellation.is_cancelled());
    }
}
