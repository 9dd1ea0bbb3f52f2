//! A tool component built on the raw bindings whose `describe` reports a tool
//! with an invalid name and an input schema that is not JSON, for the host's
//! validation of describe output.

use cordon_sdk::bindings::cordon::plugin::types::{
    ToolAnnotations, ToolError, ToolOutput, ToolSpec,
};
use cordon_sdk::bindings::exports::cordon::plugin::tool::Guest;

struct BadDescribe;

impl Guest for BadDescribe {
    fn describe() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "Bad Name!".to_owned(),
            description: "A tool whose spec breaks the contract.".to_owned(),
            input_schema: "{ this is not json".to_owned(),
            output_schema: None,
            annotations: ToolAnnotations {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
        }]
    }

    fn call(name: String, _args: String) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Failed(format!("{name} cannot be called")))
    }
}

cordon_sdk::bindings::export!(BadDescribe with_types_in cordon_sdk::bindings);
