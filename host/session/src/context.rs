//! Turning the host settings and the operator's config into a plugin host
//! (loading only what the operator approved) and the safeguards calls run
//! under, and loading the bundles along the plugins search path.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cordon_kernel::{EventSink, FileRules};
use cordon_wasm::{
    BundledPlugins, DirReport, Holds, HostConfig, LoadedBundle, ManifestError, PluginHost, Plugins,
    Reserved, Safeguards,
};

use crate::cache;
use crate::error::{Result, SessionError};
use crate::operator::Operator;
use crate::plugin_path::PluginPath;
use crate::settings::HostSettings;

/// The plugins this build of Cordon ships, known by the digests of the
/// components this build made.
pub fn bundled() -> Result<BundledPlugins, ManifestError> {
    BundledPlugins::new(
        cordon_bundled::PLUGINS
            .iter()
            .map(|plugin| (plugin.name, plugin.manifest, plugin.sha256)),
    )
}

/// A plugin host configured from the command line and the operator's config.
pub fn host(settings: &HostSettings, operator: &Operator) -> Result<PluginHost> {
    let defaults = HostConfig::default();
    let host = PluginHost::new(HostConfig {
        cache: cache::config(settings)?,
        max_instances: operator.max_instances.unwrap_or(defaults.max_instances),
    })?
    .with_bundled(bundled()?)
    .with_approvals(operator.approvals.clone())
    .with_network(operator.network.policy()?);
    Ok(match &settings.progress {
        Some(watcher) => host.with_progress(watcher.0.clone()),
        None => host,
    })
}

/// The plugins `bundles` make on `host`, telling `live` what their calls do
/// and calling under `safeguards`; two bundles offering one tool name stop it,
/// naming every clash.
pub fn plugins(
    host: &PluginHost,
    bundles: Vec<LoadedBundle>,
    live: Arc<dyn EventSink>,
    safeguards: Safeguards,
) -> Result<Plugins> {
    host.plugins_with(bundles, live, safeguards)
        .map_err(SessionError::Bundles)
}

/// What calls obey besides their grants: `files` with the operator's file
/// rules, the operator's trust; out of every component's reach, the run
/// store at `store` in `workspace` ([`store_reach`]), the operator's files
/// and the compile cache ([`operator_reach`]); and the folders of the
/// plugins search path `plugins` read-only, whether they exist yet or not.
pub fn safeguards(
    settings: &HostSettings,
    operator: &Operator,
    files: &FileRules,
    (store, workspace): (Option<&Path>, &Path),
    plugins: &PluginPath,
) -> Safeguards {
    let mut reserved: Vec<Reserved> = store
        .map(|store| store_reach(store, workspace))
        .unwrap_or_default()
        .into_iter()
        .map(|path| Reserved::new(path, Holds::RunStore))
        .collect();
    reserved.extend(operator_reach(settings, operator));
    Safeguards {
        files: files.clone().union(&operator.files),
        reserved,
        trust: operator.trust.clone(),
        skills: Vec::new(),
        packages: Vec::new(),
        plugins: plugins
            .folders()
            .iter()
            .map(|folder| cache::resolved(&folder.path))
            .collect(),
    }
}

/// The operator's files wherever they live (every config file read, the
/// user's config folder, the project's `.cordon`, the approvals file) and
/// the compile cache with its key: what no component may reach, whatever
/// directory it is granted.
pub fn operator_reach(settings: &HostSettings, operator: &Operator) -> Vec<Reserved> {
    let operator_files = operator
        .config_files
        .iter()
        .cloned()
        .chain(operator.user_folder.clone())
        .chain([
            PathBuf::from(crate::store::PROJECT_FOLDER),
            operator.grants_file.clone(),
        ])
        .map(|path| Reserved::new(cache::resolved(&path), Holds::OperatorFiles));
    let compile_cache = cache::folder(settings)
        .map(|folder| folder.dir)
        .into_iter()
        .chain(cache::key_file())
        .map(|path| Reserved::new(cache::resolved(&path), Holds::CompileCache));
    operator_files.chain(compile_cache).collect()
}

/// What of the run store at `store` a component granted part of `workspace`
/// could reach, and so must not: its folder, when that lies inside the
/// workspace; its database files and its runs' locks alone, when it sits in
/// the workspace root itself; nothing, when it lies outside, where no grant
/// reaches.
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
        return ["", "-wal", "-shm", "-journal", "-driving"]
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
    cache::folder(settings).map_or_else(|| std::env::temp_dir().join("cordon"), |folder| folder.dir)
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
) -> Result<DirReport> {
    let (report, shadowed) = load_path(host, workspace, path).await?;
    for shadow in &shadowed {
        eprintln!("warning: {shadow}");
    }
    if !report.errors.is_empty() {
        for error in &report.errors {
            eprintln!("error: {error}");
        }
        if strict {
            return Err(SessionError::Strict(report.errors.len()));
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
) -> Result<(DirReport, Vec<Shadowed>)> {
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
        .map_err(SessionError::Load)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_plugin_is_known_by_its_digest_with_a_valid_manifest() {
        let bundled = bundled().expect("the shipped manifests are valid");
        let names: Vec<&str> = bundled.names().collect();
        for name in [
            "jq", "files", "notes", "redactor", "guard", "budget", "dir", "memory", "http",
        ] {
            assert!(names.contains(&name), "{name}: {names:?}");
        }
    }
}
