//! One run's whole assembly from its launch: the agent and its permissions,
//! the plugins folder loaded under the operator's approvals, the state keys
//! bundles declare, the skills, the sandbox backend and its workspace tools,
//! the run store, and the runtime wired to them. `cordon run`, `cordon mcp`
//! and embedders build a run through here and nowhere else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cordon_kernel::{
    AgentDef, ChosenHooks, EventSink, HookPhase, HookSet, ModelProvider, PermissionPolicy, Runtime,
    ToolSet, ToolSets, Verdict, nearest_name,
};
use cordon_wasm::manifest::MANIFEST_FILE;
use cordon_wasm::{
    BundleKind, LoadedBundle, Manifest, PluginHost, Plugins, Safeguards, Workspace,
    WorkspaceOptions, WriteMode,
};

use crate::context;
use crate::defaults::Defaults;
use crate::error::{Result, SessionError};
use crate::live::{Current, LiveSet};
use crate::mcp_servers;
use crate::operator::Operator;
use crate::plugin_path::PluginPath;
use crate::settings::HostSettings;
use crate::skillset::{self, Skillset};
use crate::store;

/// What a run was started with, recorded in its header so that `runs resume`
/// needs no flags: absolute paths, so a resume from elsewhere finds them.
#[derive(Debug, Default, Clone)]
pub struct Launch {
    /// The agent file; `None` runs the default agent.
    pub agent: Option<PathBuf>,
    /// The permissions file that replaces the agent's own policy.
    pub permissions: Option<PathBuf>,
    /// The model spec and the directory a relative script path resolves against.
    pub model: Option<(String, PathBuf)>,
    /// The provider's base URL given on the command line.
    pub base_url: Option<String>,
    /// The workspace root: bundles' directory grants resolve under it.
    pub workspace: PathBuf,
    /// The sandbox backend given on the command line.
    pub sandbox: Option<String>,
    /// `--transactional` (true) or `--direct` (false), when given.
    pub transactional: Option<bool>,
    /// Whether a `memory` workspace starts from the workspace folder.
    pub seed: bool,
    /// The `--skills` folders given, searched first for skills.
    pub skills: Vec<PathBuf>,
    /// The plugins search path.
    pub plugins: PluginPath,
}

impl Launch {
    /// The launch recorded in `metadata`, overridden by any setting in
    /// `given` (`plugins_given` says whether a flag or the environment chose
    /// its plugins folders). The workspace root and the sandbox's write
    /// mode stay as recorded: the run's staged changes belong to that folder.
    pub fn resumed(given: Self, plugins_given: bool, metadata: &BTreeMap<String, String>) -> Self {
        let recorded = |key: &str| metadata.get(key).map(PathBuf::from);
        Self {
            agent: given.agent.or_else(|| recorded("agent")),
            permissions: given.permissions.or_else(|| recorded("permissions")),
            model: given
                .model
                .or_else(|| Some((metadata.get("model")?.clone(), recorded("model-base")?))),
            base_url: given.base_url.or_else(|| metadata.get("base-url").cloned()),
            workspace: recorded("workspace").unwrap_or(given.workspace),
            sandbox: metadata.get("sandbox").cloned().or(given.sandbox),
            transactional: metadata
                .get("transactional")
                .map(|value| value == "true")
                .or(given.transactional),
            seed: metadata
                .get("seed")
                .map_or(given.seed, |value| value == "true"),
            skills: if given.skills.is_empty() {
                metadata
                    .get("skills")
                    .and_then(|text| serde_json::from_str(text).ok())
                    .unwrap_or_default()
            } else {
                given.skills
            },
            plugins: match metadata.get("plugins") {
                Some(recorded) if !plugins_given => PluginPath::recorded(recorded),
                _ => given.plugins,
            },
        }
    }

