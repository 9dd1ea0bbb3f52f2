//! Calling other tools by name. Only tools the manifest lists under
//! `grants.tools` are reachable; the host refuses any other name with
//! [`ToolError::Denied`].

use crate::ToolError;
use crate::bindings::cordon::plugin::tools as host;
use serde::Serialize;

/// Calls the tool `name` with `args` and returns its output as JSON.
pub fn call(name: &str, args: &impl Serialize) -> Result<serde_json::Value, ToolError> {
    let args = serde_json::to_string(args).map_err(|error| {
        ToolError::InvalidInput(format!("arguments for {name} are not JSON: {error}"))
    })?;
    let output = host::call(name, &args)?;
    serde_json::from_str(&output.content)
        .map_err(|error| ToolError::Failed(format!("output of {name} is not JSON: {error}")))
}
