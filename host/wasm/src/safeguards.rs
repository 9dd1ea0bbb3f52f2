//! What every component of a run obeys whatever its grants, as the operator
//! (and the agent's policy) set it: the file rules, the folders no component
//! reaches (the run store's), the folders components may only read (the
//! run's skills'), and which bundles' claims about their own tools are
//! believed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cordon_kernel::FileRules;

use crate::bundle::Bundle;
use crate::capabilities::dirs::guard::FileGuard;

/// The bundles that ship with Cordon, trusted unless the operator says
/// otherwise.
pub const BUNDLED: &[&str] = &[
    "jq", "files", "notes", "redactor", "guard", "budget", "dir", "memory", "http",
];

/// Bundles whose tools' effect annotations (read-only, destructive,
/// idempotent, open-world) the host believes. Permission rules such as
/// `@read-only` and re-running calls on resume rely on them; any other
/// bundle's tools count as [`ToolAnnotations::UNTRUSTED`](cordon_kernel::ToolAnnotations::UNTRUSTED).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    /// Trusted bundle names, each with the component digest it must have,
    /// when pinned.
    bundles: BTreeMap<String, Option<String>>,
}

/// Why a trust entry was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("trusted bundle {entry:?}: {reason}")]
pub struct TrustError {
    /// The entry as written.
    pub entry: String,
    /// What is wrong with it.
    pub reason: String,
}

impl Trust {
    /// No bundle is trusted.
    pub fn nobody() -> Self {
        Self {
            bundles: BTreeMap::new(),
        }
    }

    /// The bundles that ship with Cordon ([`BUNDLED`]).
    pub fn bundled() -> Self {
        Self {
            bundles: BUNDLED
                .iter()
                .map(|name| ((*name).to_owned(), None))
                .collect(),
        }
    }

    /// This trust and `entry`: a bundle name, or `name@sha256:HEX` to trust
    /// the bundle only while its component has that digest.
    pub fn with(mut self, entry: &str) -> Result<Self, TrustError> {
        let fail = |reason: &str| TrustError {
            entry: entry.to_owned(),
            reason: reason.to_owned(),
        };
        let (name, digest) = match entry.split_once('@') {
            None => (entry, None),
            Some((name, pin)) => {
                let digest = pin
                    .strip_prefix("sha256:")
                    .map(str::to_ascii_lowercase)
                    .filter(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                    .ok_or_else(|| fail("a pin is `NAME@sha256:` and 64 hex digits"))?;
                (name, Some(digest))
            }
        };
        let valid = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !valid {
            return Err(fail("not a bundle name"));
        }
        self.bundles.insert(name.to_owned(), digest);
        Ok(self)
    }

    /// Whether `bundle`'s claims about its tools are believed: never those
    /// of a skill's bundle, which is untrusted code whatever its name.
    pub fn trusts(&self, bundle: &Bundle) -> bool {
        if bundle.skill.is_some() {
            return false;
        }
        match self.bundles.get(&bundle.manifest.name) {
            None => false,
            Some(None) => true,
            Some(Some(digest)) => *digest == bundle.digest,
        }
    }
}

impl Default for Trust {
    fn default() -> Self {
        Self::bundled()
    }
}

/// What a run's components obey besides their grants.
#[derive(Debug, Clone, Default)]
pub struct Safeguards {
    /// File rules every component obeys, at the file layer.
    pub files: FileRules,
    /// What no component reaches, with everything beneath it, besides the
    /// workspace root's `.cordon`: the run store's folder when it lies in the
    /// workspace, or its files when it sits in the root itself.
    pub reserved: Vec<PathBuf>,
    /// Whose tool annotations are believed.
    pub trust: Trust,
    /// The folders of the run's skills, which may be read (where a backend
    /// mounts them) and never changed.
    pub skills: Vec<PathBuf>,
}

impl Safeguards {
    /// The guard of every file access under the workspace root `root`.
    pub(crate) fn guard(&self, root: &Path) -> FileGuard {
        FileGuard::new(root, &self.reserved, self.files.clone()).with_read_only(&self.skills)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_entries_are_names_or_pinned_names() {
        let trust = Trust::nobody()
            .with("weather")
            .unwrap()
            .with(&format!("maps@sha256:{}", "A".repeat(64)))
            .unwrap();
        assert_eq!(
            trust.bundles["maps"].as_deref(),
            Some("a".repeat(64).as_str())
        );
        for bad in ["", "Weather", "maps@md5:00", "maps@sha256:abc", "../x"] {
            assert!(Trust::nobody().with(bad).is_err(), "{bad:?}");
        }
    }
}