    /// What the run's header records, so that a resume needs no flags.
    pub fn metadata(&self) -> BTreeMap<String, String> {
        let mut metadata = BTreeMap::new();
        let mut put = |key: &str, path: &Path| {
            metadata.insert(key.to_owned(), path.display().to_string());
        };
        if let Some(agent) = &self.agent {
            put("agent", agent);
        }
        if let Some(permissions) = &self.permissions {
            put("permissions", permissions);
        }
        put("workspace", &self.workspace);
        if let Some((spec, base)) = &self.model {
            put("model-base", base);
            metadata.insert("model".to_owned(), spec.clone());
        }
        if let Some(url) = &self.base_url {
            metadata.insert("base-url".to_owned(), url.clone());
        }
        if let Some(sandbox) = &self.sandbox {
            metadata.insert("sandbox".to_owned(), sandbox.clone());
            metadata.insert("seed".to_owned(), self.seed.to_string());
        }
        if let Some(transactional) = self.transactional {
            metadata.insert("transactional".to_owned(), transactional.to_string());
        }
        if !self.skills.is_empty() {
            metadata.insert(
                "skills".to_owned(),
                serde_json::to_string(&self.skills).unwrap_or_default(),
            );
        }
        metadata.insert("plugins".to_owned(), self.plugins.record());
        metadata
    }

    /// Bind the run's sandbox backend, if it has one: the flag's, else the
    /// agent file's. Untrusted agents are transactional unless `--direct`.
    pub fn bind_workspace(
        &mut self,
        agent: &AgentDef,
        plugins: &Plugins,
    ) -> Result<Option<Workspace>> {
        if self.sandbox.is_none() {
            self.sandbox.clone_from(&agent.sandbox);
        }
        let Some(name) = &self.sandbox else {
            return Ok(None);
        };
        let transactional = *self.transactional.get_or_insert(!agent.trusted);
        let options = WorkspaceOptions {
            transactional,
            seed: self.seed,
        };
        Ok(Some(plugins.workspace(name, options)?))
    }

    /// The agent the launch names (or the default one, which asks before
    /// every call, under the `defaults`' permissions and step limit), with
    /// the launch's permissions file over its own.
    pub fn agent(&self, defaults: &Defaults) -> Result<AgentDef> {
        let mut agent = match &self.agent {
            Some(file) => AgentDef::load(file)?,
            None => {
                let steps = defaults
                    .max_steps
                    .as_ref()
                    .map_or(DEFAULT_MAX_STEPS, |steps| steps.value);
                let mut agent = AgentDef::new(
                    "cordon",
                    "Use the tools when they help, then answer briefly.",
                    &["*"],
                    steps,
                    PermissionPolicy::new(Verdict::Ask),
                )?;
                if let (None, Some(permissions)) = (&self.permissions, &defaults.permissions) {
                    agent.permissions =
                        PermissionPolicy::load(&permissions.value).map_err(|error| {
                            SessionError::DefaultPermissions {
                                config: permissions.file.clone(),
                                error,
                            }
                        })?;
                }
                agent
            }
        };
        if let Some(file) = &self.permissions {
            agent.permissions = PermissionPolicy::load(file)?;
        }
        Ok(agent)
    }
}

/// The step limit of a run with no agent file and no configured default.
const DEFAULT_MAX_STEPS: u32 = 12;

/// A run's tools, hooks, skills, sandbox and store, assembled.
pub struct Assembly {
    /// The agent, with the state keys its bundles declare adopted.
    pub agent: AgentDef,
    /// The launch as completed (the sandbox the agent file names, the write
    /// mode it implies), as the run's header records it.
    pub launch: Launch,
    /// The sandbox backend's workspace, when the run has one.
    pub workspace: Option<Workspace>,
    /// The skills offered.
    pub skills: Skillset,
    /// The run store.
    pub store: store::RunStore,
    /// What a person starting the run should read: the workspace, the
    /// skills and the MCP servers, one line each.
    pub notices: Vec<String>,
    /// For every tool that runs outside any sandbox (a local MCP server's),
    /// what a person deciding about its calls should know, by tool name.
    pub unsandboxed: BTreeMap<String, String>,
    /// Every tool the run offers (the plugins', the workspace's, the skill
    /// tool) and the plugins' hooks, swapped whole by [`Assembly::reload`].
    set: Arc<LiveSet>,
    /// What a reload needs again.
    host: PluginHost,
    operator: Operator,
    safeguards: Safeguards,
    skill_bundles: Vec<LoadedBundle>,
    fixed: Vec<Arc<dyn ToolSet>>,
    live: Arc<dyn EventSink>,
    strict: bool,
}

