//! Declared state keys: the schema every value must satisfy, the scope the
//! value lives in, and the policy that decides how the writes of concurrent
//! calls in one step merge.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How long a key's value lives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// One run: a new run starts without it.
    #[default]
    Run,
    /// The run's thread: every run of the thread sees the latest committed value.
    Thread,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Run => "run",
            Self::Thread => "thread",
        })
    }
}

/// How the writes of different calls to one key in one step merge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergePolicy {
    /// One writer per step: a second writer is a conflict.
    #[default]
    Exclusive,
    /// Any number of writers whose operations give the same result in any
    /// order: increment, append, insert. A replacement by one of several
    /// writers is a conflict.
    Commutative,
    /// Any number of writers to different fields of a map: two writers to one
    /// field, or a replacement of the whole map by one of several writers, is a
    /// conflict.
    Disjoint,
}

impl fmt::Display for MergePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Exclusive => "exclusive",
            Self::Commutative => "commutative",
            Self::Disjoint => "disjoint",
        })
    }
}

/// A declared state key.
#[derive(Debug, Clone)]
pub struct StateKey {
    /// JSON Schema every committed value must satisfy, when given.
    pub schema: Option<Value>,
    /// Where the value lives.
    pub scope: Scope,
    /// How concurrent writes merge.
    pub merge: MergePolicy,
    validator: Option<Arc<jsonschema::Validator>>,
}

impl StateKey {
    /// A run-scoped, exclusive key whose values must satisfy `schema`, when given.
    pub fn new(schema: Option<Value>) -> Result<Self, String> {
        let validator = schema
            .as_ref()
            .map(|schema| jsonschema::validator_for(schema).map(Arc::new))
            .transpose()
            .map_err(|error| format!("not a valid JSON Schema: {error}"))?;
        Ok(Self {
            schema,
            scope: Scope::Run,
            merge: MergePolicy::Exclusive,
            validator,
        })
    }

    /// This key living in `scope`.
    pub fn in_scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// This key merging by `merge`.
    pub fn merged_by(mut self, merge: MergePolicy) -> Self {
        self.merge = merge;
        self
    }

    /// Why `value` does not fit this key, if it does not.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        match &self.validator {
            Some(validator) => validator.validate(value).map_err(|error| error.to_string()),
            None => Ok(()),
        }
    }
}
