//! Python packages a skill's scripts import, pinned, approved and fetched.
//!
//! A skill names its packages in `requirements.txt` (one exact pin a line,
//! see [`requirements`]), or the operator names them for it. `cordon skills
//! approve NAME` resolves each pin on the package index (PyPI's JSON API, or
//! the mirror `CORDON_PACKAGE_INDEX` names), picks the wheel the sandbox can
//! run (a pure-Python `…-none-any.whl` or a WASI build; see [`index`]),
//! shows it with its SHA-256, and on the operator's yes downloads it, checks
//! its hash, and unpacks it read-only into the skill's package folder (see
//! [`wheel`]). What was approved is kept in the operator's
//! `.cordon/packages.toml` ([`approvals`]). Nothing of a package runs on the
//! host: a wheel is a zip of files, and a package published only as a source
//! archive, whose build would run its code, is refused.
//!
//! A run mounts an active skill's package folder read-only at
//! `/packages/NAME` and puts it on the interpreter's `PYTHONPATH`, when the
//! folder holds exactly what the operator approved for the skill's
//! requirements as they are now.

pub mod approvals;
pub mod index;
pub mod requirements;
pub mod wheel;

use std::fmt;

/// What speaks to the index: one client for a whole approval.
pub use reqwest::Client;

/// Why packages cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// The skill's requirements cannot be read.
    #[error("{0}")]
    Requirements(String),
    /// The index does not answer, or answers something unreadable.
    #[error("the package index at {index}: {detail}")]
    Index {
        /// The index asked.
        index: String,
        /// What went wrong.
        detail: String,
    },
    /// No wheel of the package runs in the sandbox.
    #[error(
        "{requirement} has no wheel the sandbox can run: {published}; only pure-Python wheels \
         (…-none-any.whl) and WASI builds run there, and Cordon never runs a package's build or \
         install code"
    )]
    NoSandboxWheel {
        /// The pin.
        requirement: requirements::Requirement,
        /// What the index offers instead.
        published: Published,
    },
    /// A download's bytes are not the ones announced or approved.
    #[error("{file}: its SHA-256 is {found}, but {expected} was {source_of_expected}; refused")]
    HashMismatch {
        /// The wheel's file name.
        file: String,
        /// The hash of the bytes received.
        found: String,
        /// The hash they should have.
        expected: String,
        /// Who said so: the index, or the operator's approval.
        source_of_expected: &'static str,
    },
    /// A wheel is not a well-formed archive of files inside itself.
    #[error("{file}: {detail}")]
    BadWheel {
        /// The wheel's file name.
        file: String,
        /// What is wrong.
        detail: String,
    },
    /// The package folder or the approvals file cannot be written.
    #[error("{0}")]
    Io(String),
}

/// What an index publishes for a version, when none of it runs in the sandbox.
#[derive(Debug)]
pub struct Published(pub Vec<String>);

impl fmt::Display for Published {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.as_slice() {
            [] => write!(f, "it publishes no files for this version"),
            files if files.iter().all(|file| !file.ends_with(".whl")) => {
                write!(
                    f,
                    "it publishes only a source archive ({})",
                    files.join(", ")
                )
            }
            files => write!(
                f,
                "its wheels are built for native platforms ({})",
                files.join(", ")
            ),
        }
    }
}