/// What a reload of the plugins folder put in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloaded {
    /// The tools offered now, by name.
    pub tools: Vec<String>,
    /// The bundles left out, each with why.
    pub left_out: Vec<String>,
}

impl Assembly {
    /// Assemble `agent`'s run from `launch`, with the store at `store_at`
    /// (created when missing, and removed again when the run cannot be
    /// assembled) and `live` seeing the components' events as
    /// they happen. A bundle that does not load is left out with a loud
    /// error, unless `strict`.
    pub async fn open(
        settings: &HostSettings,
        launch: Launch,
        agent: AgentDef,
        store_at: &store::StoreLocation,
        strict: bool,
        live: Arc<dyn EventSink>,
    ) -> Result<Self> {
        let fresh = store::Fresh::before_creating(store_at);
        let store = store::create(store_at).await?;
        let assembled = Self::open_in(
            settings,
            launch,
            agent,
            (store, store_at.file()),
            strict,
            live,
        )
        .await;
        if assembled.is_err() {
            // A run that never started leaves no store behind it.
            fresh.discard();
        }
        assembled
    }

    /// [`Assembly::open`] with a store already open: `store`, kept in the
    /// file `file` when it is a file store (which no component may reach).
    pub async fn open_in(
        settings: &HostSettings,
        launch: Launch,
        mut agent: AgentDef,
        (store, file): (store::RunStore, Option<&std::path::Path>),
        strict: bool,
        live: Arc<dyn EventSink>,
    ) -> Result<Self> {
        let mut launch = launch;
        let operator = Operator::load(settings)?;
        let host = context::host(settings, &operator)?;
        launch.plugins.present()?;
        let (servers, server_notices) = mcp_servers::open(
            &agent,
            launch.agent.as_deref(),
            &operator.mcp,
            host.network(),
            &launch.workspace,
            strict,
        )
        .await?;
        let report =
            context::load_all(&host, &operator, &launch.workspace, &launch.plugins, strict).await?;
        let roots = skillset::roots(
            &launch.skills,
            &agent,
            launch.agent.as_deref(),
            &launch.workspace,
        );
        let mut skills = skillset::assemble(&host, &roots, &launch.workspace).await;
        let mut safeguards = context::safeguards(
            settings,
            &operator,
            agent.permissions.files(),
            (file, &launch.workspace),
            &launch.plugins,
        );
        safeguards.skills = skills.folders().into_values().collect();
        let packages = crate::packages::sites(settings, &skills.folders());
        for why in packages.unreadable.iter().chain(packages.missing.values()) {
            eprintln!("warning: {why}");
        }
        safeguards.packages = packages.ready.values().cloned().collect();
        adopt_bundle_state(&mut agent, &report.bundles, launch.agent.as_deref())?;
        let skill_bundles = std::mem::take(&mut skills.bundles);
        let mut bundles = report.bundles;
        bundles.extend(skill_bundles.iter().cloned());
        let plugins = context::plugins(&host, bundles, live.clone(), safeguards.clone())?;
        let workspace = launch
            .bind_workspace(&agent, &plugins)?
            .map(|workspace| workspace.with_skills(skills.folders(), packages.ready.clone()));
        let mut fixed: Vec<Arc<dyn ToolSet>> = Vec::new();
        let mut notices = Vec::new();
        if let Some(workspace) = &workspace {
            notices.push(describe_workspace(launch.sandbox.as_deref(), workspace));
            fixed.push(workspace.tools());
        }
        if !skills.catalog.is_empty() {
            notices.push(format!("skills: {}", describe_skills(&skills)));
            fixed.push(Arc::new(
                skills
                    .tool(workspace.is_some())
                    .with_unavailable_packages(packages.missing.clone()),
            ));
        }
        notices.extend(server_notices);
        let unsandboxed = servers
            .as_ref()
            .map(cordon_mcp_client::McpTools::unsandboxed)
            .unwrap_or_default();
        if let Some(servers) = servers {
            fixed.push(Arc::new(servers));
        }
        let current = compose(Arc::new(plugins), &fixed, &agent, launch.agent.as_deref())?;
        let offered: Vec<String> = current
            .tools
            .specs()
            .into_iter()
            .map(|spec| spec.name)
            .chain(agent.sub_agent_tools())
            .collect();
        let agent_file = launch
            .agent
            .as_ref()
            .map_or_else(|| "the agent".to_owned(), |file| file.display().to_string());
        for pattern in agent.unmatched_tools(offered.iter().map(String::as_str)) {
            notices.push(format!(
                "warning: {agent_file}: `tools` pattern {pattern:?} matches none of the {} tool(s) offered; its calls would be refused",
                offered.len()
            ));
        }
        Ok(Self {
            agent,
            launch,
            workspace,
            skills,
            store,
            notices,
            unsandboxed,
            set: Arc::new(LiveSet::new(current)),
            host,
            operator,
            safeguards,
            skill_bundles,
            fixed,
            live,
            strict,
        })
    }

