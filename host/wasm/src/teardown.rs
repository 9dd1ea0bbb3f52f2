//! Taking a finished call's instance down. Dropping a store frees its
//! instance's slot in the pool: the memories and tables are reset to the
//! component's image, which is a good part of what a trivial call costs.
//!
//! Where that cost is paid depends on the runtime. On a multi-threaded
//! runtime the store is dropped in place: handing it to another task would
//! wake another worker thread for every call, which costs more than the
//! drop itself. On a current-thread runtime (`cordon mcp`) nothing else runs
//! while the drop does, so a call that started a chain parks its store on
//! the [`Teardown`] queue, and one task drops everything parked once the
//! tasks already waiting (the answer on its way to whoever asked) have run:
//! one task for all the calls that end before it runs, not one per call.
//! The next call to start on the thread sweeps the queue first
//! ([`Teardown::sweep`]), so its instance takes the slot just freed, whose
//! pages are still warm, and a thread that never yields between calls
//! holds one finished instance at most. Until a store is dropped its slots
//! stay held, so no call is admitted to a slot that is not yet free; a call
//! inside a chain drops its store in place, on the chain's slots.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::runtime::{Handle, RuntimeFlavor};
use wasmtime::Store;

use crate::admission::Held;
use crate::sandbox::CallState;

/// The stores of finished calls waiting to be dropped, with their slots.
#[derive(Default)]
pub(crate) struct Teardown {
    parked: Arc<Mutex<Parked>>,
}

#[derive(Default)]
struct Parked {
    /// Each store before the slots it holds: a tuple drops in field order.
    stores: Vec<(Store<CallState>, Held)>,
    /// Whether a task that drops them is on its way.
    reaper: bool,
}

impl Teardown {
    /// Take down `store`, whose call ended, then free the slots `held` for it.
    pub(crate) fn take_down(&self, store: Store<CallState>, held: Held) {
        if !held.starts_chain() || !on_current_thread() {
            drop(store);
            drop(held);
            return;
        }
        let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        parked.stores.push((store, held));
        if parked.reaper {
            return;
        }
        parked.reaper = true;
        drop(parked);
        let reaper = Reaper(Arc::clone(&self.parked));
        tokio::spawn(async move {
            // Let the tasks already woken, the one sending the answer among
            // them, run first.
            tokio::task::yield_now().await;
            drop(reaper);
        });
    }

    /// Drop what finished calls parked, before a new call takes a slot.
    pub(crate) fn sweep(&self) {
        drain(&self.parked, false);
    }
}

/// Drops what is parked when it is dropped: after its task has yielded once,
/// or with its task if the runtime shuts down first.
struct Reaper(Arc<Mutex<Parked>>);

impl Drop for Reaper {
    fn drop(&mut self) {
        drain(&self.0, true);
    }
}

/// Drop every store `parked` holds, each outside its lock, keeping the
/// queue's room for the next; `reaped` when the reaper does, so that the
/// next parked store sends another.
fn drain(parked: &Mutex<Parked>, reaped: bool) {
    let lock = || parked.lock().unwrap_or_else(PoisonError::into_inner);
    if reaped {
        lock().reaper = false;
    }
    while let Some(store) = lock().stores.pop() {
        drop(store);
    }
}

/// Whether this call runs on a current-thread runtime.
fn on_current_thread() -> bool {
    Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == RuntimeFlavor::CurrentThread)
}
