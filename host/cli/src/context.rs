//! Turning the global options into a plugin host, and loading the plugins
//! directory for the commands that need every bundle to be valid.

use std::path::PathBuf;

use anyhow::{Context, bail};
use cordon_wasm::{DirReport, HostConfig, PluginHost};

use crate::args::GlobalArgs;

/// A plugin host configured from the command line.
pub fn host(global: &GlobalArgs) -> anyhow::Result<PluginHost> {
    let cache_dir = if global.no_cache {
        None
    } else {
        global.cache_dir.clone().or_else(default_cache_dir)
    };
    Ok(PluginHost::new(HostConfig {
        cache_dir,
        ..HostConfig::default()
    })?)
}

fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("cordon"))
}

/// Load `dir`, with directory grants under `workspace`, refusing to go on if
/// any bundle is invalid.
pub async fn load_all(
    host: &PluginHost,
    workspace: &std::path::Path,
    dir: &std::path::Path,
) -> anyhow::Result<DirReport> {
    let report = host
        .load_dir(dir, workspace)
        .await
        .with_context(|| format!("loading plugins from {}", dir.display()))?;
    if !report.errors.is_empty() {
        for error in &report.errors {
            eprintln!("error: {error}");
        }
        bail!(
            "{} bundle error(s) in {}; run `cordon plugins check {}` for details",
            report.errors.len(),
            dir.display(),
            dir.display()
        );
    }
    Ok(report)
}
