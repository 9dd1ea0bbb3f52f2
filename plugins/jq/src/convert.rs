//! Conversion between `serde_json` values and jaq's values, which are a superset
//! of JSON: byte strings, non-string object keys and non-finite numbers have no
//! JSON form and are reported rather than silently changed.

use cordon_sdk::ToolError;
use jaq_json::{Num, Val};
use serde_json::{Map, Value};

/// The jaq value of a JSON input.
pub(crate) fn from_json(value: Value) -> Result<Val, ToolError> {
    serde_json::from_value(value)
        .map_err(|error| ToolError::InvalidInput(format!("input is not usable JSON: {error}")))
}

/// The JSON form of a filter result.
pub(crate) fn to_json(value: &Val) -> Result<Value, ToolError> {
    Ok(match value {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Num(n) => number(n)?,
        Val::TStr(text) => Value::String(String::from_utf8_lossy(text).into_owned()),
        Val::BStr(_) => {
            return Err(ToolError::Failed(
                "the filter produced a byte string, which JSON cannot represent; \
                 convert it to text first, for example with tostring"
                    .to_owned(),
            ));
        }
        Val::Arr(items) => Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?),
        Val::Obj(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, value)| Ok((key_text(key)?, to_json(value)?)))
                .collect::<Result<Map<_, _>, ToolError>>()?,
        ),
    })
}

fn key_text(key: &Val) -> Result<String, ToolError> {
    match key {
        Val::TStr(text) => Ok(String::from_utf8_lossy(text).into_owned()),
        other => Err(ToolError::Failed(format!(
            "the filter produced an object key {other} that is not a string, \
             which JSON cannot represent"
        ))),
    }
}

fn number(n: &Num) -> Result<Value, ToolError> {
    match n {
        Num::Int(i) => Ok(Value::from(*i)),
        Num::Float(f) if f.is_nan() => Ok(Value::Null),
        Num::Float(f) if f.is_infinite() => Ok(Value::from(f64::MAX.copysign(*f))),
        Num::Float(f) => Ok(Value::from(*f)),
        Num::BigInt(_) | Num::Dec(_) => {
            let text = n.to_string();
            serde_json::from_str(&text).map_err(|error| {
                ToolError::Failed(format!("the number {text} has no JSON form: {error}"))
            })
        }
    }
}
