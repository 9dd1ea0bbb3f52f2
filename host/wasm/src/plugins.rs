//! The plugin host and the set of loaded plugins. [`PluginHost`] loads bundles
//! from a directory; [`Plugins`] indexes their tools by name and implements the
//! kernel's [`ToolSet`] port, with each tool's effect annotations as the
//! operator's trust has them, and every call under the run's [`Safeguards`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cordon_kernel::{
    CallContext, EventSink, Reach, ToolAnnotations, ToolFuture, ToolSet, ToolSpec,
};
use serde_json::Value;

use crate::approvals::Approvals;
use crate::bundle::{self, Bundle, BundleError, Exports, LoadedBundle, Origin, Request};
use crate::bundled::BundledPlugins;
use crate::call;
use crate::capabilities::dirs::guard::FileGuard;
use crate::capabilities::network::policy::NetworkPolicy;
use crate::engine::{Engine, EngineError, HostConfig};
use crate::manifest::MANIFEST_FILE;
use crate::profile::UntrustedProfile;
use crate::progress::{LoadProgress, Silent};
use crate::safeguards::Safeguards;

/// Loads bundles onto one engine. Cheap to share; create one per process.
pub struct PluginHost {
    engine: Arc<Engine>,
    approvals: Approvals,
    bundled: BundledPlugins,
    profile: UntrustedProfile,
    network: Arc<NetworkPolicy>,
    progress: Arc<dyn LoadProgress>,
}

/// The instance pool of a host, for whoever watches how full it is.
#[derive(Clone)]
pub struct Pool(Arc<Engine>);

impl Pool {
    /// How many slots calls hold now.
    pub fn held(&self) -> u32 {
        self.0.admission.held()
    }

    /// How many slots it has.
    pub fn size(&self) -> u32 {
        self.0.admission.size()
    }
}

/// Every bundle of a plugins directory: those that loaded and why the others did not.
pub struct DirReport {
    /// Bundles that loaded, in folder-name order.
    pub bundles: Vec<LoadedBundle>,
    /// Bundles that did not, and conflicts between bundles.
    pub errors: Vec<BundleError>,
}

impl PluginHost {
    /// The instance pool every plugins folder this host loads shares.
    pub fn pool(&self) -> Pool {
        Pool(Arc::clone(&self.engine))
    }

    /// A host with its own engine.
    pub fn new(config: HostConfig) -> Result<Self, EngineError> {
        Ok(Self {
            engine: Engine::new(&config)?,
            approvals: Approvals::unchecked(),
            bundled: BundledPlugins::none(),
            profile: UntrustedProfile::default(),
            network: NetworkPolicy::default().shared(),
            progress: Arc::new(Silent),
        })
    }

    /// This host, telling `progress` about every load of bundles.
    #[must_use]
    pub fn with_progress(mut self, progress: Arc<dyn LoadProgress>) -> Self {
        self.progress = progress;
        self
    }

    /// This host, loading only bundles whose grants `approvals` cover.
    pub fn with_approvals(mut self, approvals: Approvals) -> Self {
        self.approvals = approvals;
        self
    }

    /// This host, knowing `bundled` as the plugins that ship with Cordon:
    /// only their components count as bundled, whatever a bundle's name.
    pub fn with_bundled(mut self, bundled: BundledPlugins) -> Self {
        self.bundled = bundled;
        self
    }

    /// The plugins this host knows as bundled with Cordon.
    pub fn bundled(&self) -> &BundledPlugins {
        &self.bundled
    }

    /// This host, loading a skill's bundles under `profile`.
    pub fn with_untrusted_profile(mut self, profile: UntrustedProfile) -> Self {
        self.profile = profile;
        self
    }

    /// The network policy every connection the host makes obeys, for
    /// clients of the host's own that reach out beside the components.
    pub fn network(&self) -> &Arc<NetworkPolicy> {
        &self.network
    }

    /// This host, connecting for every bundle under `policy`.
    pub fn with_network(mut self, policy: NetworkPolicy) -> Self {
        self.network = policy.shared();
        self
    }

    /// The approvals bundles load under.
    pub fn approvals(&self) -> &Approvals {
        &self.approvals
    }

