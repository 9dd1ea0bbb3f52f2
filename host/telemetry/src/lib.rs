//! Cordon's runs as OpenTelemetry traces and metrics. The loop raises its
//! spans through `tracing` ([`cordon_kernel::spans`]); this crate turns them
//! into OpenTelemetry spans (`tracing-opentelemetry`), derives the metrics
//! from them ([`measures`]), and exports both over OTLP/HTTP with the
//! official exporter when the standard environment variables ask for it
//! ([`settings`]). Nothing is exported, and no span is even built, unless
//! they do.
//!
//! A host starts it once ([`Telemetry::start`]), adds its [`layer`] to its
//! subscriber, and [shuts it down](Telemetry::shutdown) on the way out so
//! the last spans leave; [`context`] carries a trace across processes.
//!
//! [`layer`]: Telemetry::layer

mod client;
pub mod context;
pub mod measures;
pub mod settings;

use std::sync::Arc;

use cordon_kernel::SpanContent;
use cordon_kernel::spans::TARGET;
use opentelemetry::metrics::MeterProvider;
use opentelemetry::trace::TracerProvider;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

pub use measures::{Occupancy, observe_pool};
pub use settings::{Settings, SettingsError, Signal, Wire};

use measures::{Measures, MeasuresLayer};

/// Why export could not start.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// A variable asks for something Cordon cannot do.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The exporter's HTTP client could not be built.
    #[error("cannot build the OTLP exporter's HTTP client: {0}")]
    Client(String),
    /// The exporter refused its configuration (such as a malformed endpoint).
    #[error("cannot export {signal} over OTLP: {source}")]
    Exporter {
        /// `traces` or `metrics`.
        signal: &'static str,
        /// What the exporter said.
        source: opentelemetry_otlp::ExporterBuildError,
    },
}

/// The export of one process, while it lives.
pub struct Telemetry {
    settings: Settings,
    traces: Option<SdkTracerProvider>,
    metrics: Option<(SdkMeterProvider, Arc<Measures>)>,
}

impl Telemetry {
    /// Start exporting what the environment asks; with nothing asked, a
    /// telemetry that exports nothing.
    pub fn from_env() -> Result<Self, TelemetryError> {
        Self::start(Settings::from_env()?)
    }

    /// Start exporting what `settings` ask.
    pub fn start(settings: Settings) -> Result<Self, TelemetryError> {
        let resource = || {
            let builder = Resource::builder();
            let builder = if std::env::var_os("OTEL_SERVICE_NAME").is_some() {
                builder
            } else {
                builder.with_service_name("cordon")
            };
            builder
                .with_attribute(opentelemetry::KeyValue::new(
                    "service.version",
                    env!("CARGO_PKG_VERSION"),
                ))
                .build()
        };
        let traces = match settings.traces {
            Signal::Off => None,
            Signal::Otlp(wire) => {
                let exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_shared_http_client(client::shared()?)
                    .with_protocol(protocol(wire))
                    .build()
                    .map_err(|source| TelemetryError::Exporter {
                        signal: "traces",
                        source,
                    })?;
                Some(
                    SdkTracerProvider::builder()
                        .with_batch_exporter(exporter)
                        .with_resource(resource())
                        .build(),
                )
            }
        };
        let metrics = match settings.metrics {
            Signal::Off => None,
            Signal::Otlp(wire) => {
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_shared_http_client(client::shared()?)
                    .with_protocol(protocol(wire))
                    .build()
                    .map_err(|source| TelemetryError::Exporter {
                        signal: "metrics",
                        source,
                    })?;
                let provider = SdkMeterProvider::builder()
                    .with_reader(PeriodicReader::builder(exporter).build())
                    .with_resource(resource())
                    .build();
                let measures = Arc::new(Measures::new(&provider.meter("cordon")));
                // The instance pool's gauges are read through the global
                // provider, wherever the host registers them.
                opentelemetry::global::set_meter_provider(provider.clone());
                Some((provider, measures))
            }
        };
        Ok(Self {
            settings,
            traces,
            metrics,
        })
    }

    /// Whether anything is exported.
    pub fn exports(&self) -> bool {
        self.traces.is_some() || self.metrics.is_some()
    }

    /// Whether spans carry arguments and results, for the runtime.
    pub fn span_content(&self) -> SpanContent {
        self.settings.content
    }

    /// The layer that turns the loop's spans into exported spans and
    /// metrics; `None` when nothing is exported, so no span is built.
    pub fn layer<S>(&self) -> Option<Box<dyn Layer<S> + Send + Sync>>
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        if !self.exports() {
            return None;
        }
        let traces = self.traces.as_ref().map(|provider| {
            tracing_opentelemetry::layer()
                .with_tracer(provider.tracer("cordon"))
                .with_location(false)
                .with_threads(false)
                .with_tracked_inactivity(false)
        });
        let measures = self
            .metrics
            .as_ref()
            .map(|(_, measures)| MeasuresLayer(Arc::clone(measures)));
        let only_cordon = Targets::new().with_target(TARGET, tracing::Level::INFO);
        Some(
            Layer::and_then(traces, measures)
                .with_filter(only_cordon)
                .boxed(),
        )
    }

    /// Send what is left and stop: the spans still batched and a last
    /// collection of the metrics.
    pub fn shutdown(&self) {
        if let Some(provider) = &self.traces
            && let Err(error) = provider.shutdown()
        {
            tracing::warn!(%error, "the last spans could not be exported");
        }
        if let Some((provider, _)) = &self.metrics
            && let Err(error) = provider.shutdown()
        {
            tracing::warn!(%error, "the last metrics could not be exported");
        }
    }
}

/// The exporter's name for `wire`.
fn protocol(wire: Wire) -> opentelemetry_otlp::Protocol {
    match wire {
        Wire::Protobuf => opentelemetry_otlp::Protocol::HttpBinary,
        Wire::Json => opentelemetry_otlp::Protocol::HttpJson,
    }
}
