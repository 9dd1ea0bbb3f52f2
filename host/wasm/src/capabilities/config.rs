//! The configuration capability, which every bundle has: the manifest's
//! `[config]` table, read by the component as one JSON object through the
//! `config` import.

use serde_json::Value;
use wasmtime::component::{HasData, Linker};

use crate::bindings::cordon::plugin::config;
use crate::capabilities::unit::Imports;
use crate::manifest::checks::{ManifestError, Validator};

/// The `[config]` table as the component reads it; an empty object when absent.
pub(crate) fn from_table(
    table: Option<toml::Table>,
    check: &Validator<'_>,
) -> Result<Value, ManifestError> {
    match table {
        Some(table) => serde_json::to_value(table)
            .map_err(|error| check.invalid("config", "[config]", &error.to_string())),
        None => Ok(Value::Object(serde_json::Map::new())),
    }
}

/// The `config` import as one call sees it: the bundle's configuration.
pub(crate) struct ConfigView<'a>(pub(crate) &'a Value);

/// The configuration capability, which every bundle has.
pub(crate) struct Config;

impl HasData for Config {
    type Data<'a> = ConfigView<'a>;
}

impl Imports for Config {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()> {
        config::add_to_linker::<T, Self>(linker, get)?;
        Ok(())
    }
}

impl config::Host for ConfigView<'_> {
    async fn get(&mut self) -> wasmtime::Result<String> {
        Ok(self.0.to_string())
    }
}
