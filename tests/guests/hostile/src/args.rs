//! Argument types shared by the hostile tools.

use schemars::JsonSchema;
use serde::Deserialize;

/// No arguments.
#[derive(Deserialize, JsonSchema)]
pub struct NoArgs {}

/// A filesystem path, as the guest sees it.
#[derive(Deserialize, JsonSchema)]
pub struct PathArgs {
    /// Path to access.
    pub path: String,
}

/// A path and the text to write there.
#[derive(Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// Path to write.
    pub path: String,
    /// Text to write.
    pub content: String,
}

/// The name of an environment variable or a tool.
#[derive(Deserialize, JsonSchema)]
pub struct NameArgs {
    /// The name.
    pub name: String,
}

/// A network address.
#[derive(Deserialize, JsonSchema)]
pub struct AddrArgs {
    /// `host:port` to connect to.
    pub addr: String,
}

/// A state key.
#[derive(Deserialize, JsonSchema)]
pub struct KeyArgs {
    /// The key.
    pub key: String,
}

/// A state key and the value to store there.
#[derive(Deserialize, JsonSchema)]
pub struct KeyValueArgs {
    /// The key.
    pub key: String,
    /// The value.
    pub value: serde_json::Value,
}

/// A tool to call and its arguments.
#[derive(Deserialize, JsonSchema)]
pub struct CallArgs {
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    pub args: serde_json::Value,
}

/// Tools to call in order, and how to end after them.
#[derive(Deserialize, JsonSchema)]
pub struct CallEachArgs {
    /// The calls, in order.
    pub calls: Vec<CallArgs>,
    /// `fail` or `trap` to end that way after the calls; success otherwise.
    #[serde(default)]
    pub then: Option<String>,
}

/// A duration.
#[derive(Deserialize, JsonSchema)]
pub struct SleepArgs {
    /// Milliseconds to sleep.
    pub ms: u64,
}

/// A size.
#[derive(Deserialize, JsonSchema)]
pub struct BytesArgs {
    /// Number of bytes.
    pub bytes: usize,
}

/// Two filesystem paths: a source and a destination.
#[derive(Deserialize, JsonSchema)]
pub struct TwoPaths {
    /// The existing path, or a link's target text.
    pub from: String,
    /// The new path.
    pub to: String,
}
