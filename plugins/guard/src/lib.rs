//! The `guard` bundle: a before-tool-call hook that refuses calls reaching
//! outside the workspace or running catastrophic commands, and holds risky
//! commands and listed tools for a person's approval. It fails closed: a
//! configuration it cannot apply denies every call, naming the problem.

mod config;
mod glob;
mod paths;
mod policy;

use cordon_sdk::hooks::{BeforeToolCall, ToolCall, Verdict};

use config::Config;
use policy::Policy;

/// The hook.
struct Guard;

impl BeforeToolCall for Guard {
    fn before_tool_call(call: ToolCall) -> Verdict {
        match load() {
            Ok(policy) => policy.judge(&call.name, &call.args),
            Err(error) => Verdict::Deny(format!("guard config: {error}")),
        }
    }
}

fn load() -> Result<Policy, String> {
    let config: Config = cordon_sdk::config::get().map_err(|error| error.to_string())?;
    Ok(Policy::new(config))
}

cordon_sdk::export_before_tool_call!(Guard);
