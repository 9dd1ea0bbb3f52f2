//! Shared set-up for the integration tests: bundle folders assembled in
//! temporary directories from the guest components built for this test run.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cordon_kernel::{EventLog, MemoryStateStore, ToolError, ToolOutput, call_committed};
use cordon_wasm::{
    BundledPlugins, CacheConfig, CacheKey, DirReport, HostConfig, PluginHost, Plugins, Safeguards,
};
use serde_json::Value;
use tempfile::TempDir;

pub use cordon_test_artifacts as artifacts;

pub mod net;
pub mod replay;
mod rig;
pub mod script;

pub use rig::Rig;

/// One compiled-component cache for every test, in every process, so each
/// component is compiled once however many tests load it.
fn cache_dir() -> PathBuf {
    PathBuf::from(artifacts::COMPILED_DIR)
}

/// The compile cache in `dir`, sealed with the key the tests share.
pub fn cache_in(dir: &Path) -> CacheConfig {
    static KEY: OnceLock<CacheKey> = OnceLock::new();
    let key = KEY.get_or_init(|| {
        CacheKey::in_file(&cache_dir().with_extension("key")).expect("the tests' cache key")
    });
    CacheConfig {
        dir: dir.to_owned(),
        key: key.clone(),
    }
}

/// The plugins this build of Cordon ships, as the host knows them.
pub fn bundled() -> BundledPlugins {
    BundledPlugins::new(
        cordon_bundled::PLUGINS
            .iter()
            .map(|plugin| (plugin.name, plugin.manifest, plugin.sha256)),
    )
    .expect("the bundled plugins' manifests are valid")
}

/// A plugin host sharing the test binary's cache, knowing the bundled
/// plugins by their components.
pub fn host() -> PluginHost {
    PluginHost::new(HostConfig {
        cache: Some(cache_in(&cache_dir())),
        max_instances: 16,
    })
    .expect("create plugin host")
    .with_bundled(bundled())
}

/// A plugins directory and a workspace root, both temporary.
pub struct Fixture {
    /// The plugins directory, one folder per bundle.
    pub plugins: TempDir,
    /// The workspace root that directory grants resolve under.
    pub workspace: TempDir,
}

impl Fixture {
    /// Both directories, empty.
    pub fn new() -> Self {
        Self {
            plugins: tempfile::tempdir().expect("plugins dir"),
            workspace: tempfile::tempdir().expect("workspace dir"),
        }
    }

    /// Add bundle `folder` with `manifest` and a copy of `component` named as the
    /// manifest's `component` field says (`tool.wasm` in [`manifest`]).
    pub fn bundle(&self, folder: &str, manifest: &str, component: &Path) -> PathBuf {
        let dir = self.plugins.path().join(folder);
        std::fs::create_dir_all(&dir).expect("bundle dir");
        std::fs::write(dir.join("plugin.toml"), manifest).expect("write manifest");
        std::fs::copy(component, dir.join("tool.wasm")).expect("copy component");
        dir
    }

    /// Add one of the repository's bundled plugins, with its own manifest.
    pub fn bundled_plugin(&self, name: &str, component: &Path) -> PathBuf {
        let manifest = std::fs::read_to_string(
            Path::new(artifacts::PLUGINS_DIR)
                .join(name)
                .join("plugin.toml"),
        )
        .expect("read bundled manifest");
        let dir = self.plugins.path().join(name);
        std::fs::create_dir_all(&dir).expect("bundle dir");
        std::fs::write(dir.join("plugin.toml"), manifest).expect("write manifest");
        std::fs::copy(component, dir.join(format!("{name}.wasm"))).expect("copy component");
        dir
    }

    /// Load every bundle with `host`; those that fail are among the report's errors.
    pub async fn report(&self, host: &PluginHost) -> DirReport {
        host.load_dir(self.plugins.path(), self.workspace.path())
            .await
            .expect("read plugins dir")
    }

    /// Load every bundle, which must all be valid, with fresh in-memory state and events.
    pub async fn load(&self) -> Loaded {
        self.load_with(Safeguards::default()).await
    }

