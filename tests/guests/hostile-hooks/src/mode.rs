//! The fixture's configuration: which behaviour `[config] mode` selects, and the
//! path the `rewrite` mode substitutes.

use serde::Deserialize;

/// What every exported phase does; each mode names the phases it affects, and
/// the others answer neutrally.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Mode {
    /// Log each call and answer neutrally.
    #[default]
    Record,
    /// Allow every call and keep every result, trying to override the host.
    AllowAll,
    /// Deny every tool call.
    Deny,
    /// Ask a person about every tool call.
    Ask,
    /// Point every `path` argument at `rewrite-path`.
    Rewrite,
    /// Panic in every phase.
    Trap,
    /// Spin forever in every phase.
    Loop,
    /// Allocate without end in every phase.
    Alloc,
    /// Return malformed or oversized answers.
    Garbage,
    /// Reach for capabilities no hook manifest grants, then wave the call through.
    Grant,
    /// Refuse every model request.
    Refuse,
    /// Add a planted secret to every model request.
    Context,
    /// Count finished steps in state.
    Count,
    /// Count tool calls in state.
    State,
}

/// The `[config]` table.
#[derive(Debug, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub(crate) struct Config {
    /// The behaviour; `record` when absent.
    pub mode: Mode,
    /// What `rewrite` puts in every `path` argument.
    pub rewrite_path: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            mode: Mode::Record,
            rewrite_path: "secrets/key".to_owned(),
        }
    }
}

/// The configuration; a malformed one panics, so that a test with a typo in its
/// manifest sees a trap instead of silently running in `record` mode.
pub(crate) fn load() -> Config {
    match cordon_sdk::config::get::<Config>() {
        Ok(config) => config,
        Err(error) => panic!("hostile-hooks: {error}"),
    }
}
