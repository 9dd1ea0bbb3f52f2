//! The `redactor` bundle: an after-tool-call hook that replaces secrets in tool
//! results with `[REDACTED:<kind>]` before the model sees or the run stores
//! them. Operators add formats of their own with `[config] extra-patterns`.

mod json;
mod rules;
mod text;

use cordon_sdk::ToolError;
use cordon_sdk::hooks::{AfterToolCall, Observation, ToolCall};
use serde::Deserialize;
use serde_json::Value;

use rules::Redactor;

/// The `[config]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
struct Config {
    /// Regular expressions for secrets of the operator's own formats; each
    /// whole match is redacted as `custom`.
    extra_patterns: Vec<String>,
}

/// The hook.
struct RedactSecrets;

impl AfterToolCall for RedactSecrets {
    /// A configuration the redactor cannot apply withholds the result: showing
    /// it unredacted would leak exactly what the operator asked to hide.
    fn after_tool_call(_call: ToolCall, result: Result<Value, ToolError>) -> Observation {
        match load() {
            Ok(redactor) => match redactor.result(&result) {
                Some(redacted) => Observation::Replace(redacted),
                None => Observation::Keep,
            },
            Err(error) => {
                Observation::Replace(Err(ToolError::Failed(format!("redactor config: {error}"))))
            }
        }
    }
}

fn load() -> Result<Redactor, String> {
    let config: Config = cordon_sdk::config::get().map_err(|error| error.to_string())?;
    Redactor::new(&config.extra_patterns)
}

cordon_sdk::export_after_tool_call!(RedactSecrets);
