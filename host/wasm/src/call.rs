//! One tool call, end to end: look the tool up, validate the arguments against
//! its schema, wait for a slot of the instance pool, run it in a fresh,
//! limited instance, and turn whatever happened (output, tool error, trap,
//! limit, timeout) into a typed result plus the state writes to commit if it
//! succeeded.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use cordon_kernel::{
    CallContext, Event, LimitKind, ToolCallOutcome, ToolError, ToolErrorKind, ToolOutput,
};
use serde_json::Value;
use wasmtime::{Store, Trap};

use crate::admission::PoolFull;
use crate::bindings::cordon::plugin::types as wit;
use crate::bundle::{Bundle, Exports};
use crate::plugins::{PluginsInner, ToolEntry};
use crate::sandbox::{CallState, LogLimitExceeded, StateUnavailable};
use crate::workspace::StagingLimitExceeded;

fn failed(kind: ToolErrorKind, message: impl Into<String>) -> ToolCallOutcome {
    refused(ToolError::new(kind, message))
}

fn refused(error: ToolError) -> ToolCallOutcome {
    ToolCallOutcome {
        result: Err(error),
        writes: Vec::new(),
    }
}

/// Call `name` with `args` in `context`.
pub(crate) fn invoke<'a>(
    plugins: &'a Arc<PluginsInner>,
    name: &'a str,
    args: Value,
    context: CallContext,
) -> Pin<Box<dyn Future<Output = ToolCallOutcome> + Send + 'a>> {
    Box::pin(async move {
        let Some(entry) = plugins.tools.get(name) else {
            return failed(ToolErrorKind::NotFound, format!("no tool named `{name}`"));
        };
        if let Some(problems) = schema_problems(&entry.validator, &args) {
            return failed(
                ToolErrorKind::InvalidInput,
                format!("arguments do not match the schema of `{name}`: {problems}"),
            );
        }
        let bundle = &entry.bundle;
        let limits = bundle.manifest.limits;
        let nests = !bundle.manifest.grants.tools.is_empty();
        let ran = plugins
            .engine
            .admission
            .run(
                nests,
                limits.timeout,
                run(plugins, context, entry, args.to_string()),
            )
            .await;
        ran.unwrap_or_else(|full| refused(pool_full(plugins, bundle, &entry.spec.name, &full)))
    })
}

/// The error of a call that found no free slot in the instance pool.
pub(crate) fn pool_full(
    plugins: &PluginsInner,
    bundle: &Bundle,
    label: &str,
    full: &PoolFull,
) -> ToolError {
    let detail = full.to_string();
    plugins.events.emit(Event::LimitExceeded {
        bundle: bundle.manifest.name.clone(),
        tool: label.to_owned(),
        limit: LimitKind::Instances,
        detail: detail.clone(),
    });
    ToolError::new(ToolErrorKind::Limit, detail)
}