    /// Load the plugins folder again and put what it holds now in force for
    /// every call after; the workspace and the skills stay. A bundle that no
    /// longer loads is left out and the rest serve, unless the run is strict;
    /// a reload that cannot assemble (two tools of one name, a bundle's state
    /// declaration against the agent's) keeps the tools in force and says why.
    pub async fn reload(&self) -> Result<Reloaded> {
        let report = context::load_all(
            &self.host,
            &self.operator,
            &self.launch.workspace,
            &self.launch.plugins,
            self.strict,
        )
        .await?;
        let left_out = report.errors.iter().map(ToString::to_string).collect();
        adopt_bundle_state(
            &mut self.agent.clone(),
            &report.bundles,
            self.launch.agent.as_deref(),
        )?;
        let mut bundles = report.bundles;
        bundles.extend(self.skill_bundles.iter().cloned());
        let plugins = context::plugins(
            &self.host,
            bundles,
            self.live.clone(),
            self.safeguards.clone(),
        )?;
        let current = compose(
            Arc::new(plugins),
            &self.fixed,
            &self.agent,
            self.launch.agent.as_deref(),
        )?;
        let mut tools: Vec<String> = current
            .tools
            .specs()
            .into_iter()
            .map(|spec| spec.name)
            .collect();
        tools.sort();
        self.set.swap(current);
        Ok(Reloaded { tools, left_out })
    }

    /// The instance pool the run's calls take their slots from.
    pub fn pool(&self) -> cordon_wasm::Pool {
        self.host.pool()
    }

    /// The runtime that drives the run with `model`, the kernel showing its
    /// own events on `live`: the plugins as hooks, the skills' catalog, the
    /// workspace's file ledger, and the launch recorded in each run's header.
    pub fn runtime(&self, model: Arc<dyn ModelProvider>, live: Arc<dyn EventSink>) -> Runtime {
        self.wire(Runtime::new(
            model,
            self.set.current().tools,
            self.store.commits(),
            live,
        ))
    }

    /// The runtime for calls requested from outside (a served run): the same
    /// tools, hooks, workspace and store, and no model.
    pub fn runtime_for_requests(&self, live: Arc<dyn EventSink>) -> Runtime {
        self.wire(Runtime::for_requests(
            self.set.current().tools,
            self.store.commits(),
            live,
        ))
    }

    fn wire(&self, runtime: Runtime) -> Runtime {
        let mut runtime = runtime
            .with_hooks(self.set.current().hooks)
            .with_reloads(self.set.clone())
            .with_skills(self.skills.catalog.clone())
            .with_run_metadata(self.launch.metadata());
        if let Some(ledger) = self.workspace.as_ref().and_then(Workspace::ledger) {
            runtime = runtime.with_files(ledger);
        }
        runtime
    }
}

/// The plugins' tools beside the `fixed` ones, and the plugins as hooks: the
/// hook bundles `agent` chose, when its file (`file`) chooses, each of which
/// must be loaded.
fn compose(
    plugins: Arc<Plugins>,
    fixed: &[Arc<dyn ToolSet>],
    agent: &AgentDef,
    file: Option<&Path>,
) -> Result<Current> {
    let mut sets: Vec<Arc<dyn ToolSet>> = vec![plugins.clone()];
    sets.extend(fixed.iter().cloned());
    let tools = ToolSets::new(sets).map_err(SessionError::ProvidedTwice)?;
    // Sub-agents' hooks run beside their parents', so each must be loaded.
    for (_, hook) in agent.chosen_hooks() {
        check_chosen_hooks(&[hook.to_owned()], plugins.as_ref(), file)?;
    }
    let hooks: Arc<dyn HookSet> = match &agent.hooks {
        None => plugins,
        Some(chosen) => Arc::new(ChosenHooks::new(plugins, chosen)),
    };
    Ok(Current {
        tools: Arc::new(tools),
        hooks,
    })
}

