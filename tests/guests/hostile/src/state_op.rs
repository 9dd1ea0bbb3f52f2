//! `hostile.state`: any one state operation, as the arguments name it, so that a
//! test can stage exactly the write (or the refused write) it needs.

use cordon_sdk::{ToolError, state};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// A state operation.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Op {
    /// Replace the value at `key` with `value`.
    Set,
    /// Remove `key`.
    Remove,
    /// Add `delta` (default 1) to the counter at `key`.
    Increment,
    /// Append `value` to the list at `key`.
    Append,
    /// Add `value` to the set at `key`.
    Insert,
    /// Set `field` of the map at `key` to `value`.
    SetField,
    /// Remove `field` from the map at `key`.
    RemoveField,
}

/// One state operation and its operands.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateArgs {
    /// The operation.
    pub(crate) op: Op,
    /// The state key.
    pub(crate) key: String,
    /// The map field, for `set-field` and `remove-field`.
    pub(crate) field: Option<String>,
    /// The value, for `set`, `append`, `insert` and `set-field`.
    pub(crate) value: Option<Value>,
    /// The amount, for `increment`; 1 when absent.
    pub(crate) delta: Option<i64>,
}

hostile_tool!(
    StateOp,
    "hostile.state",
    "Perform one state operation: set, remove, increment, append, insert, set-field or remove-field.",
    StateArgs,
    |args| {
        let key = args.key.as_str();
        match args.op {
            Op::Set => state::set(key, &required(args.value, "value")?)?,
            Op::Remove => state::remove(key)?,
            Op::Increment => {
                state::increment(key, args.delta.unwrap_or(1))?;
            }
            Op::Append => state::append(key, &required(args.value, "value")?)?,
            Op::Insert => state::insert(key, &required(args.value, "value")?)?,
            Op::SetField => state::set_field(
                key,
                &required(args.field, "field")?,
                &required(args.value, "value")?,
            )?,
            Op::RemoveField => state::remove_field(key, &required(args.field, "field")?)?,
        }
        Ok(json!({ "ok": true }))
    }
);

/// `operand`, or the error naming it as missing.
fn required<T>(operand: Option<T>, name: &str) -> Result<T, ToolError> {
    operand.ok_or_else(|| ToolError::InvalidInput(format!("this op needs `{name}`")))
}