    fn origin<'a>(&'a self, skill: Option<&'a str>) -> Origin<'a> {
        Origin {
            skill,
            approvals: &self.approvals,
            bundled: &self.bundled,
            profile: &self.profile,
            network: &self.network,
        }
    }

    /// Load the bundle in folder `dir`; directory grants resolve under `workspace_root`.
    pub async fn load_bundle(
        &self,
        dir: &Path,
        workspace_root: &Path,
    ) -> Result<LoadedBundle, BundleError> {
        bundle::load::load(&self.engine, dir, workspace_root, self.origin(None)).await
    }

    /// Load every bundle in `dir`: each sub-folder, which must hold a
    /// `plugin.toml` (folders whose names start with `.` are skipped), or
    /// `dir` itself when it holds one. One bad bundle does not stop the
    /// others from being checked.
    pub async fn load_dir(
        &self,
        dir: &Path,
        workspace_root: &Path,
    ) -> Result<DirReport, BundleError> {
        self.load_folders(dir, workspace_root, None).await
    }

    /// Load the tool bundles skill `skill` ships in `dir` (its `tools`
    /// folder), as [`load_dir`](Self::load_dir) does, each narrowed to the
    /// profile of untrusted code, and its tools named `SKILL/BUNDLE.tool`.
    pub async fn load_skill_tools(
        &self,
        skill: &str,
        dir: &Path,
        workspace_root: &Path,
    ) -> Result<DirReport, BundleError> {
        self.load_folders(dir, workspace_root, Some(skill)).await
    }

    async fn load_folders(
        &self,
        dir: &Path,
        workspace_root: &Path,
        skill: Option<&str>,
    ) -> Result<DirReport, BundleError> {
        let mut reports = self.load_each(&[dir], workspace_root, skill).await?;
        Ok(reports.pop().unwrap_or(DirReport {
            bundles: Vec::new(),
            errors: Vec::new(),
        }))
    }

    /// Load every bundle in each of `dirs`, as [`load_dir`](Self::load_dir)
    /// does one: a report for each folder, in order. The components of all
    /// of them that must be compiled are counted first, for the progress.
    pub async fn load_dirs(
        &self,
        dirs: &[&Path],
        workspace_root: &Path,
    ) -> Result<Vec<DirReport>, BundleError> {
        self.load_each(dirs, workspace_root, None).await
    }

    async fn load_each(
        &self,
        dirs: &[&Path],
        workspace_root: &Path,
        skill: Option<&str>,
    ) -> Result<Vec<DirReport>, BundleError> {
        let mut read = Vec::with_capacity(dirs.len());
        for dir in dirs {
            read.push(self.read_folders(dir, skill)?);
        }
        let readable = read.iter().flatten().filter(|read| read.request.is_ok());
        let bundles = readable.clone().count();
        let to_compile = readable.filter(|read| !read.cached).count();
        self.progress.begin(bundles, to_compile);
        let mut reports = Vec::with_capacity(read.len());
        for folders in read {
            let mut report = DirReport {
                bundles: Vec::new(),
                errors: Vec::new(),
            };
            for ReadFolder {
                folder,
                started,
                request,
                cached,
            } in folders
            {
                let request = match request {
                    Ok(request) => request,
                    Err(error) => {
                        report.errors.push(error);
                        continue;
                    }
                };
                let name = request.id.clone();
                if !cached {
                    self.progress.compiling(&name, request.size());
                }
                let origin = self.origin(skill);
                match bundle::load::load_read(
                    &self.engine,
                    request,
                    &folder,
                    workspace_root,
                    origin,
                    started,
                )
                .await
                {
                    Ok(loaded) => {
                        self.progress.loaded(&name, loaded.cache, loaded.load_time);
                        report.bundles.push(loaded);
                    }
                    Err(error) => report.errors.push(error),
                }
            }
            reports.push(without_duplicates(report));
        }
        self.progress.end();
        Ok(reports)
    }

