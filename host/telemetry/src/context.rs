//! A trace's context across processes and across a run's life, as W3C
//! Trace Context (`traceparent`, `tracestate`): read from a served request's
//! headers so its span joins the client's trace, written into a run's header
//! so a resumed run joins the trace it began, with a link back to it.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `traceparent` of `span`, when it belongs to an exported trace.
pub fn traceparent(span: &Span) -> Option<String> {
    if span.is_disabled() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&span.context(), &mut carrier);
    carrier.remove("traceparent")
}

/// Make `span`, not yet entered, a child of the span `traceparent` names
/// (with its `tracestate`). A malformed header is ignored: the span starts
/// a trace of its own.
pub fn follow(span: &Span, traceparent: &str, tracestate: Option<&str>) {
    if let Some(parent) = remote(traceparent, tracestate) {
        // Only a span already entered refuses a parent; none is here.
        let _ = span.set_parent(parent);
    }
}

/// Make `span`, not yet entered, go on with the trace `traceparent` began
/// (the recorded span of a run that now resumes): its child, and linked to
/// it, so a viewer shows the resumption under the run and names where it
/// came from.
pub fn resume(span: &Span, traceparent: &str) {
    if let Some(parent) = remote(traceparent, None) {
        span.add_link(parent.span().span_context().clone());
        let _ = span.set_parent(parent);
    }
}

/// The remote context `traceparent` names, when it is well formed.
fn remote(traceparent: &str, tracestate: Option<&str>) -> Option<opentelemetry::Context> {
    let mut carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    if let Some(state) = tracestate {
        carrier.insert("tracestate".to_owned(), state.to_owned());
    }
    let context = TraceContextPropagator::new().extract(&carrier);
    context.span().span_context().is_valid().then_some(context)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_well_formed_traceparent_names_a_remote_parent_and_a_broken_one_none() {
        let parent = remote(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            Some("vendor=1"),
        )
        .expect("a valid traceparent");
        let context = parent.span().span_context().clone();
        assert!(context.is_remote());
        assert_eq!(
            context.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        for broken in [
            "",
            "00-zz-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        ] {
            assert!(remote(broken, None).is_none(), "{broken:?}");
        }
    }
}
