//! The environment capability: variables a bundle asks to see
//! (`grants.env`), checked as names and passed through from the host's
//! environment for each call. A variable the host does not set is absent;
//! no other variable is visible.

use wasmtime_wasi::WasiCtxBuilder;

use crate::capabilities::network::secrets::SECRET_ENV_PREFIX;
use crate::manifest::{ManifestError, Validator};

/// Check `grants.env`: valid variable names, each listed once, none of
/// those that carry secrets' placeholders.
pub(crate) fn validate(names: &[String], check: &Validator<'_>) -> Result<(), ManifestError> {
    if let Some((index, name)) = names
        .iter()
        .enumerate()
        .find(|(_, name)| name.starts_with(SECRET_ENV_PREFIX))
    {
        return Err(check.invalid(
            &format!("grants.env[{index}]"),
            name,
            &format!("variables named {SECRET_ENV_PREFIX}* carry secrets' placeholders; declare the secret under [secrets]"),
        ));
    }
    check.unique_names(
        "grants.env",
        names,
        is_env_name,
        "not a valid variable name",
    )
}

/// One line for an operator, if anything is granted.
pub(crate) fn describe(names: &[String]) -> Option<String> {
    (!names.is_empty()).then(|| format!("env [{}]", names.join(", ")))
}

/// What of `asked` the operator's `approved` does not cover, one line each.
pub(crate) fn beyond(asked: &[String], approved: &[String]) -> Vec<String> {
    unlisted(asked, approved)
        .map(|name| format!("env {name}"))
        .collect()
}

/// The names of `asked` missing from `approved`.
pub(crate) fn unlisted<'a>(
    asked: &'a [String],
    approved: &'a [String],
) -> impl Iterator<Item = &'a String> + 'a {
    asked.iter().filter(move |name| !approved.contains(name))
}

/// Give one call the granted variables `names` the host has.
pub(crate) fn grant(wasi: &mut WasiCtxBuilder, names: &[String]) {
    for name in names {
        if let Ok(value) = std::env::var(name) {
            wasi.env(name, value);
        }
    }
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
