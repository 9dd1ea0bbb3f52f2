//! The state keys a bundle owns: `[state."KEY"]` tables declaring the schema,
//! scope and merge policy of keys the bundle writes, as an agent file does.
//! A run adopts them, so an agent need not repeat what the bundle that owns
//! a key knows about it (the budget hook's counter merges commutatively),
//! and a real disagreement with the agent's own declaration is caught when
//! the run starts.
//!
//! ```toml
//! [state."budget.calls"]
//! schema = { type = "integer", minimum = 0 }
//! merge = "commutative"           # exclusive (default) | commutative | disjoint
//! scope = "run"                   # run (default) | thread
//! ```

use cordon_kernel::{MergePolicy, Scope, StateKey};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capabilities::state::StateGrants;
use crate::manifest::checks::{ManifestError, Validator};

/// A bundle's declaration of one state key it writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateDeclaration {
    /// JSON Schema every committed value must satisfy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// Where the value lives.
    #[serde(default)]
    pub scope: Scope,
    /// How the writes of concurrent calls merge.
    #[serde(default)]
    pub merge: MergePolicy,
}

impl StateDeclaration {
    /// The key as the kernel declares it; an error only for a schema that
    /// does not compile, which a validated manifest never holds.
    pub fn key(&self) -> Result<StateKey, String> {
        Ok(StateKey::new(self.schema.clone())?
            .in_scope(self.scope)
            .merged_by(self.merge))
    }
}

/// Each declared key must be one the bundle may write, with a schema that
/// compiles.
pub(crate) fn validate<'a>(
    declared: impl IntoIterator<Item = (&'a String, &'a StateDeclaration)>,
    grants: &StateGrants,
    check: &Validator<'_>,
) -> Result<(), ManifestError> {
    for (key, declaration) in declared {
        let field = format!("state.{key:?}");
        if !grants.write.contains(key) {
            return Err(check.invalid(
                &field,
                key,
                "a bundle declares only keys it writes: list it in `grants.state.write`",
            ));
        }
        if let Err(reason) = StateKey::new(declaration.schema.clone()) {
            return Err(check.invalid(&format!("{field}.schema"), &declaration.schema, &reason));
        }
    }
    Ok(())
}
