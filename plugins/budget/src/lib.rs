//! The `budget` bundle: a before-tool-call hook that caps the tool calls of a
//! run at `[config] max-calls`, counting them in the state key `budget.calls`.
//! It fails closed: when it cannot read its configuration or the counter, it
//! denies the call rather than let an uncounted call through.

use cordon_sdk::hooks::{BeforeToolCall, ToolCall, Verdict};
use cordon_sdk::state;
use serde::Deserialize;

/// The counter of calls let through so far.
const CALLS: &str = "budget.calls";

/// The `[config]` table.
#[derive(Debug, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
struct Config {
    /// How many tool calls a run may make.
    max_calls: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self { max_calls: 20 }
    }
}

/// The hook.
struct Budget;

impl BeforeToolCall for Budget {
    fn before_tool_call(_call: ToolCall) -> Verdict {
        match admit() {
            Ok(verdict) => verdict,
            Err(error) => Verdict::Deny(format!("budget: {error}")),
        }
    }
}

/// Denies the call when the budget is spent, and otherwise counts it.
fn admit() -> Result<Verdict, String> {
    let config: Config = cordon_sdk::config::get().map_err(|error| error.to_string())?;
    let max = i64::from(config.max_calls);
    let calls: i64 = state::get(CALLS)
        .map_err(|error| error.to_string())?
        .unwrap_or(0);
    if calls >= max {
        return Ok(Verdict::Deny(format!(
            "the run's budget of {max} tool calls is spent"
        )));
    }
    state::increment(CALLS, 1).map_err(|error| error.to_string())?;
    Ok(Verdict::Allow)
}

cordon_sdk::export_before_tool_call!(Budget);
