//! `cordon run` and `cordon runs resume`: drive the agent loop against the
//! plugins directory, a model and the run store, printing progress as it goes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use cordon_kernel::{
    AgentDef, Approval, CommitStore, EndCause, PermissionPolicy, RunOutcome, Runtime, ToolSet,
    ToolSets, Verdict,
};
use cordon_providers::ModelOptions;
use cordon_wasm::manifest::MANIFEST_FILE;
use cordon_wasm::{LoadedBundle, Plugins, Workspace, WorkspaceOptions, WriteMode};

use crate::approve::TerminalApprover;
use crate::args::{AgentArgs, GlobalArgs, ResumeArgs, RunArgs};
use crate::context;
use crate::operator::Operator;
use crate::progress::Printer;
use crate::skillset;
use crate::store;

/// The exit code for a run that waits for approval.
pub(crate) const EXIT_WAITING: u8 = 3;

struct Session {
    agent: AgentDef,
    runtime: Runtime,
    printer: Arc<Printer>,
}

/// What a run was started with, recorded in its header so that `runs resume`
/// needs no flags: absolute paths, so a resume from elsewhere finds them.
#[derive(Debug, Default)]
struct Launch {
    agent: Option<PathBuf>,
    permissions: Option<PathBuf>,
    /// The model spec and the directory a relative script path resolves against.
    model: Option<(String, PathBuf)>,
    /// The provider's base URL given on the command line.
    base_url: Option<String>,
    /// The workspace root: bundles' directory grants resolve under it.
    workspace: PathBuf,
    /// The sandbox backend given on the command line.
    sandbox: Option<String>,
    /// `--transactional` (true) or `--direct` (false), when given.
    transactional: Option<bool>,
    /// Whether a `memory` workspace starts from the workspace folder.
    seed: bool,
    /// The `--skills` folders given, searched first for skills.
    skills: Vec<PathBuf>,
    /// The plugins folder.
    plugins: PathBuf,
}

impl Launch {
    fn from_args(global: &GlobalArgs, args: &AgentArgs) -> anyhow::Result<Self> {
        let absolute = |path: &PathBuf| {
            std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))
        };
        Ok(Self {
            agent: args.agent.as_ref().map(absolute).transpose()?,
            permissions: args.permissions.as_ref().map(absolute).transpose()?,
            model: match &args.model {
                Some(spec) => Some((spec.clone(), std::env::current_dir()?)),
                None => None,
            },
            base_url: args.base_url.clone(),
            workspace: absolute(&global.workspace)?,
            sandbox: args.sandbox.sandbox.clone(),
            transactional: if args.sandbox.transactional {
                Some(true)
            } else if args.sandbox.direct {
                Some(false)
            } else {
                None
            },
            seed: !args.sandbox.no_seed,
            skills: args
                .skills
                .skills
                .iter()
                .map(absolute)
                .collect::<anyhow::Result<_>>()?,
            plugins: absolute(&args.plugins.dir())?,
        })
    }

    /// The launch recorded in `metadata`, overridden by any flag given now.
    /// The workspace root and the sandbox's write mode stay as recorded: the
    /// run's staged changes belong to that folder.
    fn resumed(
        global: &GlobalArgs,
        args: &AgentArgs,
        metadata: &BTreeMap<String, String>,
    ) -> anyhow::Result<Self> {
        let given = Self::from_args(global, args)?;
        let recorded = |key: &str| metadata.get(key).map(PathBuf::from);
        Ok(Self {
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
            plugins: match recorded("plugins") {
                Some(plugins) if !args.plugins.is_given() => plugins,
                _ => given.plugins,
            },
        })
    }

    fn metadata(&self) -> BTreeMap<String, String> {
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
        put("plugins", &self.plugins);
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
        metadata
    }

    /// Bind the run's sandbox backend, if it has one: the flag's, else the
    /// agent file's. Untrusted agents are transactional unless `--direct`.
    fn bind_workspace(
        &mut self,
        agent: &AgentDef,
        plugins: &Plugins,
    ) -> anyhow::Result<Option<Workspace>> {
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
}

