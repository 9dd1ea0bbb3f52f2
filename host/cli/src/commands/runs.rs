//! `cordon runs list` and `cordon runs show`: a run's committed facts, read
//! straight from the store.

use std::process::ExitCode;

use cordon_kernel::{
    CallResult, CommitStore, Disposition, Message, RunRecord, SkillChange, StateOp, ToolRecord,
};
use cordon_store::SqliteCommitStore;
use serde_json::json;

use crate::args::{ListRunsArgs, ShowRunArgs};
use crate::events::render;
use crate::progress::{cause_word, decided_by};
use crate::store;

fn open(path: &std::path::Path) -> anyhow::Result<SqliteCommitStore> {
    store::existing(path)
}

fn describe(disposition: &Disposition) -> String {
    match disposition {
        Disposition::Running => "running".into(),
        Disposition::Waiting { pending } => format!("waiting on {} call(s)", pending.len()),
        Disposition::Ended { cause, .. } => format!("ended: {}", cause_word(cause)),
    }
}

pub(crate) fn list(args: ListRunsArgs) -> anyhow::Result<ExitCode> {
    let runs = open(&args.store.store)?.runs()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        println!("no runs in {}", args.store.store.display());
    }
    for run in runs {
        println!(
            "{}  {:<12} {:>3} step(s)  {}",
            run.header.run_id,
            run.header.agent,
            run.last_seq,
            describe(&run.disposition)
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn show(args: ShowRunArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.store.store)?;
    let record = store.load(&args.run)?;
    let state = record.state()?;
    let thread_state = store.thread_state(&record.header.thread)?;
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
    print_text(&record);
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

fn print_text(record: &RunRecord) {
    println!(
        "run {} (agent {}, thread {}): {}",
        record.header.run_id,
        record.header.agent,
        record.header.thread,
        describe(&record.disposition())
    );
    for commit in &record.commits {
        println!("step {}: {}", commit.seq, describe(&commit.disposition));
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
        println!(
            "interrupted: step {} had started {} call(s) that were never committed",
            intent.seq,
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