    /// Load every bundle, which must all be valid, under `safeguards`.
    pub async fn load_with(&self, safeguards: Safeguards) -> Loaded {
        self.load_on(host(), safeguards).await
    }

    /// Load every bundle with `host`, which must all be valid, under `safeguards`.
    pub async fn load_on(&self, host: PluginHost, safeguards: Safeguards) -> Loaded {
        let report = self.report(&host).await;
        let errors: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
        assert!(errors.is_empty(), "bundles failed to load: {errors:#?}");
        let state = Arc::new(MemoryStateStore::new());
        let events = Arc::new(EventLog::new());
        let plugins = host
            .plugins_with(report.bundles, events.clone(), safeguards)
            .unwrap_or_else(|errors| panic!("{}", errors[0]));
        Loaded {
            plugins,
            state,
            events,
        }
    }
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

/// Loaded plugins with their state store and event log.
pub struct Loaded {
    /// The loaded plugins.
    pub plugins: Plugins,
    /// The state that [`Loaded::call`] commits writes to.
    pub state: Arc<MemoryStateStore>,
    /// Every event the plugins emitted.
    pub events: Arc<EventLog>,
}

impl Loaded {
    /// Call `tool` and commit its writes to the in-memory state if it succeeds.
    pub async fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
        call_committed(&self.plugins, self.state.clone(), tool, args).await
    }
}

/// A manifest for a hook bundle named `name` handling `hooks`, whose component
/// is `tool.wasm`, followed by `extra` TOML (grants, config, limits).
pub fn hook_manifest(name: &str, hooks: &[&str], extra: &str) -> String {
    let hooks: Vec<String> = hooks.iter().map(|hook| format!("\"{hook}\"")).collect();
    format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\nkind = \"hook\"\nhooks = [{}]\ncomponent = \"tool.wasm\"\n{extra}",
        hooks.join(", ")
    )
}

/// A manifest for a tool bundle named `name` whose component is `tool.wasm`,
/// followed by `extra` TOML (grants, limits).
pub fn manifest(name: &str, extra: &str) -> String {
    format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n{extra}"
    )
}

/// The bundle folder `folder` under `parent` (the example tools or the hostile
/// fixtures in other languages), whose component `cordon build` must have
/// built: a missing component fails the test with the command that builds it.
pub fn built_bundle(parent: &str, folder: &str) -> PathBuf {
    let dir = Path::new(parent).join(folder);
    let manifest = std::fs::read_to_string(dir.join("plugin.toml"))
        .unwrap_or_else(|error| panic!("read {}/plugin.toml: {error}", dir.display()));
    let component = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("component = "))
        .map(|value| value.trim_matches('"').to_owned())
        .unwrap_or_else(|| panic!("{}/plugin.toml names no component", dir.display()));
    assert!(
        dir.join(&component).is_file(),
        "{}/{component} is missing: build it with `cargo run -p cordon-cli -- build {}` \
         (./scripts/test.sh installs the toolchains and builds it)",
        dir.display(),
        dir.display()
    );
    dir
}

/// Load the bundles in `dirs` (each already built) on a host with the default
/// pool, directory grants resolving under `workspace`, with fresh in-memory
/// state and events.
pub async fn load_bundles(dirs: &[PathBuf], workspace: &Path, safeguards: Safeguards) -> Loaded {
    let host = PluginHost::new(HostConfig {
        cache: Some(cache_in(&cache_dir())),
        ..HostConfig::default()
    })
    .expect("create plugin host")
    .with_bundled(bundled());
    let mut bundles = Vec::new();
    for dir in dirs {
        let loaded = host
            .load_bundle(dir, workspace)
            .await
            .unwrap_or_else(|error| panic!("load {}: {error}", dir.display()));
        bundles.push(loaded);
    }
    let state = Arc::new(MemoryStateStore::new());
    let events = Arc::new(EventLog::new());
    let plugins = host
        .plugins_with(bundles, events.clone(), safeguards)
        .unwrap_or_else(|errors| panic!("{}", errors[0]));
    Loaded {
        plugins,
        state,
        events,
    }
}
