//! One guarded call into a bundle, the same for a tool call, a hook phase, a
//! backend operation and a bundle describing itself: wait for a slot of the
//! instance pool, build the call's store from its capabilities with the
//! bundle's limits (memory, fuel, epoch yields), run instantiation and the
//! body under the bundle's timeout, and classify how it ended (value, trap,
//! limit, timeout, host failure) into a typed result, every limit hit an
//! audit event. What the call staged comes back only when it succeeded.

use std::future::Future;
use std::pin::Pin;

use cordon_kernel::{LimitKind, ToolError, ToolErrorKind};
use wasmtime::component::Instance;
use wasmtime::{PoolConcurrencyLimitError, Store, Trap};

use crate::capabilities::log::{CommandOutput, LogLimitExceeded};
use crate::capabilities::staging::StagingLimitExceeded;
use crate::capabilities::state::StateUnavailable;
use crate::engine::Engine;
use crate::sandbox::builder::CallBuilder;
use crate::sandbox::{CallState, Effects};

/// The body of one call: given the store and a fresh instance, call the
/// export. Owns what it needs so that it borrows only the store.
pub(crate) type Body<T> = Box<
    dyn for<'s> FnOnce(
            &'s mut Store<CallState>,
            Instance,
        ) -> Pin<Box<dyn Future<Output = wasmtime::Result<T>> + Send + 's>>
        + Send,
>;

/// How a guarded call ended.
pub(crate) struct Finished<T> {
    /// The value, or why there is none.
    pub(crate) result: Result<T, ToolError>,
    /// What the call staged; empty unless `result` is `Ok`.
    pub(crate) effects: Effects,
    /// What an interpreter's run printed, however it ended.
    pub(crate) output: Option<CommandOutput>,
}

impl<T> Finished<T> {
    fn failed(error: ToolError) -> Self {
        Self {
            result: Err(error),
            effects: Effects::default(),
            output: None,
        }
    }

    /// Check the value with `check`; a value it refuses leaves no effect.
    pub(crate) fn and_then<U>(self, check: impl FnOnce(T) -> Result<U, ToolError>) -> Finished<U> {
        match self.result.and_then(check) {
            Ok(value) => Finished {
                result: Ok(value),
                effects: self.effects,
                output: self.output,
            },
            Err(error) => Finished {
                output: self.output,
                ..Finished::failed(error)
            },
        }
    }
}

/// Run `body` in a fresh instance of the bundle `call` is built for, once
/// the instance pool has a slot for it: enough for a chain of nested calls
/// when `nests`. The instance is taken down once the call's outcome is out
/// of it ([`crate::teardown`]).
pub(crate) async fn call<T>(
    engine: &Engine,
    call: CallBuilder<'_>,
    nests: bool,
    body: Body<T>,
) -> Finished<T> {
    let bundle = call.bundle();
    let label = call.label();
    let audit = call.audit().clone();
    let timeout = call.timeout();
    let cancel = call.cancel();
    let reserved = call.reserved();
    let held = match engine
        .admission
        .admit(bundle.footprint.slots(), nests, reserved, timeout)
        .await
    {
        Ok(held) => held,
        Err(full) => {
            return Finished::failed(audit.exceeded(label, LimitKind::Instances, full.to_string()));
        }
    };
    engine.teardown.sweep();
    let mut store = match call.build().and_then(|state| limited(engine, state)) {
        Ok(store) => store,
        Err(error) => {
            return Finished::failed(ToolError::new(
                ToolErrorKind::Failed,
                format!("cannot prepare the sandbox: {error:#}"),
            ));
        }
    };
    let returned = {
        // Pinned where it is, so that waiting on it beside the cancellation
        // moves nothing.
        let mut running = std::pin::pin!(held.scope(tokio::time::timeout(timeout, async {
            let instance = bundle.pre.instantiate_async(&mut store).await?;
            body(&mut store, instance).await
        })));
        // Dropping the running call drops its instance: a cancelled call
        // stops where it is, and nothing it staged survives. The call is polled
        // first, so a call that ends at once never waits on its cancellation.
        match cancel {
            None => running.await,
            Some(cancel) if cancel.is_cancelled() => return Finished::failed(cancelled(label)),
            Some(cancel) => tokio::select! {
                biased;
                returned = &mut running => returned,
                () = cancel.cancelled() => return Finished::failed(cancelled(label)),
            },
        }
    };
    let state = store.data_mut();
    let output = state
        .capabilities
        .vfs
        .is_some()
        .then(|| state.capabilities.log.command_output());
    let finished = match settle(returned, state) {
        Ok(value) => Finished {
            result: Ok(value),
            effects: state.take_effects(),
            output,
        },
        Err(error) => Finished {
            output,
            ..Finished::failed(error)
        },
    };
    engine.teardown.take_down(store, held);
    finished
}

