//! The agent's state: JSON values under string keys, the operations that change
//! them, the per-call staging area, and the [`StateStore`] port that persists
//! committed writes.
//!
//! Writes never touch the store directly. A call stages them in a
//! [`StagedState`], reads see the store with the call's own staged writes on top,
//! and only when the call succeeds does the host apply the whole batch to the
//! store in one atomic [`StateStore::apply`].

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One change to one key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum StateOp {
    /// Replace the value.
    Set {
        /// The new value.
        value: Value,
    },
    /// Remove the key.
    Remove,
    /// Add to an integer counter; an absent key counts as 0.
    Increment {
        /// The amount to add; negative to subtract.
        delta: i64,
    },
    /// Append to a list; an absent key counts as an empty list.
    Append {
        /// The element to append.
        item: Value,
    },
    /// Add to a set (a list without duplicates) unless present; an absent key
    /// counts as an empty set.
    Insert {
        /// The element to add.
        item: Value,
    },
    /// Set one field of a map (a JSON object); an absent key counts as `{}`.
    SetField {
        /// The field's name.
        field: String,
        /// Its new value.
        value: Value,
    },
    /// Remove one field of a map.
    RemoveField {
        /// The field's name.
        field: String,
    },
}

impl StateOp {
    /// The value of a key after this operation, given its value before.
    pub fn apply(&self, current: Option<Value>) -> Result<Option<Value>, StateError> {
        match self {
            Self::Set { value } => Ok(Some(value.clone())),
            Self::Remove => Ok(None),
            Self::Increment { delta } => {
                let base = match current {
                    None => 0,
                    Some(Value::Number(number)) => number.as_i64().ok_or_else(|| {
                        StateError::Schema(format!("counter value {number} is not an integer"))
                    })?,
                    Some(other) => {
                        return Err(StateError::Schema(format!(
                            "increment needs an integer, found {}",
                            json_kind(&other)
                        )));
                    }
                };
                let next = base.checked_add(*delta).ok_or_else(|| {
                    StateError::Schema(format!("counter overflow: {base} + {delta}"))
                })?;
                Ok(Some(Value::from(next)))
            }
            Self::Append { item } => {
                let mut items = list("append", current)?;
                items.push(item.clone());
                Ok(Some(Value::Array(items)))
            }
            Self::Insert { item } => {
                let mut items = list("insert", current)?;
                if !items.contains(item) {
                    items.push(item.clone());
                }
                Ok(Some(Value::Array(items)))
            }
            Self::SetField { field, value } => {
                let mut fields = map("set-field", current)?;
                fields.insert(field.clone(), value.clone());
                Ok(Some(Value::Object(fields)))
            }
            Self::RemoveField { field } => {
                let mut fields = map("remove-field", current)?;
                fields.remove(field);
                Ok(Some(Value::Object(fields)))
            }
        }
    }

    /// How the operation combines with other writers' operations on the same key.
    pub fn touch(&self) -> Touch<'_> {
        match self {
            Self::Set { .. } | Self::Remove => Touch::Whole,
            Self::Increment { .. } | Self::Append { .. } | Self::Insert { .. } => {
                Touch::Commutative
            }
            Self::SetField { field, .. } | Self::RemoveField { field } => Touch::Field(field),
        }
    }
}

/// What part of a key an operation touches, for merging the writes of
/// different calls in one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch<'a> {
    /// Replaces or removes the whole value.
    Whole,
    /// Changes the value in a way that gives the same result in any order.
    Commutative,
    /// Changes one field of a map.
    Field(&'a str),
}

fn list(op: &str, current: Option<Value>) -> Result<Vec<Value>, StateError> {
    match current {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(StateError::Schema(format!(
            "{op} needs a list, found {}",
            json_kind(&other)
        ))),
    }
}

fn map(op: &str, current: Option<Value>) -> Result<serde_json::Map<String, Value>, StateError> {
    match current {
        None => Ok(serde_json::Map::new()),
        Some(Value::Object(fields)) => Ok(fields),
        Some(other) => Err(StateError::Schema(format!(
            "{op} needs a map, found {}",
            json_kind(&other)
        ))),
    }
}

/// How an error names the kind of a JSON value: "a list", "an object".
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A staged operation on a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateWrite {
    /// The key written.
    pub key: String,
    /// The change.
    #[serde(flatten)]
    pub op: StateOp,
}

/// Why a state operation was refused. Mirrors the WIT `state-error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The key is not declared for this kind of access.
    #[error("state key `{0}` is not declared for this access")]
    Undeclared(String),
    /// The key is declared for reading only.
    #[error("state key `{0}` is read-only for this bundle")]
    ReadOnly(String),
    /// The value does not have the shape the operation needs.
    #[error("{0}")]
    Schema(String),
    /// The write cannot be merged with another write.
    #[error("{0}")]
    Conflict(String),
}