    /// Each bundle folder of `dir`, in name order, with when its reading
    /// began and what it asks for, or why it cannot be read. A `dir` that
    /// holds a manifest itself is one bundle folder.
    fn read_folders(
        &self,
        dir: &Path,
        skill: Option<&str>,
    ) -> Result<Vec<ReadFolder>, BundleError> {
        let folder_error = |error: std::io::Error| BundleError::Folder {
            path: dir.to_owned(),
            message: format!("cannot read plugins directory: {error}"),
        };
        let mut folders: Vec<PathBuf> = if dir.join(MANIFEST_FILE).is_file() {
            vec![dir.to_owned()]
        } else {
            std::fs::read_dir(dir)
                .map_err(folder_error)?
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.is_dir() && !is_hidden(path))
                .collect()
        };
        folders.sort();
        Ok(folders
            .into_iter()
            .map(|folder| {
                let started = Instant::now();
                let request = if folder.join(MANIFEST_FILE).is_file() {
                    Request::read_with(&folder, skill, &self.profile, self.engine.cache.digests())
                } else {
                    Err(BundleError::Folder {
                        message: format!("no {MANIFEST_FILE} in this bundle folder"),
                        path: folder.clone(),
                    })
                };
                let cached = request
                    .as_ref()
                    .is_ok_and(|request| self.engine.cache.has(&request.digest));
                ReadFolder {
                    folder,
                    started,
                    request,
                    cached,
                }
            })
            .collect())
    }

    /// Make `bundles` callable, reporting events to `events`, with the
    /// default safeguards: the bundled plugins trusted, no file rules, and
    /// each workspace root's `.cordon` out of reach.
    pub fn plugins(
        &self,
        bundles: Vec<LoadedBundle>,
        events: Arc<dyn EventSink>,
    ) -> Result<Plugins, Vec<BundleError>> {
        self.plugins_with(bundles, events, Safeguards::default())
    }

    /// Make `bundles` callable, reporting events to `events`, every call
    /// under `safeguards`.
    pub fn plugins_with(
        &self,
        bundles: Vec<LoadedBundle>,
        events: Arc<dyn EventSink>,
        safeguards: Safeguards,
    ) -> Result<Plugins, Vec<BundleError>> {
        let (mut tools, conflicts) = index(&bundles);
        if !conflicts.is_empty() {
            return Err(conflicts);
        }
        for entry in tools.values_mut() {
            if !safeguards.trust.trusts(&entry.bundle) {
                entry.spec.annotations = ToolAnnotations::UNTRUSTED;
            }
        }
        let bundles: Vec<Arc<Bundle>> = bundles.into_iter().map(|loaded| loaded.bundle).collect();
        let mut hooks: Vec<Arc<Bundle>> = bundles
            .iter()
            .filter(|bundle| matches!(bundle.exports, Exports::Hooks(_)))
            .cloned()
            .collect();
        hooks.sort_by(|a, b| a.manifest.name.cmp(&b.manifest.name));
        let mut guards = BTreeMap::new();
        for bundle in &bundles {
            guards
                .entry(bundle.root.clone())
                .or_insert_with(|| Arc::new(safeguards.guard(&bundle.root)));
        }
        Ok(Plugins {
            inner: Arc::new(PluginsInner {
                engine: Arc::clone(&self.engine),
                bundles,
                tools,
                hooks,
                events,
                guards,
                safeguards,
            }),
        })
    }
}

/// A bundle folder as read before anything compiles.
struct ReadFolder {
    folder: PathBuf,
    /// When its reading began.
    started: Instant,
    /// What it asks for, or why it cannot be read.
    request: Result<Request, BundleError>,
    /// Whether its component's compiled form is in the cache, probed once.
    cached: bool,
}

/// `report` with every bundle whose name an earlier folder took moved to its
/// errors.
fn without_duplicates(mut report: DirReport) -> DirReport {
    let mut first: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut kept = Vec::with_capacity(report.bundles.len());
    for loaded in std::mem::take(&mut report.bundles) {
        let id = loaded.bundle.id();
        match first.get(&id) {
            Some(dir) => report.errors.push(BundleError::DuplicateBundle {
                name: id,
                first: dir.clone(),
                second: loaded.bundle.dir.clone(),
            }),
            None => {
                first.insert(id, loaded.bundle.dir.clone());
                kept.push(loaded);
            }
        }
    }
    report.bundles = kept;
    report
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with('.'))
}

