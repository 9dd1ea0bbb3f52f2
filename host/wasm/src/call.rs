//! One tool call, end to end: look the tool up, validate the arguments against
//! its schema, run it as a guarded call with the capabilities its bundle was
//! granted, check what it returned, and give back its outcome: the result,
//! what it staged when it succeeded, and its audit trail either way.

use std::sync::Arc;

use cordon_kernel::{
    CallContext, FileWrites, NestedCalls, StateReader, ToolCallOutcome, ToolError, ToolErrorKind,
    ToolFuture, ToolOutput, schema_problems, unknown_tool,
};
use serde_json::Value;

use crate::audit::Audit;
use crate::bindings::cordon::plugin::types as wit;
use crate::bundle::Exports;
use crate::capabilities::dirs::unreached;
use crate::errors::from_wit_error;
use crate::guarded::{self, Body, check_size};
use crate::plugins::PluginsInner;
use crate::sandbox::builder::CallBuilder;

/// What a tool's `call` returns.
type Returned = Result<wit::ToolOutput, wit::ToolError>;

/// Call `name` with `args` in `context`.
pub(crate) fn invoke<'a>(
    plugins: &'a Arc<PluginsInner>,
    name: &'a str,
    args: Value,
    context: CallContext,
) -> ToolFuture<'a> {
    Box::pin(async move {
        let Some(entry) = plugins.tools.get(name) else {
            let names = plugins.tools.keys().map(String::as_str);
            return failed(ToolErrorKind::NotFound, unknown_tool(name, names));
        };
        if let Some(problems) = schema_problems(&entry.validator, &args) {
            return failed(
                ToolErrorKind::InvalidInput,
                format!("arguments do not match the schema of `{name}`: {problems}"),
            );
        }
        let bundle = &entry.bundle;
        let Exports::Tool(exports) = &bundle.exports else {
            return failed(
                ToolErrorKind::NotFound,
                format!("bundle `{}` provides no tools", bundle.manifest.name),
            );
        };
        let tool = entry.spec.name.as_str();
        let limits = bundle.manifest.limits;
        let granted = &bundle.manifest.grants.tools;
        let audit = Audit::new(bundle.id(), Arc::clone(&plugins.events));
        let handle = handle(granted, plugins, &context);
        let guard = match &context.rules {
            None => plugins.guard(bundle),
            Some(rules) => Arc::new(plugins.guard(bundle).narrowed(rules)),
        };
        let call = CallBuilder::new(bundle, tool, audit.clone(), guard)
            .within(context, handle)
            .attaching();
        // Written straight to a buffer: `Display` would go through a formatter.
        let args = serde_json::to_string(&args).expect("a JSON value always serializes");
        let (index, called) = (exports.call, entry.local.clone());
        let body: Body<Result<wit::ToolOutput, wit::ToolError>> =
            Box::new(move |store, instance| {
                Box::pin(async move {
                    let call =
                        instance.get_typed_func::<(&str, &str), (Returned,)>(&mut *store, index)?;
                    let (returned,) = call.call_async(&mut *store, (&called, &args)).await?;
                    Ok(returned)
                })
            });
        let finished = guarded::call(&plugins.engine, call, !granted.is_empty(), body).await;
        // The attached content counts against the output limit with the JSON.
        let blocks_size = finished.effects.blocks_size;
        let dirs = &bundle.manifest.grants.dirs;
        let finished = finished
            .and_then(|returned| {
                returned.map_err(|error| {
                    let mut error = from_wit_error(error, limits.output_bytes);
                    if let Some(hint) = unreached::hint(&error.message, dirs) {
                        error.message.push_str(&hint);
                    }
                    error
                })
            })
            .and_then(|output| {
                check_size(
                    &audit,
                    tool,
                    "output",
                    output.content.len() + blocks_size,
                    limits.output_bytes,
                )?;
                serde_json::from_str(&output.content).map_err(|error| {
                    ToolError::new(
                        ToolErrorKind::Failed,
                        format!("the tool returned malformed JSON: {error}"),
                    )
                })
            });
        let blocks = finished.effects.blocks;
        ToolCallOutcome {
            result: finished
                .result
                .map(|content| ToolOutput { content, blocks }),
            writes: finished.effects.writes,
            files: finished.effects.files,
            skills: Vec::new(),
            events: audit.take(),
        }
    })
}

fn failed(kind: ToolErrorKind, message: impl Into<String>) -> ToolCallOutcome {
    ToolCallOutcome::error(ToolError::new(kind, message))
}

/// The handle through which a call in `context` into a bundle granted
/// `granted` makes its own calls: the run's gate inside a run, the loaded
/// `plugins` outside one; `None` for a bundle granted none.
pub(crate) fn handle(
    granted: &[String],
    plugins: &Arc<PluginsInner>,
    context: &CallContext,
) -> Option<Arc<dyn NestedCalls>> {
    if granted.is_empty() {
        return None;
    }
    Some(context.nested.clone().unwrap_or_else(|| {
        Arc::new(Direct {
            plugins: Arc::clone(plugins),
            depth: context.depth,
            cancel: context.cancel.clone(),
        })
    }))
}

/// A tool's own calls outside a run: no agent judges them, because the
/// operator made the outer call.
struct Direct {
    plugins: Arc<PluginsInner>,
    /// How many calls enclose the calling one.
    depth: u32,
    /// The outer call's cancellation, which stops its calls too.
    cancel: cordon_kernel::Cancellation,
}

impl NestedCalls for Direct {
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        state: Arc<dyn StateReader>,
        files: Arc<FileWrites>,
    ) -> ToolFuture<'a> {
        let context = CallContext {
            state,
            nested: None,
            depth: self.depth + 1,
            files,
            skills: cordon_kernel::ActiveSkills::none(),
            cancel: self.cancel.clone(),
            asker: None,
            rules: None,
        };
        invoke(&self.plugins, name, args, context)
    }
}
