//! What the operator's environment asks of the export, read from the
//! standard OpenTelemetry variables. Export is off unless they ask for it:
//! an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the one of a signal),
//! or `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` set to `otlp`.
//! `OTEL_SDK_DISABLED=true` turns everything off. Arguments and results
//! travel only when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is
//! `true`. A value Cordon cannot honour is an error naming the variable,
//! never a silent fallback.

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
    /// Exported over OTLP.
    Otlp,
}

/// Whether spans carry a call's arguments and result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// They do not (the default).
    Omitted,
    /// They do, as the store keeps them.
    Captured,
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
    pub content: Content,
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
            None => Content::Omitted,
            Some(value) => match value.trim().to_ascii_lowercase().as_str() {
                "true" => Content::Captured,
                "false" => Content::Omitted,
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
            "OTEL_TRACES_EXPORTER",
            endpoint || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some(),
        )?;
        let metrics = signal(
            &set,
            "OTEL_METRICS_EXPORTER",
            endpoint || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").is_some(),
        )?;
        for (variable, exported) in [
            (
                "OTEL_EXPORTER_OTLP_PROTOCOL",
                traces != Signal::Off || metrics != Signal::Off,
            ),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", traces != Signal::Off),
            (
                "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
                metrics != Signal::Off,
            ),
        ] {
            if let Some(value) = set(variable).filter(|_| exported) {
                protocol(variable, value)?;
            }
        }
        Ok(Self {
            traces,
            metrics,
            content,
        })
    }

    /// Whether anything is exported.
    pub fn exports(&self) -> bool {
        self.traces == Signal::Otlp || self.metrics == Signal::Otlp
    }
}

/// The exporter `variable` names, or OTLP when an endpoint was given for it.
fn signal(
    set: &impl Fn(&str) -> Option<String>,
    variable: &'static str,
    endpoint: bool,
) -> Result<Signal, SettingsError> {
    let Some(value) = set(variable) else {
        return Ok(if endpoint { Signal::Otlp } else { Signal::Off });
    };
    match value.trim() {
        "otlp" => Ok(Signal::Otlp),
        "none" => Ok(Signal::Off),
        _ => Err(SettingsError {
            variable,
            value,
            why: "Cordon exports over OTLP only: say `otlp` or `none`",
        }),
    }
}

/// Refuse a protocol the HTTP exporter does not speak.
fn protocol(variable: &'static str, value: String) -> Result<(), SettingsError> {
    match value.trim() {
        "http/protobuf" | "http/json" => Ok(()),
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
        assert_eq!(none.content, Content::Omitted);
        let endpoint =
            settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]).unwrap();
        assert_eq!(
            (endpoint.traces, endpoint.metrics),
            (Signal::Otlp, Signal::Otlp)
        );
        let traces_only = settings(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://127.0.0.1:4318/v1/traces",
        )])
        .unwrap();
        assert_eq!(
            (traces_only.traces, traces_only.metrics),
            (Signal::Otlp, Signal::Off)
        );
        let named = settings(&[("OTEL_METRICS_EXPORTER", "otlp")]).unwrap();
        assert_eq!((named.traces, named.metrics), (Signal::Off, Signal::Otlp));
    }

    #[test]
    fn none_and_the_sdk_switch_turn_export_off() {
        let quiet = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ])
        .unwrap();
        assert_eq!((quiet.traces, quiet.metrics), (Signal::Otlp, Signal::Off));
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
        assert_eq!(captured.content, Content::Captured);
    }
}
