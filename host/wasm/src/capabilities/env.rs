//! The environment capability: variables a bundle asks to see
//! (`grants.env`), checked as names and passed through from the host's
//! environment for each call. A variable the host does not set is absent;
//! no other variable is visible.

use wasmtime_wasi::WasiCtxBuilder;

use crate::capabilities::network::secrets::SECRET_ENV_PREFIX;
use crate::manifest::checks::{ManifestError, Validator};
use crate::manifest::kind::BundleKind;

use super::unit::Grant;

/// The environment capability.
pub(crate) struct Env;

impl Grant for Env {
    const SAID: u8 = 3;

    /// The variables' names.
    type Asked = Vec<String>;

    /// Valid variable names, each listed once, none of those that carry
    /// secrets' placeholders.
    fn validate(
        names: &Vec<String>,
        _kind: BundleKind,
        check: &Validator<'_>,
    ) -> Result<(), ManifestError> {
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

    fn is_empty(names: &Vec<String>) -> bool {
        names.is_empty()
    }

    fn describe(names: &Vec<String>) -> Vec<String> {
        listed("env", names)
    }

    fn beyond(asked: &Vec<String>, approved: &Vec<String>) -> Vec<String> {
        unlisted(asked, approved)
            .map(|name| format!("env {name}"))
            .collect()
    }

    /// Untrusted code sees no environment.
    fn untrusted(names: &mut Vec<String>) -> Vec<String> {
        names
            .drain(..)
            .map(|name| format!("env {name} (untrusted code sees no environment)"))
            .collect()
    }
}

/// `what [a, b]` for the names `names`, when there are any.
pub(crate) fn listed(what: &str, names: &[String]) -> Vec<String> {
    if names.is_empty() {
        Vec::new()
    } else {
        vec![format!("{what} [{}]", names.join(", "))]
    }
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
