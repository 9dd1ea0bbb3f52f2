//! `cordon worker`: claim queued runs from a Postgres store and drive them,
//! one at a time, each under a lease.
//!
//! The worker claims the oldest runnable run (or one whose worker's lease
//! lapsed), assembles it from what its header records, as `runs resume`
//! would, and drives it through a [`LeasedStore`], so that every intent and
//! commit checks the lease in its own transaction. A background task renews
//! the lease every third of its length; when renewal finds the lease gone the
//! run is cancelled at the next step boundary, whose commit is fenced, so a
//! worker that lost its run writes nothing more of it. When the run waits,
//! ends or fails, the worker settles its queue row and claims the next.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tracing::Instrument;

use clap::Args;
use cordon_kernel::{CommitError, CommitStore, Disposition, PendingCall, RunError, RunOutcome};
use cordon_session::Launch;
use cordon_store::{Lease, LeasedStore, PostgresCommitStore, Settlement};
use serde_json::json;

use crate::args::{GlobalArgs, PluginsArg, SandboxArgs, SkillsArg, StoreArg, StrictArg};
use crate::commands::run::{Driver, Session, queue_store, served_launch};
use crate::store;

/// How `cordon worker` claims runs.
#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub strict: StrictArg,
    /// The name this worker claims runs under, as the queue records it
    /// [default: HOST:PID].
    #[arg(long)]
    pub name: Option<String>,
    /// How long a claim holds without renewal, in milliseconds; the worker
    /// renews it every third of that. A dead worker's run is claimed again
    /// once this passes.
    #[arg(long, value_name = "MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(100..))]
    pub lease_ms: u64,
    /// How long to wait before looking again when no run is runnable, in
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub poll_ms: u64,
    /// Exit when no run is left to claim, instead of waiting for more.
    #[arg(long)]
    pub until_idle: bool,
    /// Print JSON lines (each claim, the runs' progress and outcomes) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

/// How long a worker waits before claiming again after the store failed.
const RETRY: Duration = Duration::from_secs(1);

/// What became of a claimed run.
enum Driven {
    /// The worker drove it until it waited, ended or failed.
    Settled(Settlement),
    /// The lease passed to another worker before the run settled.
    Lost,
}

