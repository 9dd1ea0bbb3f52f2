//! Argument types shared by the hostile tools.

use schemars::JsonSchema;
use serde::Deserialize;

/// No arguments.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct NoArgs {}

/// A filesystem path, as the guest sees it.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct PathArgs {
    /// Path to access.
    pub(crate) path: String,
}

/// A path and the text to write there.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct WriteArgs {
    /// Path to write.
    pub(crate) path: String,
    /// Text to write.
    pub(crate) content: String,
}

/// The name of an environment variable or a tool.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct NameArgs {
    /// The name.
    pub(crate) name: String,
}

/// A network address.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct AddrArgs {
    /// `host:port` to connect to.
    pub(crate) addr: String,
}

/// A state key.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct KeyArgs {
    /// The key.
    pub(crate) key: String,
}

/// A state key and the value to store there.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct KeyValueArgs {
    /// The key.
    pub(crate) key: String,
    /// The value.
    pub(crate) value: serde_json::Value,
}

/// A tool to call and its arguments.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct CallArgs {
    /// The tool's name.
    pub(crate) name: String,
    /// Its arguments.
    pub(crate) args: serde_json::Value,
}

/// Tools to call in order, and how to end after them.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct CallEachArgs {
    /// The calls, in order.
    pub(crate) calls: Vec<CallArgs>,
    /// `fail` or `trap` to end that way after the calls; success otherwise.
    #[serde(default)]
    pub(crate) then: Option<String>,
}

/// A duration.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct SleepArgs {
    /// Milliseconds to sleep.
    pub(crate) ms: u64,
}

/// A size.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct BytesArgs {
    /// Number of bytes.
    pub(crate) bytes: usize,
}

/// Two filesystem paths: a source and a destination.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct TwoPaths {
    /// The existing path, or a link's target text.
    pub(crate) from: String,
    /// The new path.
    pub(crate) to: String,
}
