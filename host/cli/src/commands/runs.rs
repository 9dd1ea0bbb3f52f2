//! `cordon runs list`, `show` and `delete`: a run's committed facts, read
//! straight from the store, and forgetting them.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use cordon_kernel::{
    CallResult, Disposition, Message, RunRecord, RunSummary, SkillChange, StateOp, ToolRecord,
};
use cordon_session::driving;
use cordon_store::QueueStatus;
use serde_json::json;

use crate::args::{GlobalArgs, StoreArg};
use crate::events::render;
use crate::progress::step_name;
use crate::progress::{cause_word, decided_by};
use crate::store;

#[derive(Debug, Args)]
pub(crate) struct DeleteRunsArgs {
    /// The run ids (`last` for the newest run).
    #[arg(required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Args)]
pub(crate) struct ListRunsArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ShowRunArgs {
    /// The run id (`last` for the newest run).
    pub run: String,
    #[command(flatten)]
    pub store: StoreArg,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

async fn open(location: &store::StoreLocation) -> anyhow::Result<store::RunStore> {
    Ok(store::existing(location).await?)
}

fn describe(disposition: &Disposition) -> String {
    match disposition {
        Disposition::Running => "running".into(),
        Disposition::Waiting { pending } => format!("waiting on {} call(s)", pending.len()),
        Disposition::Ended { cause, .. } => format!("ended: {}", cause_word(cause)),
    }
}

/// Where run `run_id`, whose last commit is `disposition`, stands: one of
/// a store in the file `store` that says it is running while no process
/// drives it was interrupted, and waits for `runs resume`.
fn standing(store: Option<&Path>, run_id: &str, disposition: &Disposition) -> String {
    match (disposition, store) {
        (Disposition::Running, Some(file)) if !driving::is_driven(file, run_id) => {
            "interrupted: nothing drives it; `cordon runs resume` goes on".to_owned()
        }
        _ => describe(disposition),
    }
}

/// Where each queued run of `store` stands with the workers, by run: empty
/// for a store with no queue.
async fn queue_notes(store: &store::RunStore) -> anyhow::Result<BTreeMap<String, String>> {
    let store::RunStore::Postgres(store) = store else {
        return Ok(BTreeMap::new());
    };
    Ok(store
        .queue()
        .await?
        .into_iter()
        .map(|queued| {
            let worker = queued.worker.as_deref().unwrap_or("?");
            let note = match queued.status {
                QueueStatus::Runnable => "queued for a worker".to_owned(),
                QueueStatus::Claimed => format!("claimed by worker {worker}"),
                QueueStatus::Failed => format!(
                    "failed on worker {worker}: {}",
                    queued.error.as_deref().unwrap_or("no reason given")
                ),
                QueueStatus::Waiting | QueueStatus::Done => String::new(),
            };
            (queued.run_id, note)
        })
        .filter(|(_, note)| !note.is_empty())
        .collect())
}

pub(crate) async fn list(global: &GlobalArgs, args: ListRunsArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.store.location(global)).await?;
    let runs = as_trees(store.runs().await?);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        println!("no runs in {}", args.store.location(global));
        return Ok(ExitCode::SUCCESS);
    }
    let width = |field: fn(&RunSummary) -> usize, title: &str| {
        runs.iter().map(field).max().unwrap_or(0).max(title.len())
    };
    let id = width(|run| shown_id(run).chars().count(), "RUN");
    let thread = width(|run| run.header.thread.len(), "THREAD");
    let agent = width(|run| run.header.agent.len(), "AGENT");
    let notes = queue_notes(&store).await?;
    let location = args.store.location(global);
    println!(
        "{:id$}  {:16}  {:thread$}  {:agent$}  {:>7}  OUTCOME",
        "RUN", "CREATED (UTC)", "THREAD", "AGENT", "COMMITS"
    );
    for run in &runs {
        println!(
            "{:id$}  {:16}  {:thread$}  {:agent$}  {:>7}  {}",
            shown_id(run),
            created(run.header.created),
            run.header.thread,
            run.header.agent,
            run.last_seq,
            {
                let standing = standing(location.file(), &run.header.run_id, &run.disposition);
                match notes.get(&run.header.run_id) {
                    Some(note) => format!("{standing}; {note}"),
                    None => standing,
                }
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `runs` as trees, newest root first, each followed by its sub-agents'
/// runs in the order their calls were made, depth first.
pub(crate) fn as_trees(runs: Vec<RunSummary>) -> Vec<RunSummary> {
    let mut children: BTreeMap<String, Vec<RunSummary>> = BTreeMap::new();
    let mut roots = Vec::new();
    let ids: std::collections::BTreeSet<String> =
        runs.iter().map(|run| run.header.run_id.clone()).collect();
    for run in runs {
        match &run.header.parent {
            Some(parent) if ids.contains(&parent.run_id) => {
                children.entry(parent.run_id.clone()).or_default().push(run);
            }
            _ => roots.push(run),
        }
    }
    roots.sort_by(|a, b| {
        (b.header.created, &b.header.run_id).cmp(&(a.header.created, &a.header.run_id))
    });
    let mut ordered = Vec::new();
    let mut stack: Vec<RunSummary> = roots.into_iter().rev().collect();
    while let Some(run) = stack.pop() {
        if let Some(mut below) = children.remove(&run.header.run_id) {
            below.sort_by(|a, b| {
                let at = |run: &RunSummary| {
                    run.header
                        .parent
                        .as_ref()
                        .map(|parent| (parent.seq, parent.call_id.clone()))
                };
                at(a).cmp(&at(b))
            });
            stack.extend(below.into_iter().rev());
        }
        ordered.push(run);
    }
    ordered
}

/// A run's id as `runs list` shows it: a sub-agent's run indented under
/// the run that delegated to it.
fn shown_id(run: &RunSummary) -> String {
    match &run.header.parent {
        Some(parent) => format!(
            "{}└ {}",
            "  ".repeat(parent.depth as usize - 1),
            run.header.run_id
        ),
        None => run.header.run_id.clone(),
    }
}

/// `secs` since the epoch as a UTC minute, such as `2026-12-01 17:30`.
fn created(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|secs| jiff::Timestamp::from_second(secs).ok())
        .map_or_else(
            || secs.to_string(),
            |at| at.strftime("%Y-%m-%d %H:%M").to_string(),
        )
}

/// `cordon runs delete`: forget runs whole.
pub(crate) async fn delete(global: &GlobalArgs, args: DeleteRunsArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.store.location(global)).await?;
    for name in &args.runs {
        let run = store::run_named(&*store, name).await?;
        let record = store.load(&run).await?;
        if let Some(parent) = &record.header.parent {
            anyhow::bail!(
                "run {run} is a sub-agent's run in the tree of run {}: delete that run, which deletes its sub-agents' runs with it",
                parent.root
            );
        }
        let below: Vec<String> = store
            .runs()
            .await?
            .into_iter()
            .filter(|other| {
                other
                    .header
                    .parent
                    .as_ref()
                    .is_some_and(|up| up.root == run)
            })
            .map(|other| other.header.run_id)
            .collect();
        for sub in &below {
            store.delete_run(sub).await?;
        }
        store.delete_run(&run).await?;
        let subs = match below.len() {
            0 => String::new(),
            count => format!(" and its {count} sub-agent run(s)"),
        };
        println!(
            "deleted run {run} ({} step(s)){subs}; its thread's state stays",
            record.last_seq()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The runs of `store` whose parent is `record`'s run: its sub-agents'.
async fn delegated_by(
    store: &store::RunStore,
    record: &RunRecord,
) -> anyhow::Result<Vec<RunSummary>> {
    Ok(store
        .runs()
        .await?
        .into_iter()
        .filter(|run| {
            run.header
                .parent
                .as_ref()
                .is_some_and(|parent| parent.run_id == record.header.run_id)
        })
        .collect())
}

/// `record` as `runs show --json` prints it: its header, its sub-agents'
/// runs, its commits and intent, its state and its thread's, and where it
/// stands.
pub(crate) async fn shown(
    store: &store::RunStore,
    record: &RunRecord,
) -> anyhow::Result<serde_json::Value> {
    let delegated = delegated_by(store, record).await?;
    Ok(json!({
        "run": record.header,
        "sub_runs": delegated.iter().map(|run| &run.header.run_id).collect::<Vec<_>>(),
        "commits": record.commits,
        "intent": record.intent,
        "state": record.state()?,
        "thread_state": store.thread_state(&record.header.thread).await?,
        "disposition": record.disposition(),
    }))
}

pub(crate) async fn show(global: &GlobalArgs, args: ShowRunArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.store.location(global)).await?;
    let record = store
        .load(&store::run_named(&*store, &args.run).await?)
        .await?;
    if args.json {
        let value = shown(&store, &record).await?;
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let state = record.state()?;
    let thread_state = store.thread_state(&record.header.thread).await?;
    let delegated = delegated_by(&store, &record).await?;
    let location = args.store.location(global);
    let file = location.file();
    print_text(&record, file);
    if !delegated.is_empty() {
        println!("sub-agents' runs (`cordon runs show RUN` shows one):");
    }
    for run in &delegated {
        let call = run
            .header
            .parent
            .as_ref()
            .map_or("", |parent| parent.call_id.as_str());
        println!(
            "  {call} delegated to {} as run {}: {}",
            run.header.agent,
            run.header.run_id,
            standing(file, &run.header.run_id, &run.disposition)
        );
    }
    for (title, values) in [
        ("run state:".to_owned(), state),
        (
            format!("thread {} state (now):", record.header.thread),
            thread_state,
        ),
    ] {
        println!("{title}");
        if values.is_empty() {
            println!("  (empty)");
        }
        for (key, value) in values {
            println!("  {key} = {value}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A change to the active skills as `runs show` prints it.
fn skill_change(change: &SkillChange) -> String {
    match change {
        SkillChange::Activated {
            call_id,
            activation,
        } => {
            let layer = match &activation.allowed {
                Some(rules) => format!("calls limited to [{}]", rules.join(" ")),
                None => "no allowed-tools, so no limit of its own".to_owned(),
            };
            format!(
                "skill {} activated by {call_id} (SKILL.md sha256:{}): {layer}",
                activation.skill, activation.fingerprint
            )
        }
        SkillChange::Dropped { skill, reason } => format!("skill {skill} dropped: {reason}"),
    }
}

/// A state operation as `runs show` prints it.
fn operation(op: &StateOp) -> String {
    match op {
        StateOp::Set { value } => format!("= {value}"),
        StateOp::Remove => "removed".into(),
        StateOp::Increment { delta } => format!("+= {delta}"),
        StateOp::Append { item } => format!("append {item}"),
        StateOp::Insert { item } => format!("insert {item}"),
        StateOp::SetField { field, value } => format!(".{field} = {value}"),
        StateOp::RemoveField { field } => format!(".{field} removed"),
    }
}

fn print_text(record: &RunRecord, store: Option<&Path>) {
    println!(
        "run {} (agent {}, thread {}): {}",
        record.header.run_id,
        record.header.agent,
        record.header.thread,
        standing(store, &record.header.run_id, &record.disposition())
    );
    if let Some(parent) = &record.header.parent {
        println!(
            "sub-agent's run for call {} of run {} (commit {}); it goes on with its tree's root, run {}",
            parent.call_id, parent.run_id, parent.seq, parent.root
        );
    }
    for (commit, step) in record.commits.iter().zip(record.steps()) {
        println!(
            "{} (commit {}): {}",
            step_name(step),
            commit.seq,
            describe(&commit.disposition)
        );
        for message in &commit.messages {
            match message {
                Message::User { text } => println!("  user: {text}"),
                Message::Assistant { text, tool_calls } => {
                    if !text.is_empty() {
                        println!("  assistant: {text}");
                    }
                    for call in tool_calls {
                        println!("  assistant calls {} {} {}", call.id, call.name, call.args);
                    }
                }
                Message::Tool {
                    call_id, result, ..
                } => match result {
                    CallResult::Output(value) => println!("  tool {call_id}: {value}"),
                    CallResult::Error(error) => {
                        println!("  tool {call_id}: {}: {}", error.kind, error.message)
                    }
                },
            }
        }
        for tool in &commit.tools {
            print_verdict(tool, 1);
        }
        for write in &commit.state {
            println!("  state {} {}", write.key, operation(&write.op));
        }
        for write in &commit.thread_state {
            println!("  thread state {} {}", write.key, operation(&write.op));
        }
        for change in &commit.skills {
            println!("  {}", skill_change(change));
        }
        for event in &commit.events {
            println!("  event {}", render(event));
        }
    }
    if let Some(intent) = &record.intent {
        let committed = record.steps().last().copied().unwrap_or(0);
        let step = committed + u32::from(intent.assistant.is_some());
        println!(
            "interrupted: step {step} had started {} call(s) that were never committed",
            intent.calls.len()
        );
    }
}

/// A call's verdict, indented `depth` levels, then the calls its tool made,
/// each with its result, one level deeper.
fn print_verdict(tool: &ToolRecord, depth: usize) {
    let indent = "  ".repeat(depth);
    let rule = decided_by(&tool.decision);
    // A nested call's arguments appear nowhere else.
    let args = if depth > 1 {
        format!(" {}", tool.call.args)
    } else {
        String::new()
    };
    println!(
        "{indent}verdict {} {}{args}: {}{rule}",
        tool.call.id, tool.call.name, tool.decision.verdict
    );
    for child in &tool.children {
        print_verdict(child, depth + 1);
        match &child.result {
            Some(CallResult::Output(value)) => {
                println!("{indent}  tool {}: {value}", child.call.id)
            }
            Some(CallResult::Error(error)) => println!(
                "{indent}  tool {}: {}: {}",
                child.call.id, error.kind, error.message
            ),
            None => {}
        }
    }
}
