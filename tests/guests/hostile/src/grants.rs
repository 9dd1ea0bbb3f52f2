//! Attempts to use host capabilities beyond the manifest's grants: state keys and
//! other tools. Refusals propagate as the tool's error.

use crate::args::{CallArgs, CallEachArgs, KeyArgs, KeyValueArgs, NoArgs};
use cordon_sdk::{state, tools};
use serde_json::json;

hostile_tool!(
    StateWrite,
    "hostile.state-write",
    "Set a state key.",
    KeyValueArgs,
    |args| {
        state::set(&args.key, &args.value)?;
        Ok(json!({ "written": true }))
    }
);

hostile_tool!(
    StateRead,
    "hostile.state-read",
    "Read a state key.",
    KeyArgs,
    |args| Ok(json!({ "value": state::get::<serde_json::Value>(&args.key)? }))
);

hostile_tool!(
    CallTool,
    "hostile.call-tool",
    "Call another tool.",
    CallArgs,
    |args| tools::call(&args.name, &args.args)
);

hostile_tool!(
    CallEach,
    "hostile.call-each",
    "Call tools in order, each result or error in a list; then succeed, fail or trap.",
    CallEachArgs,
    |args| {
        let results: Vec<serde_json::Value> = args
            .calls
            .iter()
            .map(|call| match tools::call(&call.name, &call.args) {
                Ok(output) => json!({ "ok": output }),
                Err(error) => json!({ "error": error.to_string() }),
            })
            .collect();
        match args.then.as_deref() {
            Some("fail") => Err(cordon_sdk::ToolError::Failed(
                "failed after calling".to_owned(),
            )),
            Some("trap") => panic!("trapped after calling"),
            _ => Ok(json!(results)),
        }
    }
);

hostile_tool!(
    Recurse,
    "hostile.recurse",
    "Call itself until the host refuses.",
    NoArgs,
    |_| tools::call("hostile.recurse", &json!({}))
);

hostile_tool!(
    WriteThenFail,
    "hostile.write-then-fail",
    "Set a state key, then fail: the write must not be committed.",
    KeyValueArgs,
    |args| {
        state::set(&args.key, &args.value)?;
        Err(cordon_sdk::ToolError::Failed(
            "failed after writing".to_owned(),
        ))
    }
);

hostile_tool!(
    WriteThenTrap,
    "hostile.write-then-trap",
    "Set a state key, then panic: the write must not be committed.",
    KeyValueArgs,
    |args| {
        state::set(&args.key, &args.value)?;
        panic!("trapped after writing")
    }
);

hostile_tool!(
    StateIncrement,
    "hostile.state-increment",
    "Add one to a state counter and return its new value.",
    KeyArgs,
    |args| Ok(json!({ "value": state::increment(&args.key, 1)? }))
);