impl Session {
    async fn open(
        global: &GlobalArgs,
        args: &AgentArgs,
        launch: Launch,
        store_path: &Path,
    ) -> anyhow::Result<Self> {
        let mut agent = match &launch.agent {
            Some(file) => AgentDef::load(file)?,
            None => AgentDef::new(
                "cordon",
                "Use the tools when they help, then answer briefly.",
                &["*"],
                12,
                PermissionPolicy::new(Verdict::Ask),
            )?,
        };
        if let Some(file) = &launch.permissions {
            agent.permissions = PermissionPolicy::load(file)?;
        }
        let mut launch = launch;
        if launch.model.is_none()
            && let (Some(spec), Some(file)) = (&agent.model, &launch.agent)
        {
            let base = file
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_owned);
            launch.model = Some((spec.clone(), base));
        }
        let Some((spec, base)) = &launch.model else {
            bail!("no model: pass --model scripted:FILE or set `model` in the agent file");
        };
        let settings = &agent.model_settings;
        let options = ModelOptions {
            base_url: launch
                .base_url
                .clone()
                .or_else(|| settings.base_url.clone()),
            temperature: settings.temperature,
            max_tokens: settings.max_tokens,
            ..ModelOptions::default()
        };
        let model = cordon_providers::resolve(spec, base, &options)?;
        let operator = Operator::load(global)?;
        let host = context::host(global, &operator)?;
        if !launch.plugins.is_dir() {
            bail!(
                "the plugins folder {} does not exist; pass --plugins DIR or set CORDON_PLUGINS",
                launch.plugins.display()
            );
        }
        let report = context::load_all(
            &host,
            &operator,
            &launch.workspace,
            &launch.plugins,
            args.strict.strict,
        )
        .await?;
        let roots = skillset::roots(
            &launch.skills,
            &agent,
            launch.agent.as_deref(),
            &launch.workspace,
        );
        let mut skills = skillset::assemble(&host, &roots, &launch.workspace).await;
        let printer = Arc::new(Printer::new(args.json));
        let store = store::create(store_path)?;
        let mut safeguards = context::safeguards(
            &operator,
            agent.permissions.files(),
            store_path,
            &launch.workspace,
        );
        safeguards.skills = skills.folders().into_values().collect();
        adopt_bundle_state(&mut agent, &report.bundles, launch.agent.as_deref())?;
        let mut bundles = report.bundles;
        bundles.extend(std::mem::take(&mut skills.bundles));
        let plugins = host
            .plugins_with(bundles, printer.clone(), safeguards)
            .map_err(|errors| anyhow::anyhow!("{}", errors[0]))?;
        let workspace = launch
            .bind_workspace(&agent, &plugins)?
            .map(|workspace| workspace.with_skills(skills.folders()));
        let plugins = Arc::new(plugins);
        let mut sets: Vec<Arc<dyn ToolSet>> = vec![plugins.clone()];
        if let Some(workspace) = &workspace {
            if !args.json {
                eprintln!(
                    "{}",
                    describe_workspace(launch.sandbox.as_deref(), workspace)
                );
            }
            sets.push(workspace.tools());
        }
        if !skills.catalog.is_empty() {
            if !args.json {
                eprintln!("skills: {}", describe_skills(&skills));
            }
            sets.push(Arc::new(skills.tool(workspace.is_some())));
        }
        let tools: Arc<dyn ToolSet> = Arc::new(ToolSets::new(sets).map_err(|names| {
            anyhow::anyhow!(
                "tools [{}] are provided twice: a plugin's tools clash with the built-in tools (`read`, `write`, `edit`, `glob`, `grep`, `bash`, `skill`)",
                names.join(", ")
            )
        })?);
        let mut runtime = Runtime::new(model, tools, Arc::new(store), printer.clone())
            .with_hooks(plugins)
            .with_observer(printer.clone())
            .with_skills(skills.catalog.clone())
            .with_run_metadata(launch.metadata());
        if let Some(ledger) = workspace.as_ref().and_then(Workspace::ledger) {
            runtime = runtime.with_files(ledger);
        }
        if !args.json && TerminalApprover::available() {
            runtime = runtime.with_approver(Arc::new(TerminalApprover));
        }
        let cancel = runtime.cancel_flag();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ncancelling at the next step boundary (Ctrl-C again to abort)");
                cancel.store(true, Ordering::SeqCst);
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
        Ok(Self {
            agent,
            runtime,
            printer,
        })
    }

    fn finish(&self, outcome: &RunOutcome) -> ExitCode {
        self.printer.outcome(outcome);
        match outcome {
            RunOutcome::Ended {
                cause: EndCause::FinalAnswer,
                ..
            } => ExitCode::SUCCESS,
            RunOutcome::Ended { .. } => ExitCode::from(1),
            RunOutcome::Waiting { .. } => ExitCode::from(EXIT_WAITING),
        }
    }
}

