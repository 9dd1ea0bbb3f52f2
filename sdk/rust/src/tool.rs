//! The [`Tool`] trait a tool author implements, and the effect hints it declares.

use crate::ToolError;
use crate::bindings::cordon::plugin::types::ToolAnnotations;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// One tool: a name, a description, a typed argument struct and a function.
///
/// The JSON Schema the host validates arguments against is derived from
/// [`Tool::Args`]; doc comments on its fields become the schema's descriptions,
/// which is what the model reads.
pub trait Tool {
    /// Stable identifier, unique across all loaded bundles, for example `jq.query`.
    /// Lowercase letters, digits, `.`, `_` and `-`.
    const NAME: &'static str;
    /// One paragraph the model reads to decide when to call the tool.
    const DESCRIPTION: &'static str;
    /// The arguments object, deserialized from the model's JSON.
    type Args: DeserializeOwned + JsonSchema;
    /// The result, serialized to JSON for the model.
    type Output: Serialize;

    /// Effect hints for the permission policy and resume logic. Defaults to all
    /// `false`: a tool that may change things, unsafe to repeat.
    fn annotations() -> Annotations {
        Annotations::default()
    }

    /// Run the tool.
    fn call(args: Self::Args) -> Result<Self::Output, ToolError>;
}

/// Effect hints describing a tool's effect on the world outside its own output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// The tool changes nothing; calling it any number of times is harmless.
    pub read_only: bool,
    /// The tool may delete or overwrite something that cannot be recovered.
    pub destructive: bool,
    /// Calling the tool twice with the same arguments has the effect of calling it once.
    pub idempotent: bool,
    /// The tool reaches systems outside the agent's workspace.
    pub open_world: bool,
}

impl Annotations {
    /// A tool that only reads: read-only and therefore idempotent.
    pub const READ_ONLY: Self = Self {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
}

impl From<Annotations> for ToolAnnotations {
    fn from(annotations: Annotations) -> Self {
        Self {
            read_only: annotations.read_only,
            destructive: annotations.destructive,
            idempotent: annotations.idempotent,
            open_world: annotations.open_world,
        }
    }
}
