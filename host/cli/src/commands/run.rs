//! `cordon run` and `cordon runs resume`: drive the agent loop against the
//! plugins directory, a model and the run store, printing progress as it goes.
//! The run itself is assembled by [`cordon_session::Assembly`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use clap::Args;
use cordon_kernel::spans;
use cordon_kernel::{
    AgentDef, Approval, Approver, DEFAULT_THREAD, Disposition, EndCause, PendingCall, RunOutcome,
    RunRecord, Runtime,
};
use cordon_providers::{ModelOptions, choice};
use cordon_session::defaults::Defaults;
use cordon_session::driving::Driving;
use cordon_session::{Assembly, Launch};
use cordon_store::{Enqueued, LeasedStore, PostgresCommitStore};
use tracing::Instrument;

use crate::approve::TerminalApprover;
use crate::args::{AgentArgs, GlobalArgs, PluginsArg, SandboxArgs, SkillsArg, StoreArg};
use crate::operator::Operator;
use crate::progress::Printer;
use crate::store;

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// What to ask the agent.
    pub prompt: String,
    /// Id for the new run [default: generated from the time].
    #[arg(long)]
    pub run_id: Option<String>,
    /// The thread the run joins: its runs share thread-scoped state.
    #[arg(long, env = "CORDON_THREAD", default_value = DEFAULT_THREAD)]
    pub thread: String,
    /// Go on with an earlier run's conversation: the newest run, or
    /// `--continue=RUN`. The new run joins that run's thread, and the model
    /// sees what was said and done there before the prompt.
    #[arg(
        long = "continue",
        value_name = "RUN",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "last"
    )]
    pub continues: Option<String>,
    /// Commit the prompt and queue the run for a worker (`cordon worker`)
    /// instead of driving it here; needs a Postgres store.
    #[arg(long)]
    pub detach: bool,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Args)]
pub(crate) struct ResumeArgs {
    /// The run id (`last` for the newest run).
    pub run: String,
    /// Approve a pending call by id (repeatable).
    #[arg(long = "approve", value_name = "CALL")]
    pub approve: Vec<String>,
    /// Deny a pending call by id (repeatable).
    #[arg(long = "deny", value_name = "CALL")]
    pub deny: Vec<String>,
    /// Approve every pending call not named by --deny.
    #[arg(long, conflicts_with = "deny_all")]
    pub approve_all: bool,
    /// Deny every pending call not named by --approve.
    #[arg(long)]
    pub deny_all: bool,
    /// Why the denied calls are denied; the model reads it.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Queue the run, with these decisions, for a worker (`cordon worker`)
    /// instead of driving it here; needs a Postgres store, and a decision
    /// for every call the run waits on. A run that was queued before goes
    /// back to the workers without this flag.
    #[arg(long)]
    pub detach: bool,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub store: StoreArg,
}

/// The exit code for a run that waits for approval.
pub(crate) const EXIT_WAITING: u8 = 3;

pub(crate) struct Session {
    pub(crate) agent: AgentDef,
    pub(crate) runtime: Runtime,
    pub(crate) printer: Arc<Printer>,
    /// The prompts on a terminal, when there is one.
    approver: Option<Arc<TerminalApprover>>,
    /// The store the run commits to.
    store: store::RunStore,
}

/// Who drives the runs a session opens.
pub(crate) enum Driver<'a> {
    /// A person at `cordon run` or `runs resume`, with the store at this
    /// location: prompted for approvals when at a terminal, and Ctrl-C
    /// cancels the run.
    Person(&'a store::StoreLocation),
    /// A worker holding the run's lease: never prompts, leaves Ctrl-C to the
    /// worker, and commits only while the lease holds.
    Worker(Arc<LeasedStore>),
}

/// The launch the flags describe: absolute paths, so a resume from elsewhere
/// finds them.
fn launch(global: &GlobalArgs, args: &AgentArgs) -> anyhow::Result<Launch> {
    Ok(Launch {
        model: match &args.model {
            Some(spec) => Some((spec.clone(), std::env::current_dir()?)),
            None => None,
        },
        base_url: args.base_url.clone(),
        ..served_launch(
            global,
            args.agent.as_ref(),
            args.permissions.as_ref(),
            &args.sandbox,
            &args.skills,
            &args.plugins,
        )?
    })
}

