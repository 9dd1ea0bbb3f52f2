//! The settings a host is built from before any bundle loads: where the
//! workspace and the caches are, which operator config and approvals apply,
//! and who is told as components load. The CLI fills them from its global
//! flags; an embedder sets them directly.

use std::path::PathBuf;
use std::sync::Arc;

use cordon_wasm::LoadProgress;

/// Where a host finds its workspace, caches and operator files.
#[derive(Debug, Clone, Default)]
pub struct HostSettings {
    /// The workspace root that bundles' directory grants resolve under.
    pub workspace: PathBuf,
    /// The compile cache folder; `None` uses the user's cache folder.
    pub cache_dir: Option<PathBuf>,
    /// Compile every component afresh, caching nothing.
    pub no_cache: bool,
    /// The one operator config file to read instead of the user's and the
    /// project's.
    pub config: Option<PathBuf>,
    /// The operator's approvals file, instead of `.cordon/grants.toml`.
    pub grants: Option<PathBuf>,
    /// The instance pool's size, over the config's.
    pub max_instances: Option<u32>,
    /// Told about every load of bundles, when someone watches.
    pub progress: Option<Watcher>,
}

/// Who is told as bundles load.
#[derive(Clone)]
pub struct Watcher(pub Arc<dyn LoadProgress>);

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watcher")
    }
}
