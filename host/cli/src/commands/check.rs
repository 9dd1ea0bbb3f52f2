//! `cordon plugins check`: load every bundle along the plugins search path and
//! report each one, valid or not, and the bundles an earlier folder shadows.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use cordon_kernel::{HookPhase, ToolSpec};
use cordon_wasm::{
    Admission, BundleKind, CacheOutcome, Grants, Limits, LoadedBundle, Provenance, StagingPolicy,
};
use serde::Serialize;

use crate::args::{GlobalArgs, PluginsArg};
use crate::context;
use crate::operator::Operator;

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Plugins folders, searched first, as `--plugins DIR` each.
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub plugins: PluginsArg,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    bundles: Vec<BundleReport<'a>>,
    errors: Vec<String>,
    /// Bundles not loaded because an earlier folder holds one of their name.
    shadowed: Vec<String>,
    /// The search path, first searched first, each folder with why.
    folders: Vec<SearchedFolder>,
}

#[derive(Serialize)]
struct SearchedFolder {
    path: String,
    source: String,
    present: bool,
}

#[derive(Serialize)]
struct BundleReport<'a> {
    name: &'a str,
    version: String,
    kind: String,
    description: &'a str,
    dir: String,
    component: String,
    sha256: &'a str,
    /// Whether its component is one this build of Cordon ships.
    provenance: Provenance,
    /// How it passed the operator's check.
    admission: Admission,
    cache: String,
    load_ms: u128,
    tools: &'a [ToolSpec],
    hooks: &'a [HookPhase],
    /// When a sandbox backend's writes are staged; absent for other kinds.
    staging: Option<StagingPolicy>,
    /// Whether the operator trusts the bundle's claims about its tools.
    trusted: bool,
    /// Why not, when it is not trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    untrusted: Option<String>,
    grants: &'a Grants,
    /// The origins it may reach: what it asks, as the operator's approval narrows it.
    network: Vec<String>,
    /// The secrets it uses, by name, and whether the operator's config gives
    /// each a value's source.
    secrets: Vec<SecretReport<'a>>,
    config: &'a serde_json::Value,
    limits: LimitsReport,
}

#[derive(Serialize)]
struct SecretReport<'a> {
    name: &'a str,
    provided: bool,
}

#[derive(Serialize)]
struct LimitsReport {
    memory_mib: usize,
    timeout_ms: u128,
    fuel: u64,
    output_kib: usize,
    log_kib: usize,
    /// What a sandbox backend may stage; absent for other kinds.
    #[serde(skip_serializing_if = "Option::is_none")]
    staging: Option<StagingReport>,
}

#[derive(Serialize)]
struct StagingReport {
    staged_mib: u64,
    staged_entries: usize,
    step_staged_mib: u64,
    step_staged_entries: usize,
    run_staged_mib: u64,
}

impl LimitsReport {
    fn of(limits: Limits, kind: BundleKind) -> Self {
        let staging = limits.staging;
        Self {
            memory_mib: limits.memory_bytes >> 20,
            timeout_ms: limits.timeout.as_millis(),
            fuel: limits.fuel,
            output_kib: limits.output_bytes >> 10,
            log_kib: limits.log_bytes >> 10,
            staging: (kind == BundleKind::Sandbox).then_some(StagingReport {
                staged_mib: staging.call_bytes >> 20,
                staged_entries: staging.call_entries,
                step_staged_mib: staging.step_bytes >> 20,
                step_staged_entries: staging.step_entries,
                run_staged_mib: staging.run_bytes >> 20,
            }),
        }
    }
}

fn cache_word(outcome: CacheOutcome) -> String {
    match outcome {
        CacheOutcome::Hit => "cached".to_owned(),
        CacheOutcome::Compiled => "compiled".to_owned(),
        CacheOutcome::Replaced(why) => {
            format!("compiled again: the cached entry was refused because {why}")
        }
        CacheOutcome::Uncached => "compiled, not cached".to_owned(),
    }
}

fn bundle_report<'a>(loaded: &'a LoadedBundle, operator: &Operator) -> BundleReport<'a> {
    let manifest = &loaded.bundle.manifest;
    BundleReport {
        name: &manifest.name,
        version: manifest.version.to_string(),
        kind: manifest.kind.to_string(),
        description: &manifest.description,
        dir: loaded.bundle.dir.display().to_string(),
        component: manifest.component.display().to_string(),
        sha256: &loaded.bundle.digest,
        provenance: loaded.bundle.provenance,
        admission: loaded.bundle.admission,
        cache: cache_word(loaded.cache),
        load_ms: loaded.load_time.as_millis(),
        tools: &loaded.tools,
        hooks: &manifest.hooks,
        staging: (manifest.kind == BundleKind::Sandbox).then_some(manifest.staging),
        trusted: operator.trust.trusts(&loaded.bundle),
        untrusted: operator
            .trust
            .judge(&loaded.bundle)
            .err()
            .map(|why| why.to_string()),
        grants: &manifest.grants,
        network: loaded
            .bundle
            .network
            .granted()
            .map(ToString::to_string)
            .collect(),
        secrets: manifest
            .secrets
            .keys()
            .map(|name| SecretReport {
                name,
                provided: operator.network.provides(&manifest.name, name),
            })
            .collect(),
        config: &manifest.config,
        limits: LimitsReport::of(manifest.limits, manifest.kind),
    }
}