/// One callable tool.
pub(crate) struct ToolEntry {
    pub(crate) bundle: Arc<Bundle>,
    /// The tool as the run sees it.
    pub(crate) spec: ToolSpec,
    /// Its name as its component knows it: without the skill a skill's
    /// tool is named under.
    pub(crate) local: String,
    pub(crate) validator: Arc<jsonschema::Validator>,
}

fn index(bundles: &[LoadedBundle]) -> (BTreeMap<String, ToolEntry>, Vec<BundleError>) {
    let mut tools: BTreeMap<String, ToolEntry> = BTreeMap::new();
    let mut names: BTreeMap<String, &Path> = BTreeMap::new();
    let mut conflicts = Vec::new();
    for loaded in bundles {
        let bundle = &loaded.bundle;
        if let Some(first) = names.insert(bundle.id(), &bundle.dir) {
            conflicts.push(BundleError::DuplicateBundle {
                name: bundle.id(),
                first: first.to_owned(),
                second: bundle.dir.clone(),
            });
            continue;
        }
        // Each tool is named under its bundle (`BUNDLE.tool`), and bundle
        // names are unique, so no two bundles define one tool.
        for spec in &loaded.tools {
            if let Some(validator) = loaded.validators.get(&spec.name) {
                let local = match &bundle.skill {
                    Some(skill) => spec
                        .name
                        .strip_prefix(skill.as_str())
                        .and_then(|rest| {
                            rest.strip_prefix(cordon_kernel::skills::SKILL_TOOL_SEPARATOR)
                        })
                        .unwrap_or(&spec.name)
                        .to_owned(),
                    None => spec.name.clone(),
                };
                tools.insert(
                    spec.name.clone(),
                    ToolEntry {
                        bundle: Arc::clone(bundle),
                        spec: spec.clone(),
                        local,
                        validator: Arc::clone(validator),
                    },
                );
            }
        }
    }
    (tools, conflicts)
}

/// Loaded plugins, ready to call. Cheap to clone; calls may run concurrently.
#[derive(Clone)]
pub struct Plugins {
    pub(crate) inner: Arc<PluginsInner>,
}

pub(crate) struct PluginsInner {
    pub(crate) engine: Arc<Engine>,
    pub(crate) bundles: Vec<Arc<Bundle>>,
    pub(crate) tools: BTreeMap<String, ToolEntry>,
    /// Hook bundles in the order their hooks run: by bundle name.
    pub(crate) hooks: Vec<Arc<Bundle>>,
    pub(crate) events: Arc<dyn EventSink>,
    /// The file guard of each workspace root the bundles were loaded under.
    guards: BTreeMap<PathBuf, Arc<FileGuard>>,
    pub(crate) safeguards: Safeguards,
}

impl PluginsInner {
    /// The file guard for calls into `bundle`.
    pub(crate) fn guard(&self, bundle: &Bundle) -> Arc<FileGuard> {
        self.guards
            .get(&bundle.root)
            .map_or_else(|| Arc::new(self.safeguards.guard(&bundle.root)), Arc::clone)
    }
}

impl Plugins {
    /// The loaded bundles.
    pub fn bundles(&self) -> &[Arc<Bundle>] {
        &self.inner.bundles
    }

    /// The bundle that provides `tool`.
    pub fn bundle_of(&self, tool: &str) -> Option<&Arc<Bundle>> {
        self.inner.tools.get(tool).map(|entry| &entry.bundle)
    }

    /// Whether the operator trusts `bundle`'s claims about its tools.
    pub fn trusts(&self, bundle: &Bundle) -> bool {
        self.inner.safeguards.trust.trusts(bundle)
    }
}

impl ToolSet for Plugins {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner
            .tools
            .values()
            .map(|entry| entry.spec.clone())
            .collect()
    }

    fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.inner.tools.get(name).map(|entry| entry.spec.clone())
    }

    fn call<'a>(&'a self, name: &'a str, args: Value, context: CallContext) -> ToolFuture<'a> {
        if let Some(entry) = self.inner.tools.get(name) {
            cordon_kernel::spans::component(|| entry.bundle.id(), &entry.bundle.digest);
        }
        call::invoke(&self.inner, name, args, context)
    }

    fn reach(&self, name: &str) -> Reach {
        self.inner
            .tools
            .get(name)
            .map_or(Reach::Beyond, |entry| entry.bundle.reach())
    }
}
