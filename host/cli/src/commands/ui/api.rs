//! What the page asks of the store, as JSON: the runs, one run (as `runs
//! show --json` prints it, with each commit's model step and the calls it
//! waits on), the file diff of one commit (as `runs diff` renders it), and
//! a person's decisions on a waiting run, which resume it.

use std::collections::BTreeMap;

use anyhow::bail;
use cordon_kernel::{Disposition, PendingCall};
use serde::Deserialize;
use serde_json::{Value, json};

use super::resume::{Decision, Resumer};
use crate::commands::{diff, runs};
use crate::store;

/// The runs, newest first with each one's sub-agents' runs after it, and
/// where the store is.
pub(crate) async fn runs(store: &store::RunStore, location: &str) -> anyhow::Result<Value> {
    Ok(json!({
        "store": location,
        "runs": runs::as_trees(store.runs().await?),
    }))
}

/// Run `run_id` as `runs show --json` shows it, with `steps` (the model step
/// of each commit: 0 for the prompt) and `pending` (each call it waits on,
/// by its path, with why it waits).
pub(crate) async fn run(store: &store::RunStore, run_id: &str) -> anyhow::Result<Value> {
    let record = store.load(run_id).await?;
    let mut shown = runs::shown(store, &record).await?;
    let pending: Vec<Value> = match record.disposition() {
        Disposition::Waiting { pending } => pending
            .iter()
            .flat_map(PendingCall::leaves)
            .map(|leaf| {
                json!({
                    "call": leaf.call,
                    "why": leaf.reason.asked().unwrap_or_else(|| "its effect is unknown after a crash".to_owned()),
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    shown["steps"] = json!(record.steps());
    shown["pending"] = Value::Array(pending);
    Ok(shown)
}

/// The files commit `seq` of `run_id` changed, as a unified diff.
pub(crate) async fn diff(store: &store::RunStore, run_id: &str, seq: u64) -> anyhow::Result<Value> {
    let commits = store.files(run_id).await?;
    let rendered: String = commits
        .iter()
        .filter(|commit| commit.seq == seq)
        .flat_map(|commit| &commit.changes)
        .map(diff::render)
        .collect();
    Ok(json!({ "diff": rendered }))
}

/// A person's decisions on a waiting run, as the page sends them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Decisions {
    run: String,
    decisions: BTreeMap<String, Decision>,
    #[serde(default)]
    reason: String,
}

/// Resume the run `decisions` names with them, as `runs resume` does.
pub(crate) async fn decide(resumer: &Resumer, body: &[u8]) -> anyhow::Result<Value> {
    let decisions: Decisions = serde_json::from_slice(body)
        .map_err(|error| anyhow::anyhow!("the decisions are malformed: {error}"))?;
    if decisions.decisions.is_empty() {
        bail!("no call was decided");
    }
    let reason = decisions.reason.trim();
    let resumed = resumer
        .resume(
            &decisions.run,
            &decisions.decisions,
            (!reason.is_empty()).then_some(reason),
        )
        .await?;
    Ok(json!({
        "ok": resumed.code == 0,
        "code": resumed.code,
        "output": resumed.output,
    }))
}
