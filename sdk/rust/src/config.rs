//! The bundle's configuration: the `[config]` table of its `plugin.toml`, which
//! operators edit to tune a plugin without rebuilding it.

use serde::de::DeserializeOwned;

use crate::bindings::cordon::plugin::config as host;

/// Why the configuration could not be read as the plugin expects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin.toml [config] does not fit: {0}")]
pub struct ConfigError(String);

/// The `[config]` table deserialized into `T`; an absent table is `{}`, so a
/// `T` whose fields all have defaults always loads.
pub fn get<T: DeserializeOwned>() -> Result<T, ConfigError> {
    serde_json::from_str(&host::get()).map_err(|error| ConfigError(error.to_string()))
}
