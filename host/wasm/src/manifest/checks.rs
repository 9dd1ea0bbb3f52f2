//! What every section's checks share: the error that names the manifest
//! file, the field and the value, the checker that makes it, and the rules
//! for names and paths. Each capability checks its own section with these,
//! so none of them needs the manifest as a whole.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Why a manifest was rejected.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("{}: cannot read manifest: {source}", file.display())]
    Read {
        /// The manifest file.
        file: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, has an unknown key or a value of the wrong type.
    #[error("{}: {message}", file.display())]
    Parse {
        /// The manifest file.
        file: PathBuf,
        /// The parser's explanation.
        message: String,
    },
    /// A value is present and well typed, but not acceptable.
    #[error("{}: field `{field}` = {value}: {reason}", file.display())]
    Invalid {
        /// The manifest file.
        file: PathBuf,
        /// The field at fault, such as `plugin.sha256`.
        field: String,
        /// The value, quoted as in Rust's `Debug` output.
        value: String,
        /// Why the value was refused.
        reason: String,
    },
}

/// Checks the values of one manifest file, naming it in every error.
pub(crate) struct Validator<'a> {
    file: &'a Path,
}

impl<'a> Validator<'a> {
    /// Checks for the manifest `file`.
    pub(crate) fn new(file: &'a Path) -> Self {
        Self { file }
    }
}

impl Validator<'_> {
    /// The error for `value` of `field`, refused for `reason`.
    pub(crate) fn invalid(
        &self,
        field: &str,
        value: impl fmt::Debug,
        reason: &str,
    ) -> ManifestError {
        ManifestError::Invalid {
            file: self.file.to_owned(),
            field: field.to_owned(),
            value: format!("{value:?}"),
            reason: reason.to_owned(),
        }
    }

    /// Refuse an invalid or repeated name of the list `field`.
    pub(crate) fn unique_names(
        &self,
        field: &str,
        names: &[String],
        valid: fn(&str) -> bool,
        reason: &str,
    ) -> Result<(), ManifestError> {
        let mut seen = BTreeSet::new();
        for (index, name) in names.iter().enumerate() {
            if !valid(name) {
                return Err(self.invalid(&format!("{field}[{index}]"), name, reason));
            }
            if !seen.insert(name) {
                return Err(self.invalid(&format!("{field}[{index}]"), name, "is listed twice"));
            }
        }
        Ok(())
    }
}

pub(crate) fn is_identifier(name: &str, extra: impl Fn(char) -> bool) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || extra(c))
}

/// Whether `name` is an acceptable tool name: lowercase letters, digits, `.`, `_`
/// and `-`, starting with a letter or digit, at most 128 characters.
pub fn is_tool_name(name: &str) -> bool {
    name.len() <= 128 && is_identifier(name, |c| matches!(c, '.' | '_' | '-'))
}

/// Whether `path` is relative and stays inside the folder it is relative to.
pub(crate) fn is_contained_relative(path: &Path) -> bool {
    path.components()
        .all(|part| matches!(part, Component::Normal(_) | Component::CurDir))
}
