//! A tool component for the host's security tests. Each tool tries one thing the
//! host must refuse or bound, and returns what it observed as JSON (or lets the
//! refusal surface as its tool error), so a test can assert the attempt failed.
//! `hostile.echo` is the benign baseline; `hostile.state` and `hostile.secret`
//! are helpers for tests of state merging and of hooks.

/// Declares a tool named `$name` whose `call` takes `$args` and evaluates `$body`.
macro_rules! hostile_tool {
    ($tool:ident, $name:literal, $description:literal, $args:ty, |$input:pat_param| $body:expr) => {
        pub(crate) struct $tool;

        impl cordon_sdk::Tool for $tool {
            const NAME: &'static str = $name;
            const DESCRIPTION: &'static str = $description;
            type Args = $args;
            type Output = serde_json::Value;

            fn call($input: $args) -> Result<serde_json::Value, cordon_sdk::ToolError> {
                $body
            }
        }
    };
}

mod args;
mod bombs;
mod escapes;
mod grants;
mod links;
mod memory;
mod state_op;

use cordon_sdk::{Annotations, Tool, ToolError};
use serde_json::{Map, Value, json};

/// Returns its arguments unchanged.
pub(crate) struct Echo;

impl Tool for Echo {
    const NAME: &'static str = "hostile.echo";
    const DESCRIPTION: &'static str = "Return the arguments unchanged.";
    type Args = Map<String, Value>;
    type Output = Map<String, Value>;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(args: Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
        Ok(args)
    }
}

/// Returns planted secrets, for tests of hooks that redact them.
pub(crate) struct Secret;

impl Tool for Secret {
    const NAME: &'static str = "hostile.secret";
    const DESCRIPTION: &'static str = "Return text and a config object with planted secrets.";
    type Args = args::NoArgs;
    type Output = Value;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(_args: args::NoArgs) -> Result<Value, ToolError> {
        Ok(json!({
            "text": "here is the key: AKIAIOSFODNN7EXAMPLE and token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
            "config": { "password": "hunter2" },
        }))
    }
}

cordon_sdk::export_tools!(
    Echo,
    Secret,
    escapes::ReadFile,
    escapes::WriteFile,
    escapes::ListDir,
    escapes::Env,
    escapes::Connect,
    links::Symlink,
    links::HardLink,
    links::Rename,
    links::Truncate,
    links::Remove,
    links::Stat,
    links::Walk,
    grants::StateWrite,
    grants::StateRead,
    grants::StateIncrement,
    state_op::StateOp,
    grants::CallTool,
    grants::CallEach,
    grants::Recurse,
    grants::WriteThenFail,
    grants::WriteThenTrap,
    memory::Counter,
    memory::Scratch,
    bombs::Loop,
    bombs::Sleep,
    bombs::Alloc,
    bombs::Print,
    bombs::LogFlood,
    bombs::Trap,
    bombs::Panic,
    bombs::BigOutput,
);
