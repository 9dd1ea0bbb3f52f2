//! Where a run finds its skills' Python packages: the operator's approvals
//! (`packages.toml`, beside the grants file) and the package store
//! (`CORDON_PACKAGES_DIR`, else `$XDG_DATA_HOME/cordon/python-packages` or
//! `~/.local/share/cordon/python-packages`), outside the compile cache,
//! which no component may read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cordon_skills::packages::approvals::{self, APPROVALS_FILE, PackageApprovals};
use cordon_wasm::GRANTS_FILE;

use crate::settings::HostSettings;
use crate::xdg::{self, Base};

/// The variable naming the package store.
pub const STORE_VARIABLE: &str = "CORDON_PACKAGES_DIR";
/// The store's folder in Cordon's data folder.
const STORE_DIR: &str = "python-packages";

/// The operator's package approvals file of `settings`: beside the grants.
pub fn approvals_file(settings: &HostSettings) -> PathBuf {
    let grants = settings
        .grants
        .clone()
        .unwrap_or_else(|| PathBuf::from(GRANTS_FILE));
    match grants.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.join(APPROVALS_FILE),
        _ => PathBuf::from(APPROVALS_FILE),
    }
}

/// The package store; `None` without a home and without the variable.
pub fn store() -> Option<PathBuf> {
    match std::env::var_os(STORE_VARIABLE).filter(|value| !value.is_empty()) {
        Some(folder) => Some(PathBuf::from(folder)),
        None => Some(xdg::cordon_dir(Base::Data)?.join(STORE_DIR)),
    }
}

/// What a run mounts of its skills' packages.
#[derive(Debug, Default)]
pub struct Sites {
    /// The package folders ready to mount, by skill.
    pub ready: BTreeMap<String, PathBuf>,
    /// Why a skill's packages are not there, by skill: a sentence each.
    pub missing: BTreeMap<String, String>,
    /// Why the approvals cannot be read at all.
    pub unreadable: Option<String>,
}

/// The package folders of the skills in `folders` (by skill): those whose
/// requirements the operator approved exactly and whose wheels are
/// unpacked, and why the others are not.
pub fn sites(settings: &HostSettings, folders: &BTreeMap<String, PathBuf>) -> Sites {
    let mut sites = Sites::default();
    let file = approvals_file(settings);
    let approved = match PackageApprovals::load(&file) {
        Ok(approved) => approved,
        Err(error) => {
            sites.unreadable = Some(error.to_string());
            PackageApprovals::default()
        }
    };
    let store = store();
    for (skill, folder) in folders {
        let ready = match &store {
            Some(store) => approvals::ready_site(&approved, store, skill, folder),
            None => no_store(skill, folder),
        };
        match ready {
            Ok(Some(site)) => {
                sites.ready.insert(skill.clone(), site);
            }
            Ok(None) => {}
            Err(why) => {
                sites.missing.insert(skill.clone(), why);
            }
        }
    }
    sites
}

fn no_store(skill: &str, folder: &Path) -> Result<Option<PathBuf>, String> {
    let pins =
        cordon_skills::packages::requirements::read(folder).map_err(|error| error.to_string())?;
    if pins.is_empty() {
        return Ok(None);
    }
    Err(format!(
        "skill `{skill}` needs Python packages, but there is no package store: set {STORE_VARIABLE} or HOME"
    ))
}
