//! Cordon's own imports, as the host implements them for one call: `state`,
//! `log`, `tools` and `config`. Each checks the bundle's grants first; a refusal is a typed
//! error to the component and a [`Denial`](cordon_kernel::Denial) in the trail.
//! Inside a run, a granted tool call then passes the run's gate like a model's
//! call (see [`cordon_kernel::NestedCalls`]).

use std::sync::Arc;

use cordon_kernel::{
    CallContext, Capability, Event, LimitKind, LogLevel, StateError as KernelStateError, StateOp,
};
use serde_json::Value;

use crate::bindings::cordon::plugin::{config, hook_types, log, state, tools, types};
use crate::call::{self, to_wit_error};
use crate::sandbox::{CallState, LogLimitExceeded, StateUnavailable};

/// The deepest chain of tool calls a component may start (a calling b calling c...).
pub(crate) const MAX_CALL_DEPTH: u32 = 4;

impl types::Host for CallState {}

impl hook_types::Host for CallState {}

impl CallState {
    fn check_state(&self, key: &str, write: bool) -> Result<(), state::StateError> {
        let grants = &self.bundle.manifest.grants.state;
        let readable = grants.read.iter().any(|k| k == key);
        let writable = grants.write.iter().any(|k| k == key);
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
        self.deny(capability, key, reason);
        Err(error)
    }

    /// The value of `key` as this call sees it. A store that cannot answer stops
    /// the call: that is the host's failure, not something the component can fix.
    fn current(&self, key: &str) -> wasmtime::Result<Option<Value>> {
        if let Some(staged) = self.staged.staged_value(key) {
            return Ok(staged.clone());
        }
        self.state
            .get(key)
            .map_err(|error| StateUnavailable(error.to_string()).into())
    }

    fn stage(
        &mut self,
        key: &str,
        op: StateOp,
    ) -> wasmtime::Result<Result<Option<Value>, state::StateError>> {
        if let Err(error) = self.check_state(key, true) {
            return Ok(Err(error));
        }
        let current = self.current(key)?;
        Ok(self
            .staged
            .stage(key, current, op)
            .map_err(to_wit_state_error))
    }
}

fn to_wit_state_error(error: KernelStateError) -> state::StateError {
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

impl state::Host for CallState {
    async fn get(&mut self, key: String) -> StateResult<Option<String>> {
        if let Err(error) = self.check_state(&key, false) {
            return Ok(Err(error));
        }
        Ok(Ok(self.current(&key)?.map(|value| value.to_string())))
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
        if let Err(error) = self.check_state(&key, false) {
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

impl config::Host for CallState {
    async fn get(&mut self) -> wasmtime::Result<String> {
        Ok(self.bundle.manifest.config.to_string())
    }
}

impl CallState {
    /// Charge `bytes` of log output, or stop the component once its budget is spent.
    fn charge_log(&mut self, bytes: usize) -> wasmtime::Result<()> {
        match self.log_budget.checked_sub(bytes) {
            Some(rest) => {
                self.log_budget = rest;
                Ok(())
            }
            None => Err(LogLimitExceeded(self.bundle.manifest.limits.log_bytes).into()),
        }
    }
}

impl log::Host for CallState {
    async fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        self.charge_log(message.len())?;
        let level = match level {
            log::Level::Trace => LogLevel::Trace,
            log::Level::Debug => LogLevel::Debug,
            log::Level::Info => LogLevel::Info,
            log::Level::Warn => LogLevel::Warn,
            log::Level::Error => LogLevel::Error,
        };
        self.plugins.events.emit(Event::Log {
            bundle: self.bundle.manifest.name.clone(),
            level,
            message,
        });
        Ok(())
    }

    async fn progress(
        &mut self,
        done: u64,
        total: Option<u64>,
        message: String,
    ) -> wasmtime::Result<()> {
        self.charge_log(message.len() + 16)?;
        self.plugins.events.emit(Event::Progress {
            bundle: self.bundle.manifest.name.clone(),
            done,
            total,
            message,
        });
        Ok(())
    }
}

impl tools::Host for CallState {
    async fn call(
        &mut self,
        name: String,
        args: String,
    ) -> wasmtime::Result<Result<types::ToolOutput, types::ToolError>> {
        if !self.bundle.manifest.grants.tools.contains(&name) {
            self.deny(Capability::ToolCall, &name, "not declared");
            return Ok(Err(types::ToolError::Denied(format!(
                "calling tool `{name}` is not granted to bundle `{}`",
                self.bundle.manifest.name
            ))));
        }
        if self.depth + 1 >= MAX_CALL_DEPTH {
            let detail = format!("tool calls nest deeper than {MAX_CALL_DEPTH}");
            self.plugins.events.emit(Event::LimitExceeded {
                bundle: self.bundle.manifest.name.clone(),
                tool: self.tool.clone(),
                limit: LimitKind::CallDepth,
                detail: detail.clone(),
            });
            return Ok(Err(types::ToolError::Failed(detail)));
        }
        let args = match serde_json::from_str::<Value>(&args) {
            Ok(args) => args,
            Err(error) => {
                return Ok(Err(types::ToolError::InvalidInput(format!(
                    "arguments are not valid JSON: {error}"
                ))));
            }
        };
        let state = Arc::clone(&self.state);
        let outcome = match &self.nested {
            Some(gate) => {
                let gate = Arc::clone(gate);
                gate.call(&name, args, state).await
            }
            // Outside a run no agent judges calls: the operator made this one.
            None => {
                let plugins = Arc::clone(&self.plugins);
                let context = CallContext {
                    state,
                    nested: None,
                    depth: self.depth + 1,
                };
                call::invoke(&plugins, &name, args, context).await
            }
        };
        // The callee's writes join this call's: they commit only if the outermost
        // call succeeds.
        for write in outcome.writes {
            let current = self.current(&write.key)?;
            if let Err(error) = self.staged.stage(&write.key, current, write.op) {
                return Ok(Err(types::ToolError::Failed(error.to_string())));
            }
        }
        Ok(outcome
            .result
            .map(|output| types::ToolOutput {
                content: output.content.to_string(),
            })
            .map_err(to_wit_error))
    }
}
