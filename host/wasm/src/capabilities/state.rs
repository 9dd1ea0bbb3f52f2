//! The state capability: the keys a bundle may read and write
//! (`[grants.state]`), checked as keys; each call's view of the committed
//! state with its own staged writes on top; and the `state` import, which
//! checks the grant before every read or write. A refused key is a typed
//! error to the component and a `denied` event. The staged writes travel
//! back with the call's outcome; nothing is written anywhere else.

use std::sync::Arc;

use cordon_kernel::{
    Capability, StagedState, StateError as KernelStateError, StateOp, StateReader, StateWrite,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasmtime::component::{HasData, Linker};

use crate::audit::Audit;
use crate::bindings::cordon::plugin::state;
use crate::manifest::checks::{ManifestError, Validator};
use crate::manifest::kind::BundleKind;

use super::unit::{Grant, Imports};

/// State keys, with reading and writing granted separately.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateGrants {
    /// Keys the component may read.
    #[serde(default)]
    pub read: Vec<String>,
    /// Keys the component may write.
    #[serde(default)]
    pub write: Vec<String>,
}

/// The state capability.
pub(crate) struct State;

impl Grant for State {
    const SAID: u8 = 0;

    type Asked = StateGrants;

    /// Valid keys, each listed once per list.
    fn validate(
        grants: &StateGrants,
        _kind: BundleKind,
        check: &Validator<'_>,
    ) -> Result<(), ManifestError> {
        for (field, keys) in [
            ("grants.state.read", &grants.read),
            ("grants.state.write", &grants.write),
        ] {
            check.unique_names(field, keys, is_state_key, "not a valid state key")?;
        }
        Ok(())
    }

    fn is_empty(grants: &StateGrants) -> bool {
        grants.read.is_empty() && grants.write.is_empty()
    }

    /// One line per list granted.
    fn describe(grants: &StateGrants) -> Vec<String> {
        let mut lines = super::env::listed("state read", &grants.read);
        lines.extend(super::env::listed("state write", &grants.write));
        lines
    }

    fn beyond(asked: &StateGrants, approved: &StateGrants) -> Vec<String> {
        beyond(asked, approved)
    }

    /// Untrusted code keeps its keys: its writes travel with its outcome
    /// and reach the store only through the step's commit.
    fn untrusted(_grants: &mut StateGrants) -> Vec<String> {
        Vec::new()
    }
}

/// What of `asked` the operator's `approved` does not cover, one line each.
fn beyond(asked: &StateGrants, approved: &StateGrants) -> Vec<String> {
    [
        ("read", &asked.read, &approved.read),
        ("write", &asked.write, &approved.write),
    ]
    .into_iter()
    .flat_map(|(what, asked, approved)| {
        super::env::unlisted(asked, approved).map(move |key| format!("state {what} {key}"))
    })
    .collect()
}

fn is_state_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 256
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':'))
}

/// The error a host import raises when the state store cannot answer: the
/// host's failure, not something the component can fix.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct StateUnavailable(pub(crate) String);

/// One call's state: the committed state as it reads it, and its own writes.
pub(crate) struct StateAccess {
    reader: Arc<dyn StateReader>,
    staged: StagedState,
}

impl StateAccess {
    /// A call reading `reader`, with nothing staged.
    pub(crate) fn new(reader: Arc<dyn StateReader>) -> Self {
        Self {
            reader,
            staged: StagedState::new(),
        }
    }

    /// The committed state the call reads.
    pub(crate) fn reader(&self) -> &Arc<dyn StateReader> {
        &self.reader
    }

    /// The value of `key` as this call sees it. A store that cannot answer
    /// stops the call.
    pub(crate) fn current(&self, key: &str) -> wasmtime::Result<Option<Value>> {
        if let Some(staged) = self.staged.staged_value(key) {
            return Ok(staged.clone());
        }
        self.reader
            .get(key)
            .map_err(|error| StateUnavailable(error.to_string()).into())
    }

    /// Stage `op` on `key` over what the call sees.
    pub(crate) fn stage(
        &mut self,
        key: &str,
        op: StateOp,
    ) -> wasmtime::Result<Result<Option<Value>, KernelStateError>> {
        let current = self.current(key)?;
        Ok(self.staged.stage(key, current, op))
    }

    /// Add a nested call's `writes` to this call's, in order: they commit
    /// only if this call does.
    pub(crate) fn join(&mut self, writes: Vec<StateWrite>) -> wasmtime::Result<Result<(), String>> {
        for write in writes {
            if let Err(error) = self.stage(&write.key, write.op)? {
                return Ok(Err(error.to_string()));
            }
        }
        Ok(Ok(()))
    }

