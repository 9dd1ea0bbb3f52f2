//! Embedding Cordon: load every bundle of a plugins directory, print the tools,
//! and run one jq query in its sandbox, with state kept in memory and events
//! collected for inspection.
//!
//! ```sh
//! ./scripts/build-plugins.sh
//! cargo run -p cordon-example-embed -- plugins
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use cordon_kernel::{EventLog, MemoryStateStore, ToolSet, call_committed};
use cordon_wasm::{HostConfig, PluginHost};
use serde_json::json;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "plugins".into()));
    let host = PluginHost::new(HostConfig::default())?;
    let report = host
        .load_dir(&dir, &std::env::current_dir()?)
        .await
        .with_context(|| format!("loading {}", dir.display()))?;
    if let Some(error) = report.errors.first() {
        bail!("{error}");
    }
    let events = Arc::new(EventLog::new());
    let plugins = host
        .plugins(report.bundles, events.clone())
        .map_err(|errors| anyhow::anyhow!("{}", errors[0]))?;
    for spec in plugins.specs() {
        println!("{:<14} {}", spec.name, spec.description);
    }
    let state = Arc::new(MemoryStateStore::new());
    let output = call_committed(
        &plugins,
        state,
        "jq.query",
        json!({"filter": "map(.price) | add", "input": [{"price": 3}, {"price": 4}]}),
    )
    .await?;
    println!("jq.query -> {}", output.content);
    println!("{} event(s) recorded", events.snapshot().len());
    Ok(())
}