/// The launch of a run with no model of its own (`cordon mcp`), or the part
/// every launch shares: the agent, permissions, workspace, sandbox, skills
/// and plugins folder, as absolute paths.
pub(crate) fn served_launch(
    global: &GlobalArgs,
    agent: Option<&PathBuf>,
    permissions: Option<&PathBuf>,
    sandbox: &SandboxArgs,
    skills: &SkillsArg,
    plugins: &PluginsArg,
) -> anyhow::Result<Launch> {
    let absolute = |path: &PathBuf| {
        std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))
    };
    Ok(Launch {
        agent: agent.map(absolute).transpose()?,
        permissions: permissions.map(absolute).transpose()?,
        model: None,
        base_url: None,
        workspace: absolute(&global.workspace)?,
        sandbox: sandbox.sandbox.clone(),
        transactional: if sandbox.transactional {
            Some(true)
        } else if sandbox.direct {
            Some(false)
        } else {
            None
        },
        seed: !sandbox.no_seed,
        skills: skills
            .skills
            .iter()
            .map(absolute)
            .collect::<anyhow::Result<_>>()?,
        plugins: plugins.path(&Operator::load(&global.settings())?),
    })
}

impl Session {
    /// Assemble the run `launch` describes, printing JSON lines when `json`
    /// and leaving out bundles that do not load unless `strict`.
    pub(crate) async fn open(
        global: &GlobalArgs,
        (json, strict): (bool, bool),
        launch: Launch,
        driver: Driver<'_>,
    ) -> anyhow::Result<Self> {
        let defaults = Operator::load(&global.settings())?.defaults;
        let agent = launch.agent(&defaults)?;
        let mut launch = launch;
        let mut chosen_by = "--model (or CORDON_MODEL, or the run's record)".to_owned();
        if launch.model.is_none() {
            if matches!(driver, Driver::Worker(_)) {
                bail!("the run records no model, and a worker chooses none for it");
            }
            let (model, by) = default_model(&agent, launch.agent.as_deref(), &defaults, json)?;
            launch.model = model;
            chosen_by = by;
        }
        let Some((spec, base)) = &launch.model else {
            unreachable!("a run's model was chosen above");
        };
        let settings = &agent.model_settings;
        let options = ModelOptions {
            base_url: launch
                .base_url
                .clone()
                .or_else(|| settings.base_url.clone()),
            temperature: settings.temperature,
            max_tokens: settings.max_tokens,
            images: settings.images,
            ..ModelOptions::default()
        };
        let model = cordon_providers::resolve(spec, base, &options)
            .with_context(|| format!("{chosen_by} = {spec:?}"))?;
        let printer = Arc::new(Printer::new(json));
        let settings = global.settings();
        let assembly = match &driver {
            Driver::Person(store_at) => {
                Assembly::open(&settings, launch, agent, store_at, strict, printer.clone()).await?
            }
            // The worker's own pool serves every run it claims.
            Driver::Worker(leased) => {
                let store = store::RunStore::Leased(leased.clone());
                Assembly::open_in(
                    &settings,
                    launch,
                    agent,
                    (store, None),
                    strict,
                    printer.clone(),
                )
                .await?
            }
        };
        if !json {
            for notice in &assembly.notices {
                eprintln!("{notice}");
            }
        }
        printer.mark_unsandboxed(assembly.unsandboxed.clone());
        crate::telemetry::watch_pool(&assembly);
        let mut runtime = assembly
            .runtime(model, printer.clone())
            .with_span_content(crate::telemetry::span_content())
            .with_models(Arc::new(cordon_providers::SpecResolver))
            .with_observer(printer.clone());
        let person = matches!(driver, Driver::Person(_));
        let approver = (person && !json && TerminalApprover::available()).then(|| {
            Arc::new(TerminalApprover::new(
                assembly.unsandboxed.clone(),
                Some(assembly.launch.workspace.clone()),
            ))
        });
        if let Some(approver) = &approver {
            runtime = runtime.with_approver(approver.clone());
        }
        if person {
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
        }
        Ok(Self {
            agent: assembly.agent,
            runtime,
            printer,
            approver,
            store: assembly.store,
        })
    }

