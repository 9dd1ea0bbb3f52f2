//! What every component of a run obeys whatever its grants, as the operator
//! (and the agent's policy) set it: the file rules, the files and folders
//! no component reaches (the run store's, the operator's config and
//! approvals, the compile cache), the folders components may only read (the
//! plugins folders bundles are loaded from, the run's skills'), and whose
//! claims about their own tools are believed.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use cordon_kernel::FileRules;

use crate::approvals::Admission;
use crate::bundle::Bundle;
use crate::bundled::Provenance;
use crate::capabilities::dirs::guard::FileGuard;
pub use crate::capabilities::dirs::reserved::{Holds, ReadOnly, Reserved};

/// Whose claims about their tools' effects (read-only, destructive,
/// idempotent, open-world) the host believes. Permission rules such as
/// `@read-only` and re-running calls on resume rely on them; any other
/// bundle's tools count as [`ToolAnnotations::UNTRUSTED`](cordon_kernel::ToolAnnotations::UNTRUSTED).
///
/// Trust goes by bytes, never by name alone: the bundled plugins are
/// trusted when their component is the one this build of Cordon made; a
/// bundle the operator names is trusted when its component is the one the
/// operator approved, or the one its entry pins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    /// Whether the bundled plugins' own components are trusted.
    bundled: bool,
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

/// Why a bundle's claims about its tools are not believed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Distrust {
    /// A skill ships it: untrusted code, whatever its name.
    Skill,
    /// It takes a bundled plugin's name with another component.
    NamedLikeBundled,
    /// Nothing the operator wrote trusts it.
    NotNamed,
    /// The operator's entry pins another component.
    OtherPin {
        /// The digest the entry pins.
        pinned: String,
    },
    /// The operator names it, but approved no component of it: trust by
    /// name covers only the component the operator approved.
    NotApproved,
}

impl fmt::Display for Distrust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Skill => f.write_str("a skill's bundle, whose claims are never believed"),
            Self::NamedLikeBundled => f.write_str(
                "named like a plugin bundled with Cordon, but its component is not the one this build of Cordon made",
            ),
            Self::NotNamed => f.write_str(
                "the operator's config does not trust it (`trusted` in the operator config)",
            ),
            Self::OtherPin { pinned } => write!(
                f,
                "the operator's config trusts it pinned to another component (sha256:{pinned})"
            ),
            Self::NotApproved => f.write_str(
                "the operator's config names it, and trust by name covers only the component the operator approved (`cordon grants approve`), or pin its digest (`NAME@sha256:...`)",
            ),
        }
    }
}

impl Trust {
    /// No bundle is trusted.
    pub fn nobody() -> Self {
        Self {
            bundled: false,
            bundles: BTreeMap::new(),
        }
    }

    /// The bundled plugins' own components.
    pub fn bundled() -> Self {
        Self {
            bundled: true,
            bundles: BTreeMap::new(),
        }
    }

    /// This trust and `entry`: a bundle name, trusted for the component the
    /// operator approved, or `name@sha256:HEX` to trust the bundle only
    /// while its component has that digest.
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

    /// Whether `bundle`'s claims about its tools are believed.
    pub fn trusts(&self, bundle: &Bundle) -> bool {
        self.judge(bundle).is_ok()
    }

    /// Whether `bundle`'s claims about its tools are believed, and if not,
    /// why: never those of a skill's bundle, which is untrusted code
    /// whatever its name.
    pub fn judge(&self, bundle: &Bundle) -> Result<(), Distrust> {
        if bundle.skill.is_some() {
            return Err(Distrust::Skill);
        }
        if self.bundled && bundle.provenance == Provenance::Bundled {
            return Ok(());
        }
        match self.bundles.get(&bundle.manifest.name) {
            Some(Some(pinned)) if *pinned == bundle.digest => Ok(()),
            Some(Some(pinned)) => Err(Distrust::OtherPin {
                pinned: pinned.clone(),
            }),
            Some(None) => match bundle.admission {
                Admission::Approved | Admission::Unchecked => Ok(()),
                Admission::Bundled | Admission::AsksNothing => Err(Distrust::NotApproved),
            },
            None if bundle.provenance == Provenance::NamedLikeBundled => {
                Err(Distrust::NamedLikeBundled)
            }
            None => Err(Distrust::NotNamed),
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
    /// What no component reaches, besides the workspace root's `.cordon`:
    /// the run store's folder when it lies in the workspace (or its files
    /// when it sits in the root itself), the operator's config and approvals
    /// files, the compile cache.
    pub reserved: Vec<Reserved>,
    /// Whose tool annotations are believed.
    pub trust: Trust,
    /// The folders of the run's skills, which may be read (where a backend
    /// mounts them) and never changed.
    pub skills: Vec<PathBuf>,
    /// The skills' package folders, which may be read (where an interpreter
    /// imports from them) and never changed.
    pub packages: Vec<PathBuf>,
    /// The plugins folders bundles are loaded from, which may be read and
    /// never changed.
    pub plugins: Vec<PathBuf>,
}

impl Safeguards {
    /// The guard of every file access under the workspace root `root`.
    pub(crate) fn guard(&self, root: &Path) -> FileGuard {
        FileGuard::new(root, &self.reserved, self.files.clone())
            .with_read_only(&self.plugins, ReadOnly::Plugins)
            .with_read_only(&self.skills, ReadOnly::Skill)
            .with_read_only(&self.packages, ReadOnly::Packages)
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
