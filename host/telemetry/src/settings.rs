//! What the operator's environment asks of the export, read from the
//! standard OpenTelemetry variables. Export is off unless they ask for it:
//! an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the one of a signal),
//! or `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` set to `otlp`.
//! `OTEL_SDK_DISABLED=true` turns everything off. Arguments and results
//! travel only when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is
//! `true`. A value Cordon cannot honour is an error naming the variable,
//! never a silent fallback.

use cordon_kernel::SpanContent;

/// A variable whose value Cordon cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable} = {value:?}: {why}")]
pub struct SettingsError {
    /// The variable.
    pub variable: &'static str,
    /// Its value.
    pub value: String,
    /// What would be accepted.
    pub why: &'static str,
}

/// Whether one signal is exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Not exported.
    Off,
    /// Exported over OTLP/HTTP, encoded as this says.
    Otlp(Wire),
}

/// How OTLP/HTTP encodes what it sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// `http/protobuf`, the default.
    Protobuf,
    /// `http/json`.
    Json,
}

/// What the environment asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Spans of runs, steps, calls, hooks, approvals and commits.
    pub traces: Signal,
    /// Counters and histograms of calls, denials, limits, commits and the
    /// instance pool.
    pub metrics: Signal,
    /// Whether spans carry arguments and results.
    pub content: SpanContent,
}

impl Settings {
    /// The settings of this process's environment.
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// The settings `var` gives, reading each variable by name.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        let set = |name: &str| var(name).filter(|value| !value.trim().is_empty());
        let content = match set("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT") {
            None => SpanContent::Omitted,
            Some(value) => match value.trim().to_ascii_lowercase().as_str() {
                "true" => SpanContent::Kept,
                "false" => SpanContent::Omitted,
                _ => {
                    return Err(SettingsError {
                        variable: "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
                        value,
                        why: "say `true` to export arguments and results, or `false`",
                    });
                }
            },
        };
        let disabled =
            set("OTEL_SDK_DISABLED").is_some_and(|value| value.trim().eq_ignore_ascii_case("true"));
        if disabled {
            return Ok(Self {
                traces: Signal::Off,
                metrics: Signal::Off,
                content,
            });
        }
        let endpoint = set("OTEL_EXPORTER_OTLP_ENDPOINT").is_some();
        let traces = signal(
            &set,
            ["OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"],
            endpoint || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some(),
        )?;
        let metrics = signal(
            &set,
            [
                "OTEL_METRICS_EXPORTER",
                "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
            ],
            endpoint || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").is_some(),
        )?;
        Ok(Self {
            traces,
            metrics,
            content,
        })
    }

    /// Whether anything is exported.
    pub fn exports(&self) -> bool {
        self.traces != Signal::Off || self.metrics != Signal::Off
    }
}

/// The signal whose exporter and protocol `[exporter, protocol]` name:
/// exported when the exporter says `otlp`, or when it is unset and an
/// endpoint was given; encoded as its own protocol variable says, else the
/// general one, else protobuf.
fn signal(
    set: &impl Fn(&str) -> Option<String>,
    [exporter, protocol]: [&'static str; 2],
    endpoint: bool,
) -> Result<Signal, SettingsError> {
    let exported = match set(exporter) {
        None => endpoint,
        Some(value) => match value.trim() {
            "otlp" => true,
            "none" => false,
            _ => {
                return Err(SettingsError {
                    variable: exporter,
                    value,
                    why: "Cordon exports over OTLP only: say `otlp` or `none`",
                });
            }
        },
    };
    if !exported {
        return Ok(Signal::Off);
    }
    let (variable, value) = match set(protocol) {
        Some(value) => (protocol, value),
        None => match set("OTEL_EXPORTER_OTLP_PROTOCOL") {
            Some(value) => ("OTEL_EXPORTER_OTLP_PROTOCOL", value),
            None => return Ok(Signal::Otlp(Wire::Protobuf)),
        },
    };
    match value.trim() {
        "http/protobuf" => Ok(Signal::Otlp(Wire::Protobuf)),
        "http/json" => Ok(Signal::Otlp(Wire::Json)),
        _ => Err(SettingsError {
            variable,
            value,
            why: "Cordon exports OTLP over HTTP: say `http/protobuf` (the default) or `http/json`",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<Settings, SettingsError> {
        Settings::from_vars(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn nothing_is_exported_unless_an_endpoint_or_an_exporter_asks() {
        let none = settings(&[]).unwrap();
        assert!(!none.exports());
        assert_eq!(none.content, SpanContent::Omitted);
        let endpoint =
            settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]).unwrap();
        assert_eq!(
            (endpoint.traces, endpoint.metrics),
            (Signal::Otlp(Wire::Protobuf), Signal::Otlp(Wire::Protobuf))
        );
        let traces_only = settings(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://127.0.0.1:4318/v1/traces",
        )])
        .unwrap();
        assert_eq!(
            (traces_only.traces, traces_only.metrics),
            (Signal::Otlp(Wire::Protobuf), Signal::Off)
        );
        let encoded = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
        ])
        .unwrap();
        assert_eq!(
            (encoded.traces, encoded.metrics),
            (Signal::Otlp(Wire::Json), Signal::Otlp(Wire::Protobuf)),
            "a signal's own protocol comes before the general one"
        );
        let named = settings(&[("OTEL_METRICS_EXPORTER", "otlp")]).unwrap();
        assert_eq!(
            (named.traces, named.metrics),
            (Signal::Off, Signal::Otlp(Wire::Protobuf))
        );
    }

    #[test]
    fn none_and_the_sdk_switch_turn_export_off() {
        let quiet = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ])
        .unwrap();
        assert_eq!(
            (quiet.traces, quiet.metrics),
            (Signal::Otlp(Wire::Protobuf), Signal::Off)
        );
        let disabled = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ])
        .unwrap();
        assert!(!disabled.exports());
    }

    #[test]
    fn a_value_cordon_cannot_honour_is_an_error_naming_it() {
        let grpc = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ])
        .unwrap_err();
        assert_eq!(grpc.variable, "OTEL_EXPORTER_OTLP_PROTOCOL");
        assert!(grpc.to_string().contains("\"grpc\""), "{grpc}");
        let zipkin = settings(&[("OTEL_TRACES_EXPORTER", "zipkin")]).unwrap_err();
        assert_eq!(zipkin.variable, "OTEL_TRACES_EXPORTER");
        let content =
            settings(&[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "yes")]).unwrap_err();
        assert!(content.to_string().contains("`true`"), "{content}");
        let captured =
            settings(&[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")]).unwrap();
        assert_eq!(captured.content, SpanContent::Kept);
    }
}