/// Why a call that whoever asked for it cancelled has no value.
fn cancelled(label: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Cancelled,
        format!("{label} was cancelled by whoever asked for it; its instance was stopped"),
    )
}

/// A store holding `state`, with its bundle's limits applied.
fn limited(engine: &Engine, state: CallState) -> wasmtime::Result<Store<CallState>> {
    let fuel = state.bundle.manifest.limits.fuel;
    let mut store = Store::new(&engine.engine, state);
    store.limiter(|state| &mut state.limiter);
    store.set_fuel(fuel)?;
    // Yield to the scheduler at every epoch tick, so the wall-clock timeout can
    // fire even while guest code spins without calling the host.
    store.epoch_deadline_async_yield_and_update(1);
    Ok(store)
}

/// Turn how a call ended into its value or a typed error, reporting what the
/// component printed and every limit it hit to its trail.
fn settle<T>(
    returned: Result<wasmtime::Result<T>, tokio::time::error::Elapsed>,
    state: &CallState,
) -> Result<T, ToolError> {
    state.capabilities.log.flush(&state.audit);
    let exceeded =
        |kind: LimitKind, detail: String| state.audit.exceeded(&state.label, kind, detail);
    match returned {
        Ok(Ok(value)) => Ok(value),
        Err(_elapsed) => Err(exceeded(
            LimitKind::Timeout,
            format!("did not finish within {} ms", state.timeout.as_millis()),
        )),
        Ok(Err(error)) => Err(match classify(&error, state) {
            Stopped::Limit(kind, detail) => exceeded(kind, detail),
            Stopped::HostFailure(message) => ToolError::new(ToolErrorKind::Failed, message),
            Stopped::Crashed(message) => ToolError::new(ToolErrorKind::Crashed, message),
        }),
    }
}

/// Why a component stopped.
enum Stopped {
    Limit(LimitKind, String),
    HostFailure(String),
    Crashed(String),
}

/// Why the component stopped, from the error and what the sandbox observed.
fn classify(error: &wasmtime::Error, state: &CallState) -> Stopped {
    let limits = state.bundle.manifest.limits;
    if state.limiter.memory_refused {
        return Stopped::Limit(
            LimitKind::Memory,
            format!("memory limit of {} MiB exceeded", limits.memory_bytes >> 20),
        );
    }
    if let Some(full) = error.downcast_ref::<PoolConcurrencyLimitError>() {
        return Stopped::Limit(
            LimitKind::Instances,
            format!("the instance pool ran out of room: {full}; raise it with `--max-instances N`"),
        );
    }
    if let Some(StateUnavailable(message)) = error.downcast_ref::<StateUnavailable>() {
        return Stopped::HostFailure(message.clone());
    }
    if let Some(exceeded) = error.downcast_ref::<LogLimitExceeded>() {
        let kind = if exceeded.command {
            LimitKind::Output
        } else {
            LimitKind::Log
        };
        return Stopped::Limit(kind, exceeded.to_string());
    }
    if let Some(StagingLimitExceeded(detail)) = error.downcast_ref::<StagingLimitExceeded>() {
        return Stopped::Limit(LimitKind::Staging, detail.clone());
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => {
            return Stopped::Limit(
                LimitKind::Fuel,
                format!("fuel limit of {} exhausted", limits.fuel),
            );
        }
        Some(Trap::Interrupt) => {
            return Stopped::Limit(LimitKind::Timeout, "interrupted".into());
        }
        _ => {}
    }
    let cause = error
        .downcast_ref::<Trap>()
        .map_or_else(|| format!("{error:#}"), ToString::to_string);
    Stopped::Crashed(match state.capabilities.log.last_words() {
        Some(line) => format!("{cause} ({line})"),
        None => cause,
    })
}

/// Refuse a value of `len` bytes that `label` returned as `what`, when it is
/// larger than the bundle's output limit `max`.
pub(crate) fn check_size(
    audit: &crate::audit::Audit,
    label: &str,
    what: &str,
    len: usize,
    max: usize,
) -> Result<(), ToolError> {
    if len <= max {
        return Ok(());
    }
    Err(audit.exceeded(
        label,
        LimitKind::Output,
        format!("{what} of {len} bytes exceeds the limit of {max} bytes"),
    ))
}
