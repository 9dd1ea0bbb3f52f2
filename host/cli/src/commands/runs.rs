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
    let mut runs = store.runs().await?;
    runs.sort_by(|a, b| {
        (b.header.created, &b.header.run_id).cmp(&(a.header.created, &a.header.run_id))
    });
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
    let id = width(|run| run.header.run_id.len(), "RUN");
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
            run.header.run_id,
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
        let steps = store.load(&run).await?.last_seq();
        store.delete_run(&run).await?;
        println!("deleted run {run} ({steps} step(s)); its thread's state stays");
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn show(global: &GlobalArgs, args: ShowRunArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.store.location(global)).await?;
    let record = store
        .load(&store::run_named(&*store, &args.run).await?)
        .await?;
    let state = record.state()?;
    let thread_state = store.thread_state(&record.header.thread).await?;
    if args.json {
        let value = json!({
            "run": record.header,
            "commits": record.commits,
            "intent": record.intent,
            "state": state,
            "thread_state": thread_state,
            "disposition": record.disposition(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    print_text(&record, args.store.location(global).file());
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
