//! The process's diagnostics and exported telemetry: warnings (and with
//! `-v`, Cordon's own lines) on stderr, and, when the standard OpenTelemetry
//! variables ask, the runs' spans and metrics over OTLP. Each has its own
//! filter, so `-v` never decides what is exported and export never prints.

use std::io::IsTerminal;

use cordon_kernel::SpanContent;
use cordon_telemetry::{Settings, Telemetry, TelemetryError};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Install the subscriber: stderr's lines at `verbose`, and the export the
/// environment asks for. The returned telemetry must be shut down on the way
/// out so the last spans leave.
pub(crate) fn init(verbose: u8) -> Result<Telemetry, TelemetryError> {
    let telemetry = Telemetry::from_env()?;
    tracing_subscriber::registry()
        .with(stderr_layer(verbose))
        .with(telemetry.layer())
        .init();
    Ok(telemetry)
}

/// Whether the spans of calls carry their arguments and results, as the
/// environment asks (checked already at start-up).
pub(crate) fn span_content() -> SpanContent {
    Settings::from_env().map_or(SpanContent::Omitted, |settings| settings.content)
}

/// Diagnostics on stderr: warnings, and with `-v`, `-vv` and `-vvv` Cordon's
/// own information, debug and trace lines, while its dependencies stay at
/// warnings; `-vvvv` lets theirs through too. `CORDON_LOG` overrides. The
/// spans and span events the loop raises for export are not printed.
/// Colours only on a terminal, and never with `NO_COLOR`.
fn stderr_layer<S>(verbose: u8) -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let default = match verbose {
        0 => "warn",
        1 => "warn,cordon=info",
        2 => "warn,cordon=debug",
        3 => "warn,cordon=trace",
        _ => "trace",
    };
    // A failed MCP transport is reported once, as Cordon's own error about
    // the server; the client worker's log of it would say the same again.
    // An MCP client's mistake (an unknown tool, bad arguments) is answered to
    // that client, and is no warning for the person running the server.
    let quieted = if verbose > 3 {
        ""
    } else {
        ",rmcp::transport::worker=off,rmcp::service=error,cordon::trace=off"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CORDON_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("{default}{quieted}")));
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_filter(filter)
}

/// Report how full the instance pool of `assembly` is with the metrics.
pub(crate) fn watch_pool(assembly: &cordon_session::Assembly) {
    let pool = assembly.pool();
    cordon_telemetry::observe_pool(move || cordon_telemetry::Occupancy {
        used: u64::from(pool.held()),
        limit: u64::from(pool.size()),
    });
}