pub(crate) async fn run(global: &GlobalArgs, args: WorkerArgs) -> anyhow::Result<ExitCode> {
    let location = args.store.location(global);
    queue_store(&location, "cordon worker")?;
    let store::RunStore::Postgres(queue) = store::existing(&location).await? else {
        unreachable!("a URL store opens as Postgres");
    };
    let name = args.name.clone().unwrap_or_else(default_name);
    let lease = Duration::from_millis(args.lease_ms);
    let stopping = Arc::new(AtomicBool::new(false));
    watch_ctrl_c(stopping.clone());
    say(
        args.json,
        json!({ "worker": name, "store": location.to_string() }),
        format!("worker {name}: claiming runs from {location}"),
    );
    while !stopping.load(Ordering::SeqCst) {
        let claimed = match queue.claim(&name, lease).await {
            Ok(claimed) => claimed,
            // The store is out of reach for now: a long-lived worker waits
            // for it; one draining the queue stops.
            Err(error) if !args.until_idle => {
                eprintln!("worker {name}: {error}; trying again");
                tokio::time::sleep(Duration::from_millis(args.poll_ms).max(RETRY)).await;
                continue;
            }
            Err(error) => return Err(error.into()),
        };
        let Some(claimed) = claimed else {
            if args.until_idle {
                break;
            }
            tokio::time::sleep(Duration::from_millis(args.poll_ms)).await;
            continue;
        };
        say(
            args.json,
            json!({ "claimed": claimed.run_id, "token": claimed.token }),
            format!(
                "worker {name}: claimed run {} (fencing token {})",
                claimed.run_id, claimed.token
            ),
        );
        let driven = drive(global, &args, &queue, &claimed, lease).await;
        let word = match &driven {
            Driven::Settled(settlement) => {
                let word = settlement_word(settlement);
                // A run left unsettled is claimed again once its lease
                // lapses, and its next worker finds where it stands.
                match queue.settle(&claimed, settlement).await {
                    Ok(true) => word,
                    Ok(false) => format!("{word}, but its lease had passed to another worker"),
                    Err(error) => format!("{word}, but settling it failed: {error}"),
                }
            }
            Driven::Lost => "lost".to_owned(),
        };
        say(
            args.json,
            json!({ "settled": claimed.run_id, "as": word }),
            format!("worker {name}: run {}: {word}", claimed.run_id),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Drive the run `claimed` names under its lease, renewing the lease
/// meanwhile.
async fn drive(
    global: &GlobalArgs,
    args: &WorkerArgs,
    queue: &Arc<PostgresCommitStore>,
    claimed: &Lease,
    lease: Duration,
) -> Driven {
    let record = match queue.load(&claimed.run_id).await {
        Ok(record) => record,
        Err(error) => return Driven::Settled(Settlement::Failed(error.to_string())),
    };
    let decisions = match record.disposition() {
        Disposition::Ended { .. } => return Driven::Settled(Settlement::Done),
        Disposition::Waiting { pending } => {
            if pending
                .iter()
                .flat_map(PendingCall::leaves)
                .any(|waiting| !claimed.decisions.contains_key(&waiting.call.id))
            {
                return Driven::Settled(Settlement::Waiting);
            }
            claimed.decisions.clone()
        }
        _ => BTreeMap::new(),
    };
    let leased = Arc::new(LeasedStore::new(queue.clone(), claimed.clone()));
    let session = match open(global, args, &record.header.metadata, leased).await {
        Ok(session) => session,
        Err(error) => return Driven::Settled(Settlement::Failed(format!("{error:#}"))),
    };
    let lost = Arc::new(AtomicBool::new(false));
    let renewal = tokio::spawn(renew(
        queue.clone(),
        claimed.clone(),
        lease,
        lost.clone(),
        session.runtime.cancel_flag(),
    ));
    let outcome = session
        .runtime
        .resume(&session.agent, &claimed.run_id, &decisions)
        .instrument(super::run::resumed_span(&session.agent.name, &record))
        .await;
    renewal.abort();
    match outcome {
        Ok(outcome) => {
            session.printer.outcome(&outcome);
            Driven::Settled(match outcome {
                RunOutcome::Waiting { .. } => Settlement::Waiting,
                RunOutcome::Ended { .. } => Settlement::Done,
            })
        }
        Err(RunError::Commit(CommitError::Fenced { .. })) => Driven::Lost,
        Err(_) if lost.load(Ordering::SeqCst) => Driven::Lost,
        Err(RunError::Ended(_)) => Driven::Settled(Settlement::Done),
        Err(error) => Driven::Settled(Settlement::Failed(error.to_string())),
    }
}

/// The session of a claimed run: assembled from what its header records,
/// the worker's `--plugins` first when given, committing through `leased`.
async fn open(
    global: &GlobalArgs,
    args: &WorkerArgs,
    metadata: &BTreeMap<String, String>,
    leased: Arc<LeasedStore>,
) -> anyhow::Result<Session> {
    let given = served_launch(
        global,
        None,
        None,
        &SandboxArgs::default(),
        &SkillsArg::default(),
        &args.plugins,
    )?;
    let launch = Launch::resumed(given, args.plugins.is_given(), metadata);
    Session::open(
        global,
        (args.json, args.strict.strict),
        launch,
        Driver::Worker(leased),
    )
    .await
}

/// Renew `lease` every third of `length` until it is no longer held; then
/// set `lost` and `cancel`, so the run stops at its next step boundary.
async fn renew(
    queue: Arc<PostgresCommitStore>,
    lease: Lease,
    length: Duration,
    lost: Arc<AtomicBool>,
    cancel: Arc<AtomicBool>,
) {
    loop {
        tokio::time::sleep(length / 3).await;
        // A failed renewal is tried again; the lease lapses on its own if
        // the store stays out of reach, and every commit checks it.
        if let Ok(false) = queue.renew(&lease, length).await {
            lost.store(true, Ordering::SeqCst);
            cancel.store(true, Ordering::SeqCst);
            return;
        }
    }
}

/// Stop claiming after Ctrl-C, once the run in hand settles; a second
/// Ctrl-C exits at once, and the run's lease lapses for another worker.
fn watch_ctrl_c(stopping: Arc<AtomicBool>) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nstopping once the run in hand settles (Ctrl-C again to exit now)");
            stopping.store(true, Ordering::SeqCst);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
}

fn settlement_word(settlement: &Settlement) -> String {
    match settlement {
        Settlement::Waiting => "waiting".to_owned(),
        Settlement::Done => "done".to_owned(),
        Settlement::Failed(reason) => format!("failed: {reason}"),
    }
}

/// `HOST:PID`, naming this worker in the queue.
fn default_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "worker".to_owned());
    format!("{host}:{}", std::process::id())
}

/// Print `line` on stderr, or `value` as a JSON line on stdout when `json`.
fn say(json: bool, value: serde_json::Value, line: String) {
    if json {
        println!("{value}");
    } else {
        eprintln!("{line}");
    }
}
