//! Who watches the calls running on a task live: the requester of a served
//! call, whose client is shown the components' progress and log lines as
//! they happen. A host has one live event sink for every call it runs; when
//! requests run at once, that sink asks [`watcher`] whose call emitted an
//! event, so each client sees its own calls' events and no other's. The
//! watcher is in place while its future is polled, on whatever thread polls
//! it; work a call hands to another task takes its watcher along
//! ([`watched_by`]).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::event::EventSink;

thread_local! {
    /// The watcher of the future being polled on this thread.
    static WATCHER: RefCell<Option<Arc<dyn EventSink>>> = const { RefCell::new(None) };
}

/// Run `future`, its calls watched by `watcher`.
pub async fn watched<F: Future>(watcher: Arc<dyn EventSink>, future: F) -> F::Output {
    Watched {
        watcher: Some(watcher),
        future: Box::pin(future),
    }
    .await
}

/// Run `future` watched by `watcher` when there is one: how work handed to
/// another thread keeps the watcher of the call it serves.
pub async fn watched_by<F: Future>(watcher: Option<Arc<dyn EventSink>>, future: F) -> F::Output {
    match watcher {
        Some(watcher) => watched(watcher, future).await,
        None => future.await,
    }
}

/// The watcher of the calls running on this task, if they have one.
pub fn watcher() -> Option<Arc<dyn EventSink>> {
    WATCHER.with(|current| current.borrow().clone())
}

/// A future polled with its watcher in place.
struct Watched<F> {
    watcher: Option<Arc<dyn EventSink>>,
    future: Pin<Box<F>>,
}

impl<F: Future> Future for Watched<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let outer = WATCHER.with(|current| current.replace(this.watcher.clone()));
        // Put the outer watcher back even when the poll panics.
        let _restore = Restore(outer);
        this.future.as_mut().poll(context)
    }
}

/// The watcher to put back once a poll ends.
struct Restore(Option<Arc<dyn EventSink>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let outer = self.0.take();
        WATCHER.with(|current| *current.borrow_mut() = outer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, EventLog, LogLevel};

    fn line(message: &str) -> Event {
        Event::Log {
            bundle: "b".into(),
            level: LogLevel::Info,
            message: message.into(),
        }
    }

    #[tokio::test]
    async fn each_task_sees_its_own_watcher_and_none_outside() {
        assert!(watcher().is_none());
        let (first, second) = (Arc::new(EventLog::new()), Arc::new(EventLog::new()));
        let emit = |message: &'static str| async move {
            tokio::task::yield_now().await;
            watcher().expect("watched").emit(line(message));
        };
        tokio::join!(
            watched(first.clone(), emit("one")),
            watched(second.clone(), emit("two")),
        );
        // A task spawned from a watched one is watched only when told.
        let handed = watched(first.clone(), async {
            tokio::spawn(watched_by(watcher(), emit("handed")))
                .await
                .unwrap();
        });
        handed.await;
        assert_eq!(first.snapshot(), vec![line("one"), line("handed")]);
        assert_eq!(second.snapshot(), vec![line("two")]);
    }
}