/// Every name in an agent's `hooks` must be a hook bundle `loaded` has.
fn check_chosen_hooks(chosen: &[String], loaded: &dyn HookSet, file: Option<&Path>) -> Result<()> {
    let mut available: Vec<String> = HookPhase::ALL
        .iter()
        .flat_map(|phase| loaded.handlers(*phase))
        .collect();
    available.sort();
    available.dedup();
    for name in chosen {
        if available.contains(name) {
            continue;
        }
        return Err(SessionError::UnknownHook {
            agent: file.map_or_else(|| "the agent".to_owned(), |file| file.display().to_string()),
            name: name.clone(),
            nearest: nearest_name(name, available.iter().map(String::as_str)).map(str::to_owned),
            loaded: available,
        });
    }
    Ok(())
}

/// Adopt the state keys the loaded bundles declare, but for hook bundles the
/// agent's `hooks` leaves out, which never run. A disagreement with the
/// agent's own declaration stops the run before it starts, saying what to
/// change.
fn adopt_bundle_state(
    agent: &mut AgentDef,
    bundles: &[LoadedBundle],
    file: Option<&Path>,
) -> Result<()> {
    // A hook bundle a sub-agent chooses runs in the tree too.
    let chosen = agent.hooks.as_ref().map(|_| {
        agent
            .chosen_hooks()
            .into_iter()
            .map(|(_, hook)| hook.to_owned())
            .collect::<Vec<String>>()
    });
    let runs = |manifest: &Manifest| {
        manifest.kind != BundleKind::Hook
            || chosen
                .as_ref()
                .is_none_or(|chosen| chosen.contains(&manifest.name))
    };
    for loaded in bundles
        .iter()
        .filter(|loaded| runs(&loaded.bundle.manifest))
    {
        let manifest = &loaded.bundle.manifest;
        let shown = loaded.bundle.dir.join(MANIFEST_FILE);
        for (key, declared) in &manifest.state {
            let state_key = declared.key().map_err(|reason| SessionError::StateKey {
                manifest: shown.clone(),
                key: key.clone(),
                reason,
            })?;
            if let Err(disagreement) = agent.adopt_state_key(&manifest.name, key, state_key) {
                if disagreement.first.is_some() {
                    return Err(SessionError::BundlesDisagree {
                        disagreement,
                        manifest: shown,
                    });
                }
                return Err(SessionError::AgentDisagrees {
                    agent: file
                        .map_or_else(|| "the agent".to_owned(), |file| file.display().to_string()),
                    disagreement,
                    manifest: shown,
                });
            }
        }
    }
    Ok(())
}

/// One line naming the skills the model may activate.
fn describe_skills(skills: &Skillset) -> String {
    let names: Vec<&str> = skills.catalog.skills().map(|skill| skill.name()).collect();
    format!(
        "{} offered ({}); each activation limits calls to its allowed-tools",
        names.len(),
        names.join(", ")
    )
}

/// One line saying where the workspace tools reach and how they write.
fn describe_workspace(name: Option<&str>, workspace: &Workspace) -> String {
    let name = name.unwrap_or("?");
    let folder = workspace.folder().map_or_else(
        || "an empty workspace".to_owned(),
        |dir| dir.display().to_string(),
    );
    let mode = match workspace.mode() {
        WriteMode::Direct => "writes go straight to the folder",
        WriteMode::Staged { publishes: true } => {
            "transactional: file changes commit with each step, then reach the folder"
        }
        WriteMode::Staged { publishes: false } => {
            "staged: file changes commit with each step and never reach the folder"
        }
    };
    format!("workspace: `{name}` backend on {folder} ({mode})")
}