pub(crate) async fn run(global: &GlobalArgs, args: CheckArgs) -> anyhow::Result<ExitCode> {
    let operator = Operator::load(&global.settings())?;
    let host = context::host(&global.settings(), &operator)?;
    let mut plugins = args.plugins;
    plugins.prepend(args.dirs);
    let path = plugins.path(&operator);
    let (report, shadowed) = context::load_path(&host, &global.workspace, &path).await?;
    let ok = report.errors.is_empty();
    let printed = Report {
        ok,
        bundles: report
            .bundles
            .iter()
            .map(|loaded| bundle_report(loaded, &operator))
            .collect(),
        errors: report.errors.iter().map(ToString::to_string).collect(),
        shadowed: shadowed.iter().map(ToString::to_string).collect(),
        folders: path
            .folders()
            .iter()
            .map(|folder| SearchedFolder {
                path: folder.path.display().to_string(),
                source: folder.source.to_string(),
                present: folder.path.is_dir(),
            })
            .collect(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&printed)?);
    } else {
        print_text(&printed);
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_text(report: &Report<'_>) {
    for bundle in &report.bundles {
        println!(
            "ok     {} {} ({}) {}",
            bundle.name, bundle.version, bundle.kind, bundle.dir
        );
        if !bundle.description.is_empty() {
            println!("       {}", bundle.description);
        }
        if bundle.provenance == Provenance::NamedLikeBundled {
            println!(
                "       third-party: named like a plugin bundled with Cordon, but its component is not the one this build of Cordon made"
            );
        }
        if let Some(staging) = bundle.staging {
            let staged = match staging {
                StagingPolicy::Transactional => "when the run is transactional",
                StagingPolicy::Always => "always",
            };
            println!("       workspace backend; writes staged {staged}");
        } else if bundle.hooks.is_empty() {
            let tools: Vec<&str> = bundle.tools.iter().map(|tool| tool.name.as_str()).collect();
            println!("       tools:  {}", tools.join(", "));
            if let Some(why) = &bundle.untrusted {
                println!(
                    "       untrusted: {why}; rules and resume treat its tools as destructive and not idempotent, whatever they declare"
                );
            }
        } else {
            let hooks: Vec<&str> = bundle.hooks.iter().map(|hook| hook.as_str()).collect();
            println!("       hooks:  {}", hooks.join(", "));
        }
        if bundle
            .config
            .as_object()
            .is_some_and(|table| !table.is_empty())
        {
            println!("       config: {}", bundle.config);
        }
        println!("       grants: {}", describe_grants(bundle.grants));
        if !bundle.grants.network.is_empty() {
            let reaches = if bundle.network.is_empty() {
                format!(
                    "no origin: approve some with `cordon grants approve {} --origin ORIGIN`",
                    bundle.name
                )
            } else {
                bundle.network.join(", ")
            };
            println!("       network: reaches {reaches}");
        }
        if !bundle.secrets.is_empty() {
            let names: Vec<String> = bundle
                .secrets
                .iter()
                .map(|secret| {
                    let said = if secret.provided {
                        "provided"
                    } else {
                        "not provided"
                    };
                    format!("{} ({said})", secret.name)
                })
                .collect();
            println!(
                "       secrets: {}; the component sees placeholders, the operator's config `[secrets.{}]` gives the values",
                names.join(", "),
                bundle.name
            );
        }
        let limits = &bundle.limits;
        println!(
            "       limits: memory {} MiB, timeout {} ms, fuel {}, output {} KiB, log {} KiB",
            limits.memory_mib, limits.timeout_ms, limits.fuel, limits.output_kib, limits.log_kib
        );
        if let Some(staging) = &limits.staging {
            println!(
                "       staging: {} MiB in {} paths a call, {} MiB in {} paths a step, {} MiB a run when never published",
                staging.staged_mib,
                staging.staged_entries,
                staging.step_staged_mib,
                staging.step_staged_entries,
                staging.run_staged_mib
            );
        }
        println!(
            "       component: {} sha256:{} ({}; {}, {} ms)",
            bundle.component, bundle.sha256, bundle.provenance, bundle.cache, bundle.load_ms
        );
        println!("       loads: {}", bundle.admission);
    }
    for error in &report.errors {
        println!("error  {error}");
    }
    for shadow in &report.shadowed {
        println!("warn   {shadow}");
    }
    let searched: Vec<String> = report
        .folders
        .iter()
        .map(|folder| {
            let absent = if folder.present { "" } else { ", absent" };
            format!("{} ({}{absent})", folder.path, folder.source)
        })
        .collect();
    println!("searched {}", searched.join(", "));
    println!(
        "{} bundle(s) valid, {} error(s)",
        report.bundles.len(),
        report.errors.len()
    );
}

fn describe_grants(grants: &Grants) -> String {
    let lines = grants.summary();
    if lines.is_empty() {
        "none".into()
    } else {
        lines.join("; ")
    }
}
