//! Turning the host settings and the operator's config into a plugin host
//! (loading only what the operator approved) and the safeguards calls run
//! under, and loading the bundles along the plugins search path.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use cordon_kernel::FileRules;
use cordon_wasm::{DirReport, HostConfig, PluginHost, Safeguards};

use crate::operator::Operator;
use crate::plugin_path::PluginPath;
use crate::settings::HostSettings;
use crate::xdg::{self, Base};

/// A plugin host configured from the command line and the operator's config.
pub fn host(settings: &HostSettings, operator: &Operator) -> anyhow::Result<PluginHost> {
    let cache_dir = if settings.no_cache {
        None
    } else {
        settings.cache_dir.clone().or_else(default_cache_dir)
    };
    let defaults = HostConfig::default();
    let host = PluginHost::new(HostConfig {
        cache_dir,
        max_instances: operator.max_instances.unwrap_or(defaults.max_instances),
    })?
    .with_approvals(operator.approvals.clone())
    .with_network(operator.network.policy()?);
    Ok(match &settings.progress {
        Some(watcher) => host.with_progress(watcher.0.clone()),
        None => host,
    })
}

/// What calls obey besides their grants: `files` with the operator's file
/// rules, the operator's trust, and the run store at `store` out of every
/// component's reach ([`store_reach`]).
pub fn safeguards(
    operator: &Operator,
    files: &FileRules,
    store: Option<&Path>,
    workspace: &Path,
) -> Safeguards {
    Safeguards {
        files: files.clone().union(&operator.files),
        reserved: store.map_or_else(Vec::new, |store| store_reach(store, workspace)),
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
    xdg::cordon_dir(Base::Cache)
}

/// Load every folder of the search path `path`, with directory grants under
/// `workspace`. A bundle an earlier folder holds shadows one of the same name
/// in a later folder, with a warning. A bundle that does not load is left
/// out with a loud error and the rest serve; with `strict`, any such bundle
/// stops the command. Warns of secrets the operator's config and the bundles
/// disagree on.
pub async fn load_all(
    host: &PluginHost,
    operator: &Operator,
    workspace: &Path,
    path: &PluginPath,
    strict: bool,
) -> anyhow::Result<DirReport> {
    let (report, shadowed) = load_path(host, workspace, path).await?;
    for shadow in &shadowed {
        eprintln!("warning: {shadow}");
    }
    if !report.errors.is_empty() {
        for error in &report.errors {
            eprintln!("error: {error}");
        }
        if strict {
            bail!(
                "{} bundle error(s) and --strict; run `cordon plugins check` with the same \
                 plugins folders for details",
                report.errors.len(),
            );
        }
        eprintln!(
            "error: {} bundle error(s): those bundles are left out and their tools are not \
             offered; the other {} bundle(s) serve (`cordon plugins check` for details, \
             --strict to stop instead)",
            report.errors.len(),
            report.bundles.len(),
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

/// A bundle left out because an earlier folder of the search path holds one
/// of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    /// The bundle's name.
    pub name: String,
    /// The folder of the bundle that loads.
    pub kept: PathBuf,
    /// The folder of the bundle left out.
    pub hidden: PathBuf,
}

impl std::fmt::Display for Shadowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bundle `{}` in {} shadows the one in {}, which is not loaded",
            self.name,
            self.kept.display(),
            self.hidden.display()
        )
    }
}

/// Load every folder of `path` that exists, first first: every bundle that
/// loads, every error, and the bundles a same-named one earlier shadows.
pub async fn load_path(
    host: &PluginHost,
    workspace: &Path,
    path: &PluginPath,
) -> anyhow::Result<(DirReport, Vec<Shadowed>)> {
    let mut merged = DirReport {
        bundles: Vec::new(),
        errors: Vec::new(),
    };
    let mut shadowed = Vec::new();
    let present = path.present()?;
    let dirs: Vec<&Path> = present.iter().map(|folder| folder.path.as_path()).collect();
    let reports = host
        .load_dirs(&dirs, workspace)
        .await
        .context("loading the plugins folders")?;
    for report in reports {
        for loaded in report.bundles {
            let name = loaded.bundle.id();
            match merged
                .bundles
                .iter()
                .find(|earlier| earlier.bundle.id() == name)
            {
                Some(earlier) => shadowed.push(Shadowed {
                    name,
                    kept: earlier.bundle.dir.clone(),
                    hidden: loaded.bundle.dir.clone(),
                }),
                None => merged.bundles.push(loaded),
            }
        }
        merged.errors.extend(report.errors);
    }
    Ok((merged, shadowed))
}
