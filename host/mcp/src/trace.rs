//! Which trace a served request belongs to. A client that traces its calls
//! sends W3C Trace Context: as `traceparent` and `tracestate` headers over
//! HTTP, or in the request's `_meta` (the only place a stdio request can
//! carry it). The call's span becomes a child of the client's span, so one
//! trace shows the client's work and Cordon's together.

use rmcp::service::{RequestContext, RoleServer};
use tracing::Span;

/// The span of a served call of `tool`, under the client's trace when
/// `context` carries one.
pub(crate) fn served_call(tool: &str, context: &RequestContext<RoleServer>) -> Span {
    let span = cordon_kernel::spans::served_call(tool);
    if span.is_disabled() {
        return span;
    }
    let header = |name: &str| {
        context
            .extensions
            .get::<::http::request::Parts>()
            .and_then(|parts| parts.headers.get(name))
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let meta = |name: &str| {
        context
            .meta
            .get(name)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let carried = |name: &str| header(name).or_else(|| meta(name));
    if let Some(traceparent) = carried("traceparent") {
        cordon_telemetry::context::follow(&span, &traceparent, carried("tracestate").as_deref());
    }
    span
}
