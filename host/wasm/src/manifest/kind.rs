//! The kinds of bundle: what a bundle provides, closed so that the host
//! refuses a kind it cannot run.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a bundle provides. Closed: the host refuses kinds it cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BundleKind {
    /// Exports `cordon:plugin/tool`.
    Tool,
    /// Exports hook interfaces.
    Hook,
    /// Exports `cordon:plugin/workspace`.
    Sandbox,
    /// Exports `cordon:plugin/interpreter`: a language's interpreter that
    /// sandbox backends' shells run.
    Interpreter,
    /// Exports `cordon:plugin/interpreter` too: everyday commands (`tr`,
    /// `seq`...) that sandbox backends' shells run, each in a fresh instance
    /// over the command's view of the workspace.
    Command,
}

impl fmt::Display for BundleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Tool => "tool",
            Self::Hook => "hook",
            Self::Sandbox => "sandbox",
            Self::Interpreter => "interpreter",
            Self::Command => "command",
        })
    }
}
