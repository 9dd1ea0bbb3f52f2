//! The compile cache a host uses: the folder compiled components are kept
//! in, and the per-user key that seals every entry (see
//! `cordon_wasm::CacheKey`).
//!
//! A compiled entry is native code the host runs, so the cache must lie
//! where no component reaches: a cache folder inside the workspace is
//! refused, naming what put it there. The key lives in the user's state
//! folder (`$XDG_STATE_HOME/cordon/cache.key`, or
//! `~/.local/state/cordon/cache.key`), apart from the cache, so that a cache
//! restored from elsewhere (a CI cache, say) cannot bring entries that
//! verify.

use std::path::{Path, PathBuf};

use cordon_wasm::{CacheConfig, CacheKey};

use crate::error::{Result, SessionError};
use crate::settings::HostSettings;
use crate::xdg::{self, Base};

/// The name of the key file in the user's state folder.
const KEY_FILE: &str = "cache.key";

/// Where a host's compile cache is, and what chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheFolder {
    /// The folder.
    pub dir: PathBuf,
    /// What chose it, for a message: a flag or an environment variable.
    pub chosen_by: String,
}

/// The compile cache folder of `settings`: `--cache-dir`, else
/// `$XDG_CACHE_HOME/cordon` or `~/.cache/cordon`; `None` without a home.
pub fn folder(settings: &HostSettings) -> Option<CacheFolder> {
    match &settings.cache_dir {
        Some(dir) => Some(CacheFolder {
            dir: dir.clone(),
            chosen_by: "--cache-dir (or CORDON_CACHE_DIR)".to_owned(),
        }),
        None => Some(CacheFolder {
            dir: xdg::cordon_dir(Base::Cache)?,
            chosen_by: xdg::placed_by(Base::Cache).to_owned(),
        }),
    }
}

/// The file the cache's key is kept in, when the user has a home.
pub fn key_file() -> Option<PathBuf> {
    Some(xdg::cordon_dir(Base::State)?.join(KEY_FILE))
}

/// The compile cache of `settings`, or none with `--no-cache` or without a
/// home: refused when the folder lies inside the workspace, sealed with the
/// user's key.
pub fn config(settings: &HostSettings) -> Result<Option<CacheConfig>> {
    if settings.no_cache {
        return Ok(None);
    }
    let Some(folder) = folder(settings) else {
        return Ok(None);
    };
    refuse_inside(&folder, &settings.workspace)?;
    let key = match key_file() {
        Some(file) => CacheKey::in_file(&file).map_err(SessionError::CacheKey)?,
        None => CacheKey::ephemeral(),
    };
    Ok(Some(CacheConfig {
        dir: folder.dir,
        key,
    }))
}

/// Refuse `folder` when it lies inside the workspace `workspace`, where a
/// component could swap what the host runs.
fn refuse_inside(folder: &CacheFolder, workspace: &Path) -> Result<()> {
    let (Ok(root), dir) = (workspace.canonicalize(), resolved(&folder.dir)) else {
        return Ok(());
    };
    if dir.starts_with(&root) {
        return Err(SessionError::CacheInside {
            dir: folder.dir.clone(),
            chosen_by: folder.chosen_by.clone(),
            workspace: root,
        });
    }
    Ok(())
}

/// `path` absolute, with every link on the part of it that exists followed.
pub(crate) fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(real, |joined, part| joined.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(workspace: &Path, cache: &Path) -> HostSettings {
        HostSettings {
            workspace: workspace.to_owned(),
            cache_dir: Some(cache.to_owned()),
            ..HostSettings::default()
        }
    }

    #[test]
    fn a_cache_inside_the_workspace_is_refused_naming_what_chose_it() {
        let workspace = tempfile::tempdir().unwrap();
        for inside in [
            workspace.path().join(".cache/cordon"),
            workspace.path().join("sub/../cache"),
            workspace.path().to_owned(),
        ] {
            let error = config(&settings(workspace.path(), &inside)).unwrap_err();
            let text = format!("{error:#}");
            assert!(
                text.contains("lies inside the workspace")
                    && text.contains("--cache-dir (or CORDON_CACHE_DIR) chose it")
                    && text.contains("--no-cache"),
                "{text}"
            );
        }
        let outside = tempfile::tempdir().unwrap();
        assert!(
            refuse_inside(
                &CacheFolder {
                    dir: outside.path().join("cordon"),
                    chosen_by: "HOME".into()
                },
                workspace.path()
            )
            .is_ok()
        );
        let no_cache = HostSettings {
            no_cache: true,
            ..settings(workspace.path(), workspace.path())
        };
        assert!(config(&no_cache).unwrap().is_none());
    }

    #[test]
    fn a_link_into_the_workspace_is_followed() {
        let workspace = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let link = elsewhere.path().join("cache");
        std::os::unix::fs::symlink(workspace.path(), &link).unwrap();
        let folder = CacheFolder {
            dir: link.join("cordon"),
            chosen_by: "XDG_CACHE_HOME".into(),
        };
        let error = refuse_inside(&folder, workspace.path()).unwrap_err();
        assert!(
            error.to_string().contains("XDG_CACHE_HOME chose it"),
            "{error}"
        );
    }
}