/// Why `args` break the schema `validator` checks, each problem with where it
/// is; `None` when they fit.
pub(crate) fn schema_problems(validator: &jsonschema::Validator, args: &Value) -> Option<String> {
    let problems: Vec<String> = validator
        .iter_errors(args)
        .map(|error| {
            let at = error.instance_path().to_string();
            if at.is_empty() {
                error.to_string()
            } else {
                format!("at {at}: {error}")
            }
        })
        .collect();
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// A store for one call into `bundle` in `context`, with the bundle's limits
/// applied.
pub(crate) fn limited_store(
    plugins: &Arc<PluginsInner>,
    context: CallContext,
    bundle: &Arc<Bundle>,
    tool: &str,
) -> wasmtime::Result<Store<CallState>> {
    let state = CallState::new(Arc::clone(bundle), Arc::clone(plugins), context, tool)?;
    limit(plugins, state)
}

/// A store holding `state`, with its bundle's limits applied.
pub(crate) fn limit(
    plugins: &PluginsInner,
    state: CallState,
) -> wasmtime::Result<Store<CallState>> {
    let fuel = state.bundle.manifest.limits.fuel;
    let mut store = Store::new(&plugins.engine.engine, state);
    store.limiter(|state| &mut state.limiter);
    store.set_fuel(fuel)?;
    // Yield to the scheduler at every epoch tick, so the wall-clock timeout can
    // fire even while guest code spins without calling the host.
    store.epoch_deadline_async_yield_and_update(1);
    Ok(store)
}

async fn run(
    plugins: &Arc<PluginsInner>,
    context: CallContext,
    entry: &ToolEntry,
    args: String,
) -> ToolCallOutcome {
    let bundle = &entry.bundle;
    let tool = &entry.spec.name;
    let limits = bundle.manifest.limits;
    let Exports::Tool(indices) = &bundle.exports else {
        return failed(
            ToolErrorKind::NotFound,
            format!("bundle `{}` provides no tools", bundle.manifest.name),
        );
    };
    let mut store = match limited_store(plugins, context, bundle, tool) {
        Ok(store) => store,
        Err(error) => {
            return failed(
                ToolErrorKind::Failed,
                format!("cannot prepare the sandbox: {error:#}"),
            );
        }
    };
    let returned = tokio::time::timeout(limits.timeout, async {
        let instance = bundle.pre.instantiate_async(&mut store).await?;
        let guest = indices.load(&mut store, &instance)?;
        guest.call_call(&mut store, tool, &args).await
    })
    .await;
    let output = match settle(plugins, tool, returned, store.data()) {
        Err(error) => return refused(error),
        Ok(Err(error)) => return refused(from_wit_error(error, limits.output_bytes)),
        Ok(Ok(output)) => output,
    };
    if let Err(error) = check_size(plugins, bundle, tool, "output", output.content.len()) {
        return refused(error);
    }
    match serde_json::from_str(&output.content) {
        Ok(content) => ToolCallOutcome {
            result: Ok(ToolOutput { content }),
            writes: store.into_data().staged.into_writes(),
        },
        Err(error) => failed(
            ToolErrorKind::Failed,
            format!("the tool returned malformed JSON: {error}"),
        ),
    }
}

/// Turn how a call into a component ended into its value or a typed error,
/// reporting limits as events. `label` names the tool or hook phase called.
pub(crate) fn settle<T>(
    plugins: &PluginsInner,
    label: &str,
    returned: Result<wasmtime::Result<T>, tokio::time::error::Elapsed>,
    state: &CallState,
) -> Result<T, ToolError> {
    state.flush_stdio();
    let limits = state.bundle.manifest.limits;
    let limit = |kind: LimitKind, error_kind: ToolErrorKind, detail: String| {
        plugins.events.emit(Event::LimitExceeded {
            bundle: state.bundle.manifest.name.clone(),
            tool: label.to_owned(),
            limit: kind,
            detail: detail.clone(),
        });
        ToolError::new(error_kind, detail)
    };
    match returned {
        Ok(Ok(value)) => Ok(value),
        Err(_elapsed) => Err(limit(
            LimitKind::Timeout,
            ToolErrorKind::Timeout,
            format!("did not finish within {} ms", limits.timeout.as_millis()),
        )),
        Ok(Err(error)) => Err(match classify(&error, state) {
            Stopped::Limit(kind, detail) => {
                let error_kind = match kind {
                    LimitKind::Timeout => ToolErrorKind::Timeout,
                    _ => ToolErrorKind::Limit,
                };
                limit(kind, error_kind, detail)
            }
            Stopped::HostFailure(message) => ToolError::new(ToolErrorKind::Failed, message),
            Stopped::Crashed(message) => ToolError::new(ToolErrorKind::Crashed, message),
        }),
    }
}

/// Refuse a returned value of `len` bytes larger than the bundle's output limit.
pub(crate) fn check_size(
    plugins: &PluginsInner,
    bundle: &Bundle,
    label: &str,
    what: &str,
    len: usize,
) -> Result<(), ToolError> {
    let max = bundle.manifest.limits.output_bytes;
    if len <= max {
        return Ok(());
    }
    let detail = format!("{what} of {len} bytes exceeds the limit of {max} bytes");
    plugins.events.emit(Event::LimitExceeded {
        bundle: bundle.manifest.name.clone(),
        tool: label.to_owned(),
        limit: LimitKind::Output,
        detail: detail.clone(),
    });
    Err(ToolError::new(ToolErrorKind::Limit, detail))
}

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
    if let Some(StateUnavailable(message)) = error.downcast_ref::<StateUnavailable>() {
        return Stopped::HostFailure(message.clone());
    }
    if let Some(exceeded) = error.downcast_ref::<LogLimitExceeded>() {
        return Stopped::Limit(LimitKind::Log, exceeded.to_string());
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
    if state.stdio_full() {
        return Stopped::Limit(
            LimitKind::Log,
            format!(
                "stdout or stderr exceeded the limit of {} bytes",
                limits.log_bytes
            ),
        );
    }
    let cause = error
        .downcast_ref::<Trap>()
        .map_or_else(|| format!("{error:#}"), ToString::to_string);
    Stopped::Crashed(match state.last_words() {
        Some(line) => format!("{cause} ({line})"),
        None => cause,
    })
}

/// A component's tool error as the kernel sees it, its message cut to `max_len`.
pub(crate) fn from_wit_error(error: wit::ToolError, max_len: usize) -> ToolError {
    let (kind, message) = match error {
        wit::ToolError::InvalidInput(message) => (ToolErrorKind::InvalidInput, message),
        wit::ToolError::Denied(message) => (ToolErrorKind::Denied, message),
        wit::ToolError::Failed(message) => (ToolErrorKind::Failed, message),
        wit::ToolError::Timeout(message) => (ToolErrorKind::Timeout, message),
    };
    ToolError::new(kind, truncate(message, max_len))
}

fn truncate(mut text: String, max_len: usize) -> String {
    if text.len() > max_len {
        let mut end = max_len;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// A kernel error as a component sees it.
pub(crate) fn to_wit_error(error: ToolError) -> wit::ToolError {
    match error.kind {
        ToolErrorKind::InvalidInput => wit::ToolError::InvalidInput(error.message),
        ToolErrorKind::Denied => wit::ToolError::Denied(error.message),
        ToolErrorKind::Timeout => wit::ToolError::Timeout(error.message),
        ToolErrorKind::Failed => wit::ToolError::Failed(error.message),
        ToolErrorKind::Limit | ToolErrorKind::Crashed | ToolErrorKind::NotFound => {
            wit::ToolError::Failed(format!("{}: {}", error.kind, error.message))
        }
    }
}
