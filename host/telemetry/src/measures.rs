//! Metrics derived from the loop's spans, so that what a trace shows and
//! what a dashboard counts can never disagree: each tool call's span counts
//! a call (by tool, verdict and outcome), each `denied` and `limit-exceeded`
//! span event a denial or a limit, each commit's span its latency; the
//! instance pool's occupancy is read when the metrics are collected.

use std::sync::Arc;
use std::time::Instant;

use cordon_kernel::spans::{TARGET, names};
use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// How full the instance pool is, as the host reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    /// Slots held by calls now.
    pub used: u64,
    /// Slots in all.
    pub limit: u64,
}

/// The instruments, shared by the layer that feeds them.
pub(crate) struct Measures {
    calls: Counter<u64>,
    denials: Counter<u64>,
    limits: Counter<u64>,
    commits: Histogram<f64>,
}

impl Measures {
    pub(crate) fn new(meter: &Meter) -> Self {
        Self {
            calls: meter
                .u64_counter("cordon.tool.calls")
                .with_description("Tool calls, by tool, verdict and outcome")
                .build(),
            denials: meter
                .u64_counter("cordon.denials")
                .with_description("Calls and capability requests refused")
                .build(),
            limits: meter
                .u64_counter("cordon.limits")
                .with_description("Calls stopped by a resource limit, by limit")
                .build(),
            commits: meter
                .f64_histogram("cordon.commit.duration")
                .with_unit("s")
                .with_description("Step commits, from the store's start to its answer")
                .build(),
        }
    }
}

/// The layer feeding [`Measures`] from the loop's spans.
pub(crate) struct MeasuresLayer(pub(crate) Arc<Measures>);

/// What a measured span has said of itself so far.
#[derive(Default)]
struct Said {
    started: Option<Instant>,
    fields: Vec<(&'static str, String)>,
}

impl Said {
    fn get(&self, name: &str) -> &str {
        self.fields
            .iter()
            .rev()
            .find(|(field, _)| *field == name)
            .map_or("", |(_, value)| value.as_str())
    }

    fn attributes(&self, names: &[&'static str]) -> Vec<KeyValue> {
        names
            .iter()
            .map(|name| KeyValue::new(*name, self.get(name).to_owned()))
            .collect()
    }
}

impl Visit for Said {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.fields.push((field.name(), value.to_owned()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.fields.push((field.name(), format!("{value:?}")));
    }
}

/// The measured spans: a tool call and a commit.
fn measured(name: &str) -> bool {
    name == names::TOOL_CALL || name == names::COMMIT
}

impl<S> Layer<S> for MeasuresLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let metadata = attrs.metadata();
        if metadata.target() != TARGET || !measured(metadata.name()) {
            return;
        }
        let mut said = Said {
            started: Some(Instant::now()),
            ..Said::default()
        };
        attrs.record(&mut said);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(said);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(said) = span.extensions_mut().get_mut::<Said>()
        {
            values.record(said);
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let metadata = event.metadata();
        if metadata.target() != TARGET || metadata.name() != names::AUDIT {
            return;
        }
        let mut said = Said::default();
        event.record(&mut said);
        match said.get("cordon.event") {
            "denied" => self
                .0
                .denials
                .add(1, &said.attributes(&["cordon.capability"])),
            "limit-exceeded" => self.0.limits.add(1, &said.attributes(&["cordon.limit"])),
            _ => {}
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(said) = span.extensions_mut().remove::<Said>() else {
            return;
        };
        if span.name() == names::TOOL_CALL {
            self.0.calls.add(
                1,
                &said.attributes(&["gen_ai.tool.name", "cordon.verdict", "cordon.outcome"]),
            );
        } else if let Some(started) = said.started {
            self.0.commits.record(
                started.elapsed().as_secs_f64(),
                &said.attributes(&["cordon.durability"]),
            );
        }
    }
}

/// Read the instance pool's occupancy from `occupancy` whenever the metrics
/// are collected; with no metrics exported, nothing reads it.
pub fn observe_pool(occupancy: impl Fn() -> Occupancy + Send + Sync + 'static) {
    let meter = opentelemetry::global::meter("cordon");
    let occupancy = Arc::new(occupancy);
    let used = Arc::clone(&occupancy);
    meter
        .u64_observable_gauge("cordon.pool.slots.used")
        .with_description("Instance-pool slots held by calls")
        .with_callback(move |observer| observer.observe(used().used, &[]))
        .build();
    meter
        .u64_observable_gauge("cordon.pool.slots.limit")
        .with_description("Instance-pool slots in all")
        .with_callback(move |observer| observer.observe(occupancy().limit, &[]))
        .build();
}
