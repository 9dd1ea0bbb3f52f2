//! The operator's approvals of skills' packages, kept beside the grants in
//! `.cordon/packages.toml` where no component reaches:
//!
//! ```toml
//! [skills.pdf-forms]
//! named = ["pypdf==5.1.0"]        # pins the operator added for the skill
//! [[skills.pdf-forms.wheels]]
//! name = "pypdf"
//! version = "5.1.0"
//! file = "pypdf-5.1.0-py3-none-any.whl"
//! sha256 = "<64 hex digits>"
//! ```
//!
//! A skill's wheels are unpacked into a folder of the package store named
//! by their hashes, so a folder holds exactly one approved set.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::PackageError;
use super::requirements::{self, Requirement};

/// The approvals file, in the operator's `.cordon` folder.
pub const APPROVALS_FILE: &str = "packages.toml";
/// The file that marks a package folder as wholly unpacked.
const COMPLETE: &str = "complete";

/// Every skill's approved packages.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageApprovals {
    /// By skill.
    #[serde(default)]
    pub skills: BTreeMap<String, ApprovedSkill>,
}

/// One skill's approved packages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovedSkill {
    /// Pins the operator added to the skill's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named: Vec<String>,
    /// The wheels approved, one per pin.
    #[serde(default)]
    pub wheels: Vec<ApprovedWheel>,
}

/// One approved wheel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovedWheel {
    /// The package.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The wheel's file name.
    pub file: String,
    /// The wheel's SHA-256, lowercase hex.
    pub sha256: String,
    /// Whether only its Python files are taken, its compiled modules left
    /// out (`--python-only NAME`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub python_only: bool,
}

impl PackageApprovals {
    /// The approvals in `file`; none when it does not exist.
    pub fn load(file: &Path) -> Result<Self, PackageError> {
        match std::fs::read_to_string(file) {
            Ok(text) => toml::from_str(&text)
                .map_err(|error| PackageError::Io(format!("{}: {error}", file.display()))),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(error) => Err(PackageError::Io(format!(
                "{}: cannot read: {error}",
                file.display()
            ))),
        }
    }

    /// Writes the approvals to `file`, whole or not at all.
    pub fn save(&self, file: &Path) -> Result<(), PackageError> {
        let io = |error: std::io::Error| PackageError::Io(format!("{}: {error}", file.display()));
        let text =
            toml::to_string_pretty(self).map_err(|error| PackageError::Io(error.to_string()))?;
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let partial = file.with_extension("toml.partial");
        std::fs::write(&partial, text).map_err(io)?;
        std::fs::rename(&partial, file).map_err(io)
    }
}

impl ApprovedSkill {
    /// Every pin of the skill in `folder`: its own and the operator's.
    pub fn requirements(&self, folder: &Path) -> Result<Vec<Requirement>, PackageError> {
        let mut pins = requirements::read(folder)?;
        for named in &self.named {
            let pin = Requirement::parse(named).map_err(PackageError::Requirements)?;
            if !pins
                .iter()
                .any(|known| known.normalized() == pin.normalized())
            {
                pins.push(pin);
            }
        }
        pins.sort();
        Ok(pins)
    }

    /// Whether the wheels approved are exactly one for each of `pins`.
    pub fn covers(&self, pins: &[Requirement]) -> bool {
        let approved: BTreeSet<(String, String)> = self
            .wheels
            .iter()
            .map(|wheel| {
                let pin = Requirement {
                    name: wheel.name.clone(),
                    version: wheel.version.clone(),
                };
                (pin.normalized(), pin.version)
            })
            .collect();
        let wanted: BTreeSet<(String, String)> = pins
            .iter()
            .map(|pin| (pin.normalized(), pin.version.clone()))
            .collect();
        approved == wanted && approved.len() == self.wheels.len()
    }

    /// Where the wheels are unpacked in the package `store`.
    pub fn folder(&self, store: &Path, skill: &str) -> PathBuf {
        let mut hashes: Vec<&str> = self
            .wheels
            .iter()
            .map(|wheel| wheel.sha256.as_str())
            .collect();
        hashes.sort_unstable();
        let digest = hex::encode(Sha256::digest(hashes.join("\n")));
        store.join(skill).join(&digest[..16])
    }
}

/// The folder the interpreter imports from: `site` in a package folder.
pub fn site(folder: &Path) -> PathBuf {
    folder.join("site")
}

/// Marks a package folder as wholly unpacked.
pub fn mark_complete(folder: &Path) -> std::io::Result<()> {
    std::fs::write(folder.join(COMPLETE), "")
}

/// Whether a package folder is wholly unpacked.
pub fn is_complete(folder: &Path) -> bool {
    folder.join(COMPLETE).is_file()
}

/// The site folder of the skill `skill` in `folder`, when the operator
/// approved exactly its requirements and they are unpacked; otherwise why
/// not, as a sentence.
pub fn ready_site(
    approvals: &PackageApprovals,
    store: &Path,
    skill: &str,
    folder: &Path,
) -> Result<Option<PathBuf>, String> {
    let approved = approvals.skills.get(skill).cloned().unwrap_or_default();
    let pins = approved
        .requirements(folder)
        .map_err(|error| error.to_string())?;
    if pins.is_empty() {
        return Ok(None);
    }
    let listed = pins
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    if !approved.covers(&pins) {
        return Err(format!(
            "skill `{skill}` needs Python packages the operator has not approved ({listed}); \
             `cordon skills approve {skill}` shows and fetches them"
        ));
    }
    let packages = approved.folder(store, skill);
    if !is_complete(&packages) {
        return Err(format!(
            "skill `{skill}`'s approved packages ({listed}) are not in the package store \
             {}; `cordon skills approve {skill}` fetches them again",
            store.display()
        ));
    }
    Ok(Some(site(&packages)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_whose_pins_changed_since_their_approval_gets_no_packages() {
        let skill = tempfile::tempdir().unwrap();
        let store = tempfile::tempdir().unwrap();
        let write_skill = |metadata: &str| {
            std::fs::write(
                skill.path().join("SKILL.md"),
                format!("---\nname: greeter\ndescription: d\nmetadata:\n  python-requirements: \"{metadata}\"\n---\n"),
            )
            .unwrap();
        };
        let approved = ApprovedSkill {
            named: Vec::new(),
            wheels: vec![ApprovedWheel {
                name: "greet".into(),
                version: "1.0".into(),
                file: "greet-1.0-py3-none-any.whl".into(),
                sha256: "ab".repeat(32),
                python_only: false,
            }],
        };
        let approvals = PackageApprovals {
            skills: BTreeMap::from([("greeter".to_owned(), approved.clone())]),
        };
        let packages = approved.folder(store.path(), "greeter");
        std::fs::create_dir_all(&packages).unwrap();
        mark_complete(&packages).unwrap();

        write_skill("greet==1.0");
        assert_eq!(
            ready_site(&approvals, store.path(), "greeter", skill.path()),
            Ok(Some(site(&packages)))
        );
        // The skill's author changes a version, or adds a package beside the
        // approved one: neither is mounted until the operator approves.
        for changed in ["greet==2.0", "greet==1.0, sneaky==1.0"] {
            write_skill(changed);
            let refused =
                ready_site(&approvals, store.path(), "greeter", skill.path()).expect_err(changed);
            assert!(
                refused.contains("needs Python packages the operator has not approved"),
                "{changed}: {refused}"
            );
        }
    }
}
