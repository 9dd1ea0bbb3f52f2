//! Taking a finished call's instance down. Dropping a store frees its
//! instance's slot in the pool: the memories and tables are reset to the
//! component's image, which is a good part of what a trivial call costs.
//! Nothing of the call is needed by then (its result and what it staged
//! were taken out of the store), so a call that started a chain hands its
//! store to a task that drops it, with the chain's pool slots, once the
//! tasks already waiting (the answer on its way to whoever asked) have run.
//! Until then the slots stay held, so no call is admitted to a slot that is
//! not yet free; a call inside a chain drops its store in place, on the
//! chain's slots.

use wasmtime::Store;

use crate::admission::Held;
use crate::sandbox::CallState;

/// Take down `store`, whose call ended, then free the slots `held` for it.
pub(crate) fn take_down(store: Store<CallState>, held: Held) {
    if !held.starts_chain() {
        drop(store);
        return;
    }
    tokio::spawn(async move {
        // Let the tasks already woken, the one sending the answer among
        // them, run first.
        tokio::task::yield_now().await;
        drop(store);
        drop(held);
    });
}