    /// A session a person drives, with the flags of `args`.
    async fn for_person(
        global: &GlobalArgs,
        args: &AgentArgs,
        launch: Launch,
        store_at: &store::StoreLocation,
    ) -> anyhow::Result<Self> {
        let session = Self::open(
            global,
            (args.json, args.strict.strict),
            launch,
            Driver::Person(store_at),
        )
        .await?;
        session.printer.resume_with(store_flags(global, store_at));
        Ok(session)
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

/// The flags `cordon runs resume`, run from this folder, needs to find the
/// run's store at `store_at`: `--store` when it is not the workspace's own,
/// else `--workspace` when the workspace is not this folder; nothing
/// otherwise. A Postgres URL is shown without its password.
fn store_flags(global: &GlobalArgs, store_at: &store::StoreLocation) -> String {
    let own = store::StoreLocation::File(cordon_session::store::default_path(&global.workspace));
    if *store_at != own {
        format!(" --store {}", shell_word(&store_at.to_string()))
    } else if global.workspace != Path::new(".") {
        format!(
            " --workspace {}",
            shell_word(&global.workspace.display().to_string())
        )
    } else {
        String::new()
    }
}

/// `text` as one word of a POSIX shell command: as it is when it holds only
/// characters no shell treats specially, else in single quotes.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:@%+=,-".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The model of a run no flag or recorded header names, and where it was
/// chosen: the agent file's, else the config's `defaults.model`, else the
/// default of the provider whose key is set (said on stderr unless
/// `quiet`), else an error naming every provider.
fn default_model(
    agent: &AgentDef,
    agent_file: Option<&Path>,
    defaults: &Defaults,
    quiet: bool,
) -> anyhow::Result<(Option<(String, PathBuf)>, String)> {
    if let (Some(spec), Some(file)) = (&agent.model, agent_file) {
        let base = file
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_owned);
        let by = format!("{}: field `model`", file.display());
        return Ok((Some((spec.clone(), base)), by));
    }
    if let Some(model) = &defaults.model {
        let by = format!("{}: field `defaults.model`", model.file.display());
        return Ok((
            Some((model.value.spec.clone(), model.value.base.clone())),
            by,
        ));
    }
    let Some(picked) = choice::pick(|var| std::env::var(var).ok()) else {
        bail!(
            "no model: pass --model SPEC (or set CORDON_MODEL), `model` in the agent file, or \
             `defaults.model` in ~/.config/cordon/config.toml; the providers:\n{}",
            choice::PROVIDERS
        );
    };
    if !quiet {
        eprintln!(
            "model: {} ({} is set; choose another with --model)",
            picked.spec, picked.because
        );
    }
    Ok((
        Some((picked.spec.to_owned(), std::env::current_dir()?)),
        format!("the default model ({} is set)", picked.because),
    ))
}

pub(crate) async fn run(global: &GlobalArgs, args: RunArgs) -> anyhow::Result<ExitCode> {
    let earlier = match &args.continues {
        Some(name) => {
            let existing = store::existing(&args.store.location(global)).await?;
            Some(
                existing
                    .load(&store::run_named(&*existing, name).await?)
                    .await?,
            )
        }
        None => None,
    };
    let location = args.store.location(global);
    if args.detach {
        queue_store(&location, "run --detach")?;
    }
    let launch = launch(global, &args.agent)?;
    let mut session = Session::for_person(global, &args.agent, launch, &location).await?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let run_id = args
        .run_id
        .unwrap_or_else(|| format!("run-{}-{:06}", now.as_secs(), now.subsec_micros()));
    // The run's header records the trace it begins, so a resumption, here
    // or by a worker, goes on with it.
    let span = spans::run();
    spans::run_named(&span, &session.agent.name, &run_id);
    if let Some(traceparent) = cordon_telemetry::context::traceparent(&span) {
        session.runtime = session
            .runtime
            .with_run_metadata_entry("traceparent", traceparent);
    }
    if args.detach {
        session
            .runtime
            .submit(
                &session.agent,
                &args.thread,
                &run_id,
                now.as_secs(),
                &args.prompt,
                earlier.as_ref(),
            )
            .await?;
        let store::RunStore::Postgres(queue) = &session.store else {
            unreachable!("queue_store checked the store is Postgres");
        };
        return enqueued(queue, &run_id, &BTreeMap::new(), args.agent.json).await;
    }
    let _driving = drive(&location, &run_id)?;
    let outcome = match &earlier {
        Some(earlier) => {
            session
                .runtime
                .start_after(
                    &session.agent,
                    earlier,
                    &run_id,
                    now.as_secs(),
                    &args.prompt,
                )
                .instrument(span)
                .await?
        }
        None => {
            session
                .runtime
                .start_in(
                    &session.agent,
                    &args.thread,
                    &run_id,
                    now.as_secs(),
                    &args.prompt,
                )
                .instrument(span)
                .await?
        }
    };
    Ok(session.finish(&outcome))
}

pub(crate) async fn resume(global: &GlobalArgs, args: ResumeArgs) -> anyhow::Result<ExitCode> {
    let denial = match &args.reason {
        Some(reason) if reason.trim().is_empty() => {
            bail!("--reason is empty: say why, for the model")
        }
        Some(reason) => Approval::DenyBecause(reason.trim().to_owned()),
        None => Approval::Deny,
    };
    let mut decisions = BTreeMap::new();
    for (calls, approval) in [
        (&args.approve, Approval::Approve),
        (&args.deny, denial.clone()),
    ] {
        for call in calls {
            if decisions.insert(call.clone(), approval.clone()).is_some() {
                bail!("call {call} is both approved and denied");
            }
        }
    }
    let location = args.store.location(global);
    if args.detach {
        queue_store(&location, "runs resume --detach")?;
    }
    let existing = store::existing(&location).await?;
    let run_id = store::run_named(&*existing, &args.run).await?;
    let record = existing.load(&run_id).await?;
    // A run the workers drive goes back to them.
    let detach = args.detach
        || match &existing {
            store::RunStore::Postgres(queue) => queue.queued(&run_id).await?.is_some(),
            _ => false,
        };
    // A sub-agent's waiting calls are decided by their path from this run.
    let pending: Vec<PendingCall> = match record.disposition() {
        Disposition::Waiting { pending } => pending.iter().flat_map(PendingCall::leaves).collect(),
        _ => Vec::new(),
    };
    let rest = if args.approve_all {
        Some(Approval::Approve)
    } else if args.deny_all {
        Some(denial)
    } else {
        None
    };
    if let Some(rest) = rest {
        for waiting in &pending {
            decisions
                .entry(waiting.call.id.clone())
                .or_insert_with(|| rest.clone());
        }
    }
    if let (true, store::RunStore::Postgres(queue)) = (detach, &existing) {
        if let Disposition::Ended { .. } = record.disposition() {
            bail!("run {run_id} has ended; there is nothing for a worker to do");
        }
        if let Some(waiting) = pending
            .iter()
            .find(|waiting| !decisions.contains_key(&waiting.call.id))
        {
            bail!(
                "run {run_id} waits on call {} ({}): a worker cannot ask, so decide it here \
                 (--approve, --deny, --approve-all or --deny-all)",
                waiting.call.id,
                waiting.call.name
            );
        }
        return enqueued(queue, &run_id, &decisions, args.agent.json).await;
    }
    let launch = Launch::resumed(
        launch(global, &args.agent)?,
        args.agent.plugins.is_given(),
        &record.header.metadata,
    );
    let session = Session::for_person(global, &args.agent, launch, &location).await?;
    let _driving = drive(&location, &run_id)?;
    let undecided: Vec<PendingCall> = pending
        .into_iter()
        .filter(|waiting| !decisions.contains_key(&waiting.call.id))
        .collect();
    if let (Some(approver), false) = (&session.approver, undecided.is_empty()) {
        let Some(answers) = approver.decide(&undecided).await else {
            bail!("no answer was given; the run still waits");
        };
        for (waiting, answer) in undecided.iter().zip(answers) {
            decisions.insert(waiting.call.id.clone(), answer);
        }
    }
    let outcome = session
        .runtime
        .resume(&session.agent, &run_id, &decisions)
        .instrument(resumed_span(&session.agent.name, &record))
        .await?;
    Ok(session.finish(&outcome))
}

/// The span of a drive of `record`'s run, which resumes it: under the span
/// its trace began with, and linked to it, when that was recorded.
pub(crate) fn resumed_span(agent: &str, record: &RunRecord) -> tracing::Span {
    let span = spans::run();
    if let Some(traceparent) = record.header.metadata.get("traceparent") {
        cordon_telemetry::context::resume(&span, traceparent);
    }
    spans::run_named(&span, agent, &record.header.run_id);
    span
}

/// Hold, while it lives, what says this process drives run `run_id` of a
/// store in a file, so that an interruption shows and no other process
/// drives it at the same time.
pub(crate) fn drive(
    location: &store::StoreLocation,
    run_id: &str,
) -> anyhow::Result<Option<Driving>> {
    Ok(location
        .file()
        .map(|file| Driving::take(file, run_id))
        .transpose()?)
}

/// Refuse `what` (a queueing flag, or `cordon worker`) anywhere but a
/// Postgres store, which holds the queue workers claim runs from.
pub(crate) fn queue_store(location: &store::StoreLocation, what: &str) -> anyhow::Result<()> {
    if location.file().is_some() {
        bail!(
            "{what} needs the Postgres store that workers share, which holds their queue: pass \
             --store postgres://… (or set CORDON_STORE); {location} is a file"
        );
    }
    Ok(())
}

/// Queue run `run_id` with `decisions` and say so: exit 0 once queued, 1
/// when a worker holds it now.
async fn enqueued(
    queue: &PostgresCommitStore,
    run_id: &str,
    decisions: &BTreeMap<String, Approval>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let queued = queue.enqueue(run_id, decisions).await?;
    let worker = match &queued {
        Enqueued::Queued => None,
        Enqueued::Claimed { worker } => Some(worker.as_str()),
    };
    if json {
        let status = if worker.is_some() {
            "claimed"
        } else {
            "queued"
        };
        println!(
            "{}",
            serde_json::json!({ "run_id": run_id, "queue": status, "worker": worker })
        );
    } else if let Some(worker) = worker {
        eprintln!("run {run_id} is left as it is: worker {worker} drives it now");
    } else {
        eprintln!(
            "run {run_id} is queued: a worker (`cordon worker --store {}`) drives it",
            queue.location()
        );
    }
    Ok(if worker.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
