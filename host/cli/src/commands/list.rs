//! `cordon tool list`: every tool of every bundle.

use std::process::ExitCode;
use std::sync::Arc;

use cordon_kernel::{EventLog, ToolAnnotations, ToolSet};
use serde::Serialize;

use crate::args::{GlobalArgs, ListArgs};
use crate::context;

#[derive(Serialize)]
struct Listed<'a> {
    bundle: &'a str,
    #[serde(flatten)]
    spec: &'a cordon_kernel::ToolSpec,
}

pub async fn run(global: &GlobalArgs, args: ListArgs) -> anyhow::Result<ExitCode> {
    let host = context::host(global)?;
    let report = context::load_all(&host, &global.workspace, &args.plugins.plugins).await?;
    let plugins = host
        .plugins(report.bundles, Arc::new(EventLog::new()))
        .map_err(|errors| anyhow::anyhow!("{}", errors[0]))?;
    let specs = plugins.specs();
    let listed: Vec<Listed<'_>> = specs
        .iter()
        .map(|spec| Listed {
            bundle: plugins
                .bundle_of(&spec.name)
                .map_or("", |bundle| bundle.manifest.name.as_str()),
            spec,
        })
        .collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(ExitCode::SUCCESS);
    }
    let width = listed
        .iter()
        .map(|tool| tool.spec.name.len())
        .max()
        .unwrap_or(4);
    for tool in &listed {
        println!(
            "{:width$}  {:<10} {:<22} {}",
            tool.spec.name,
            tool.bundle,
            annotations(tool.spec.annotations),
            first_line(&tool.spec.description),
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn annotations(annotations: ToolAnnotations) -> String {
    let words: Vec<&str> = [
        (annotations.read_only, "read-only"),
        (annotations.destructive, "destructive"),
        (annotations.idempotent, "idempotent"),
        (annotations.open_world, "open-world"),
    ]
    .into_iter()
    .filter_map(|(set, word)| set.then_some(word))
    .collect();
    if words.is_empty() {
        "-".into()
    } else {
        words.join(",")
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