/// Adopt the state keys the loaded bundles declare. A disagreement with the
/// agent's own declaration stops the run before it starts, saying what to
/// change.
fn adopt_bundle_state(
    agent: &mut AgentDef,
    bundles: &[LoadedBundle],
    file: Option<&Path>,
) -> anyhow::Result<()> {
    for loaded in bundles {
        let manifest = &loaded.bundle.manifest;
        let shown = loaded.bundle.dir.join(MANIFEST_FILE);
        for (key, declared) in &manifest.state {
            let state_key = declared.key().map_err(|reason| {
                anyhow::anyhow!("{}: state.{key:?}: {reason}", shown.display())
            })?;
            if let Err(disagreement) = agent.adopt_state_key(&manifest.name, key, state_key) {
                if disagreement.first.is_some() {
                    bail!(
                        "{disagreement} ({}): two bundles that write one key must agree on it; \
                         leave one of them out of the plugins folder",
                        shown.display()
                    );
                }
                let agent_file =
                    file.map_or_else(|| "the agent".to_owned(), |file| file.display().to_string());
                bail!(
                    "{agent_file}: {disagreement} ({}): write `{} = \"{}\"` in the agent's \
                     `[state.{key:?}]`, or remove that table to adopt the bundle's declaration",
                    shown.display(),
                    disagreement.field,
                    disagreement.bundle
                );
            }
        }
    }
    Ok(())
}

/// One line naming the skills the model may activate.
fn describe_skills(skills: &skillset::Skillset) -> String {
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

pub(crate) async fn run(global: &GlobalArgs, args: RunArgs) -> anyhow::Result<ExitCode> {
    let launch = Launch::from_args(global, &args.agent)?;
    let session = Session::open(global, &args.agent, launch, &args.store.store).await?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let run_id = args
        .run_id
        .unwrap_or_else(|| format!("run-{}-{:06}", now.as_secs(), now.subsec_micros()));
    let outcome = session
        .runtime
        .start_in(
            &session.agent,
            &args.thread,
            &run_id,
            now.as_secs(),
            &args.prompt,
        )
        .await?;
    Ok(session.finish(&outcome))
}

pub(crate) async fn resume(global: &GlobalArgs, args: ResumeArgs) -> anyhow::Result<ExitCode> {
    let mut decisions = BTreeMap::new();
    for (calls, approval) in [
        (&args.approve, Approval::Approve),
        (&args.deny, Approval::Deny),
    ] {
        for call in calls {
            if decisions.insert(call.clone(), approval).is_some() {
                bail!("call {call} is both approved and denied");
            }
        }
    }
    let header = store::existing(&args.store.store)?.load(&args.run)?.header;
    let launch = Launch::resumed(global, &args.agent, &header.metadata)?;
    let session = Session::open(global, &args.agent, launch, &args.store.store).await?;
    let outcome = session
        .runtime
        .resume(&session.agent, &args.run, &decisions)
        .await?;
    Ok(session.finish(&outcome))
}