/// A failure of the store itself, as opposed to a refused operation.
#[derive(Debug, thiserror::Error)]
pub enum StateStoreError {
    /// The stored data cannot be read back.
    #[error("state store {location} is unreadable: {message}")]
    Corrupt {
        /// Where the bad data lies, such as the store's file and thread.
        location: String,
        /// What is wrong with it.
        message: String,
    },
    /// The underlying storage failed.
    #[error("state store {location}: {source}")]
    Io {
        /// Where, such as the store's file and thread.
        location: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A staged operation no longer applies to the committed value.
    #[error("state write to `{key}` does not apply: {error}")]
    Rejected {
        /// The key written.
        key: String,
        /// Why the operation does not apply.
        error: StateError,
    },
}

/// Read access to committed state: what a tool call sees before its own writes.
pub trait StateReader: Send + Sync {
    /// The committed value of `key`.
    fn get(&self, key: &str) -> Result<Option<Value>, StateStoreError>;
}

/// State that can also commit writes outside a run, such as the state of
/// single tool calls made from the command line. Inside a run, state changes
/// only through step commits.
pub trait StateStore: StateReader {
    /// Apply `writes` in order, all or nothing.
    fn apply(&self, writes: &[StateWrite]) -> Result<(), StateStoreError>;
}

/// A fixed snapshot of state, for example a run's state as of its last commit.
#[derive(Debug, Clone, Default)]
pub struct StateSnapshot(pub BTreeMap<String, Value>);

impl StateReader for StateSnapshot {
    fn get(&self, key: &str) -> Result<Option<Value>, StateStoreError> {
        Ok(self.0.get(key).cloned())
    }
}

/// Apply `writes` in order to a map of values, all or nothing: on error `values`
/// is left as it was. Store implementations share this so that every store
/// applies operations identically.
pub fn apply_writes(
    values: &mut BTreeMap<String, Value>,
    writes: &[StateWrite],
) -> Result<(), StateStoreError> {
    let mut changed: BTreeMap<&str, Option<Value>> = BTreeMap::new();
    for write in writes {
        let current = match changed.get(write.key.as_str()) {
            Some(value) => value.clone(),
            None => values.get(&write.key).cloned(),
        };
        let next = write
            .op
            .apply(current)
            .map_err(|error| StateStoreError::Rejected {
                key: write.key.clone(),
                error,
            })?;
        changed.insert(&write.key, next);
    }
    for (key, value) in changed {
        match value {
            Some(value) => values.insert(key.to_owned(), value),
            None => values.remove(key),
        };
    }
    Ok(())
}

/// An in-memory [`StateStore`], for tests and embedders that keep state elsewhere.
#[derive(Debug, Default)]
pub struct MemoryStateStore {
    values: Mutex<BTreeMap<String, Value>>,
}

impl MemoryStateStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of every committed key and value.
    pub fn snapshot(&self) -> BTreeMap<String, Value> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Value>> {
        self.values
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl StateReader for MemoryStateStore {
    fn get(&self, key: &str) -> Result<Option<Value>, StateStoreError> {
        Ok(self.lock().get(key).cloned())
    }
}

impl StateStore for MemoryStateStore {
    fn apply(&self, writes: &[StateWrite]) -> Result<(), StateStoreError> {
        apply_writes(&mut self.lock(), writes)
    }
}

/// One call's staged writes, with the values they produce as the call sees them.
#[derive(Debug, Default)]
pub struct StagedState {
    writes: Vec<StateWrite>,
    view: BTreeMap<String, Option<Value>>,
}

impl StagedState {
    /// Nothing staged.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `key` as this call sees it: its own staged writes when it has
    /// made any, otherwise `None` to say the committed value stands.
    pub fn staged_value(&self, key: &str) -> Option<&Option<Value>> {
        self.view.get(key)
    }

    /// Stage `op` on `key`, whose value as this call sees it is `current`.
    /// Returns the key's new value as this call sees it.
    pub fn stage(
        &mut self,
        key: &str,
        current: Option<Value>,
        op: StateOp,
    ) -> Result<Option<Value>, StateError> {
        let next = op.apply(current)?;
        self.view.insert(key.to_owned(), next.clone());
        self.writes.push(StateWrite {
            key: key.to_owned(),
            op,
        });
        Ok(next)
    }

    /// The staged writes, in the order they were made.
    pub fn into_writes(self) -> Vec<StateWrite> {
        self.writes
    }

    /// Whether nothing was staged.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(key: &str, op: StateOp) -> StateWrite {
        StateWrite {
            key: key.into(),
            op,
        }
    }

    #[test]
    fn increments_and_appends_start_from_absent_keys() {
        let store = MemoryStateStore::new();
        store
            .apply(&[
                write("count", StateOp::Increment { delta: 2 }),
                write("count", StateOp::Increment { delta: 3 }),
                write("list", StateOp::Append { item: json!("a") }),
            ])
            .unwrap();
        assert_eq!(store.get("count").unwrap(), Some(json!(5)));
        assert_eq!(store.get("list").unwrap(), Some(json!(["a"])));
    }

    #[test]
    fn a_batch_with_one_bad_write_applies_nothing() {
        let store = MemoryStateStore::new();
        store
            .apply(&[write("name", StateOp::Set { value: json!("x") })])
            .unwrap();
        let result = store.apply(&[
            write("other", StateOp::Set { value: json!(1) }),
            write("name", StateOp::Increment { delta: 1 }),
        ]);
        assert!(matches!(result, Err(StateStoreError::Rejected { key, .. }) if key == "name"));
        assert_eq!(store.get("other").unwrap(), None);
        assert_eq!(store.get("name").unwrap(), Some(json!("x")));
    }

    #[test]
    fn increments_from_two_calls_merge_against_the_committed_value() {
        let store = MemoryStateStore::new();
        let mut first = StagedState::new();
        let mut second = StagedState::new();
        first
            .stage("n", None, StateOp::Increment { delta: 1 })
            .unwrap();
        second
            .stage("n", None, StateOp::Increment { delta: 10 })
            .unwrap();
        store.apply(&first.into_writes()).unwrap();
        store.apply(&second.into_writes()).unwrap();
        assert_eq!(store.get("n").unwrap(), Some(json!(11)));
    }

    #[test]
    fn staged_removal_is_seen_by_the_call_that_made_it() {
        let mut staged = StagedState::new();
        staged.stage("k", Some(json!(1)), StateOp::Remove).unwrap();
        assert_eq!(staged.staged_value("k"), Some(&None));
        assert_eq!(staged.staged_value("other"), None);
    }
}
