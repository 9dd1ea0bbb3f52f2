//! The HTTP client the exporters post with: blocking (the SDK exports from
//! threads of its own, outside any async runtime), TLS with the same public
//! roots and crypto provider as the rest of Cordon, and the timeout
//! `OTEL_EXPORTER_OTLP_TIMEOUT` gives (10 s by default).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry_http::HttpClient;

use crate::TelemetryError;

/// The client both exporters share, built once.
pub(crate) fn shared() -> Result<Arc<dyn HttpClient>, TelemetryError> {
    static CLIENT: OnceLock<Result<Arc<dyn HttpClient>, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| build().map(|client| Arc::new(client) as Arc<dyn HttpClient>))
        .clone()
        .map_err(TelemetryError::Client)
}

fn build() -> Result<mcp_reqwest::blocking::Client, String> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    mcp_reqwest::blocking::Client::builder()
        .tls_backend_preconfigured(tls)
        .timeout(timeout())
        .build()
        .map_err(|error| error.to_string())
}

/// `OTEL_EXPORTER_OTLP_TIMEOUT` in milliseconds, or 10 s.
fn timeout() -> Duration {
    std::env::var("OTEL_EXPORTER_OTLP_TIMEOUT")
        .ok()
        .and_then(|value| value.trim().parse().ok())
        .map_or(Duration::from_secs(10), Duration::from_millis)
}
