//! Typed access to the agent's state: JSON values under keys the manifest grants.
//!
//! Writes are staged by the host and become visible to later calls only after
//! the call that made them succeeds and the step commits.

use crate::bindings::cordon::plugin::state as host;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a state operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The manifest does not declare this key for this kind of access.
    #[error("state key not granted: {0}")]
    Undeclared(String),
    /// The key is declared for reading only.
    #[error("state key is read-only: {0}")]
    ReadOnly(String),
    /// The value is not valid JSON, or not of the shape the operation needs.
    #[error("state value has the wrong shape: {0}")]
    Schema(String),
    /// The write cannot be merged with another write to the same key.
    #[error("conflicting state write: {0}")]
    Conflict(String),
}

impl From<host::StateError> for StateError {
    fn from(error: host::StateError) -> Self {
        match error {
            host::StateError::Undeclared(message) => Self::Undeclared(message),
            host::StateError::ReadOnly(message) => Self::ReadOnly(message),
            host::StateError::Schema(message) => Self::Schema(message),
            host::StateError::Conflict(message) => Self::Conflict(message),
        }
    }
}

/// The value at `key`, including this call's own staged writes, or `None` when absent.
///
/// A stored value that does not deserialize into `T` is [`StateError::Schema`].
pub fn get<T: DeserializeOwned>(key: &str) -> Result<Option<T>, StateError> {
    host::get(key)?
        .map(|text| {
            serde_json::from_str(&text)
                .map_err(|error| StateError::Schema(format!("value at {key}: {error}")))
        })
        .transpose()
}

/// Stages replacing the value at `key`.
pub fn set(key: &str, value: &impl Serialize) -> Result<(), StateError> {
    Ok(host::set(key, &to_json(key, value)?)?)
}

/// Stages removing `key`.
pub fn remove(key: &str) -> Result<(), StateError> {
    Ok(host::remove(key)?)
}

/// Stages adding `delta` to the integer counter at `key` (absent counts as 0) and
/// returns the counter's new value as this call sees it.
pub fn increment(key: &str, delta: i64) -> Result<i64, StateError> {
    Ok(host::increment(key, delta)?)
}

/// Stages appending `item` to the list at `key` (absent counts as empty).
pub fn append(key: &str, item: &impl Serialize) -> Result<(), StateError> {
    Ok(host::append(key, &to_json(key, item)?)?)
}

/// Stages adding `item` to the set (a list without duplicates) at `key`, unless
/// it is already there.
pub fn insert(key: &str, item: &impl Serialize) -> Result<(), StateError> {
    Ok(host::insert(key, &to_json(key, item)?)?)
}

/// Stages setting `field` of the map at `key` (absent counts as empty). Calls that
/// set different fields of a `disjoint` key in one step merge.
pub fn set_field(key: &str, field: &str, value: &impl Serialize) -> Result<(), StateError> {
    Ok(host::set_field(key, field, &to_json(key, value)?)?)
}

/// Stages removing `field` from the map at `key`.
pub fn remove_field(key: &str, field: &str) -> Result<(), StateError> {
    Ok(host::remove_field(key, field)?)
}

fn to_json(key: &str, value: &impl Serialize) -> Result<String, StateError> {
    serde_json::to_string(value)
        .map_err(|error| StateError::Schema(format!("value for {key}: {error}")))
}