    /// Take out the writes the call staged, in order.
    pub(crate) fn take_writes(&mut self) -> Vec<StateWrite> {
        std::mem::take(&mut self.staged).into_writes()
    }
}

/// The `state` import as one call sees it.
pub(crate) struct StateView<'a> {
    pub(crate) grants: &'a StateGrants,
    pub(crate) access: &'a mut StateAccess,
    pub(crate) audit: &'a Audit,
}

impl HasData for State {
    type Data<'a> = StateView<'a>;
}

impl Imports for State {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()> {
        state::add_to_linker::<T, Self>(linker, get)?;
        Ok(())
    }
}

impl StateView<'_> {
    fn check(&self, key: &str, write: bool) -> Result<(), state::StateError> {
        let readable = self.grants.read.iter().any(|k| k == key);
        let writable = self.grants.write.iter().any(|k| k == key);
        let (allowed, capability) = if write {
            (writable, Capability::StateWrite)
        } else {
            (readable, Capability::StateRead)
        };
        if allowed {
            return Ok(());
        }
        let (reason, error) = if write && readable {
            (
                "declared read-only",
                state::StateError::ReadOnly(key.to_owned()),
            )
        } else {
            (
                "not declared",
                state::StateError::Undeclared(key.to_owned()),
            )
        };
        self.audit.deny(capability, key, reason);
        Err(error)
    }

    fn stage(&mut self, key: &str, op: StateOp) -> StateResult<Option<Value>> {
        if let Err(error) = self.check(key, true) {
            return Ok(Err(error));
        }
        Ok(self.access.stage(key, op)?.map_err(to_wit_error))
    }
}

fn to_wit_error(error: KernelStateError) -> state::StateError {
    match error {
        KernelStateError::Undeclared(key) => state::StateError::Undeclared(key),
        KernelStateError::ReadOnly(key) => state::StateError::ReadOnly(key),
        KernelStateError::Schema(message) => state::StateError::Schema(message),
        KernelStateError::Conflict(message) => state::StateError::Conflict(message),
    }
}

fn parse_json(text: &str) -> Result<Value, state::StateError> {
    serde_json::from_str(text)
        .map_err(|error| state::StateError::Schema(format!("value is not valid JSON: {error}")))
}

type StateResult<T> = wasmtime::Result<Result<T, state::StateError>>;

impl state::Host for StateView<'_> {
    async fn get(&mut self, key: String) -> StateResult<Option<String>> {
        if let Err(error) = self.check(&key, false) {
            return Ok(Err(error));
        }
        Ok(Ok(self
            .access
            .current(&key)?
            .map(|value| value.to_string())))
    }

    async fn set(&mut self, key: String, value: String) -> StateResult<()> {
        match parse_json(&value) {
            Ok(value) => Ok(self.stage(&key, StateOp::Set { value })?.map(drop)),
            Err(error) => Ok(Err(error)),
        }
    }

    async fn remove(&mut self, key: String) -> StateResult<()> {
        Ok(self.stage(&key, StateOp::Remove)?.map(drop))
    }

    async fn increment(&mut self, key: String, delta: i64) -> StateResult<i64> {
        // The new value reveals the committed one, so incrementing needs both grants.
        if let Err(error) = self.check(&key, false) {
            return Ok(Err(error));
        }
        Ok(self
            .stage(&key, StateOp::Increment { delta })?
            .map(|value| value.and_then(|v| v.as_i64()).unwrap_or_default()))
    }

    async fn append(&mut self, key: String, item: String) -> StateResult<()> {
        match parse_json(&item) {
            Ok(item) => Ok(self.stage(&key, StateOp::Append { item })?.map(drop)),
            Err(error) => Ok(Err(error)),
        }
    }

    async fn insert(&mut self, key: String, item: String) -> StateResult<()> {
        match parse_json(&item) {
            Ok(item) => Ok(self.stage(&key, StateOp::Insert { item })?.map(drop)),
            Err(error) => Ok(Err(error)),
        }
    }

    async fn set_field(&mut self, key: String, field: String, value: String) -> StateResult<()> {
        match parse_json(&value) {
            Ok(value) => Ok(self
                .stage(&key, StateOp::SetField { field, value })?
                .map(drop)),
            Err(error) => Ok(Err(error)),
        }
    }

    async fn remove_field(&mut self, key: String, field: String) -> StateResult<()> {
        Ok(self.stage(&key, StateOp::RemoveField { field })?.map(drop))
    }
}
