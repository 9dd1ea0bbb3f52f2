//! Turning the host settings and the operator's config into a plugin host
//! (loading only what the operator approved) and the safeguards calls run
//! under, and loading the plugins directory for the commands that need every
//! bundle to be valid.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use cordon_kernel::FileRules;
use cordon_wasm::{DirReport, HostConfig, PluginHost, Safeguards};

use crate::operator::Operator;
use crate::settings::HostSettings;

/// A plugin host configured from the command line and the operator's config.
pub fn host(settings: &HostSettings, operator: &Operator) -> anyhow::Result<PluginHost> {
    let cache_dir = if settings.no_cache {
        None
    } else {
        settings.cache_dir.clone().or_else(default_cache_dir)
    };
    let defaults = HostConfig::default();
    Ok(PluginHost::new(HostConfig {
        cache_dir,
        max_instances: operator.max_instances.unwrap_or(defaults.max_instances),
    })?
    .with_approvals(operator.approvals.clone())
    .with_network(operator.network.policy()?))
}

/// What calls obey besides their grants: `files` with the operator's file
/// rules, the operator's trust, and the run store at `store` out of every
/// component's reach ([`store_reach`]).
pub fn safeguards(
    operator: &Operator,
    files: &FileRules,
    store: &Path,
    workspace: &Path,
) -> Safeguards {
    Safeguards {
        files: files.clone().union(&operator.files),
        reserved: store_reach(store, workspace),
        trust: operator.trust.clone(),
        skills: Vec::new(),
    }
}

/// What of the run store at `store` a component granted part of `workspace`
/// could reach, and so must not: its folder, when that lies inside the
/// workspace; its database files alone, when it sits in the workspace root
/// itself; nothing, when it lies outside, where no grant reaches.
pub fn store_reach(store: &Path, workspace: &Path) -> Vec<PathBuf> {
    let Ok(root) = workspace.canonicalize() else {
        return Vec::new();
    };
    let absolute = std::path::absolute(store).unwrap_or_else(|_| store.to_owned());
    let (Some(folder), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Vec::new();
    };
    let folder = folder.canonicalize().unwrap_or_else(|_| folder.to_owned());
    if folder == root {
        let name = name.to_string_lossy();
        return ["", "-wal", "-shm", "-journal"]
            .iter()
            .map(|suffix| folder.join(format!("{name}{suffix}")))
            .collect();
    }
    if folder.starts_with(&root) {
        return vec![folder];
    }
    Vec::new()
}

/// The folder Cordon keeps its caches under: `--cache-dir`, else
/// `$XDG_CACHE_HOME/cordon` or `~/.cache/cordon`, else one in the temporary
/// directory. Used even with `--no-cache`, for what is not a compiled component.
pub fn cache_root(settings: &HostSettings) -> PathBuf {
    settings
        .cache_dir
        .clone()
        .or_else(default_cache_dir)
        .unwrap_or_else(|| std::env::temp_dir().join("cordon"))
}

fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("cordon"))
}

/// Load `dir`, with directory grants under `workspace`. A bundle that does
/// not load is left out with a loud error and the rest serve; with `strict`,
/// any such bundle stops the command. Warns of secrets the operator's config
/// and the bundles disagree on.
pub async fn load_all(
    host: &PluginHost,
    operator: &Operator,
    workspace: &std::path::Path,
    dir: &std::path::Path,
    strict: bool,
) -> anyhow::Result<DirReport> {
    let report = host
        .load_dir(dir, workspace)
        .await
        .with_context(|| format!("loading plugins from {}", dir.display()))?;
    if !report.errors.is_empty() {
        for error in &report.errors {
            eprintln!("error: {error}");
        }
        if strict {
            bail!(
                "{} bundle error(s) in {} and --strict; run `cordon plugins check {}` for details",
                report.errors.len(),
                dir.display(),
                dir.display()
            );
        }
        eprintln!(
            "error: {} bundle error(s) in {}: those bundles are left out and their tools are not \
             offered; the other {} bundle(s) serve (`cordon plugins check {}` for details, \
             --strict to stop instead)",
            report.errors.len(),
            dir.display(),
            report.bundles.len(),
            dir.display()
        );
    }
    let declared = report.bundles.iter().map(|loaded| {
        let manifest = &loaded.bundle.manifest;
        (
            manifest.name.as_str(),
            manifest.secrets.keys().map(String::as_str).collect(),
        )
    });
    for warning in operator.network.secret_warnings(declared) {
        eprintln!("warning: {warning}");
    }
    Ok(report)
}
