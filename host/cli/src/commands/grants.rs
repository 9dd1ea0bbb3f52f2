//! `cordon grants list|approve|revoke`: the operator's half of every grant.
//! A manifest asks; the operator approves, for one component and one
//! manifest. `approve` shows what a bundle asks beyond its approval, whether
//! its component changed and each value of its manifest that changed,
//! before recording it, and grants only the origins `--origin` names when it
//! is given; the file lives in `.cordon/`, where no component reaches.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use cordon_session::PluginPath;
use cordon_skills::{Catalog, Root, Source, discover};
use cordon_wasm::manifest::MANIFEST_FILE;
use cordon_wasm::{
    Admission, Admitted, Approvals, BundledPlugins, Grants, Origin, Pinned, Provenance, Request,
    Unapproved, UntrustedProfile,
};
use serde::Serialize;

use crate::args::{GlobalArgs, PluginsArg, SkillsArg};
use crate::context;
use crate::operator::Operator;

/// What `cordon grants list` looks at.
#[derive(Debug, Args)]
pub(crate) struct GrantsListArgs {
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub skills: SkillsArg,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What `cordon grants approve` approves.
#[derive(Debug, Args)]
pub(crate) struct GrantsApproveArgs {
    /// The bundle: its name, or `SKILL/NAME` for a skill's tool bundle.
    pub bundle: String,
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub skills: SkillsArg,
    /// Grant only this of the origins the bundle asks for, such as
    /// `https://api.github.com` (repeatable); without it, every origin asked.
    #[arg(long = "origin", value_name = "ORIGIN")]
    pub origins: Vec<String>,
    /// Approve without asking (required when not on a terminal).
    #[arg(long)]
    pub yes: bool,
}

/// What `cordon grants revoke` withdraws.
#[derive(Debug, Args)]
pub(crate) struct GrantsRevokeArgs {
    /// The bundle, as approved.
    pub bundle: String,
}

/// A bundle found where a run would load it, with what it asks for.
struct Found {
    dir: PathBuf,
    request: Request,
}

/// Every bundle of the plugins search path `plugins`, first searched first,
/// and every tool bundle of the skills found with `skills` and the default
/// places of `workspace`.
fn bundles(
    plugins: &PluginPath,
    skills: &SkillsArg,
    workspace: &Path,
) -> anyhow::Result<Vec<(PathBuf, Option<String>)>> {
    let mut found: Vec<(PathBuf, Option<String>)> = Vec::new();
    for folder in plugins.present()? {
        found.extend(folders(&folder.path).into_iter().map(|dir| (dir, None)));
    }
    let mut roots: Vec<Root> = skills
        .skills
        .iter()
        .map(|dir| Root {
            source: Source::Flag,
            dir: dir.clone(),
        })
        .collect();
    roots.extend(Root::defaults(workspace));
    let catalog = Catalog::of(&discover(&roots));
    for skill in catalog.skills() {
        if let Some(tools) = skill.tools_dir() {
            found.extend(
                folders(&tools)
                    .into_iter()
                    .map(|dir| (dir, Some(skill.name().to_owned()))),
            );
        }
    }
    Ok(found)
}

/// The bundle folders of `dir`, in name order.
fn folders(dir: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join(MANIFEST_FILE).is_file())
        .collect();
    folders.sort();
    folders
}

/// The folders of `plugins` that exist, for a message.
fn searched(plugins: &PluginPath) -> String {
    let folders: Vec<String> = plugins
        .folders()
        .iter()
        .filter(|folder| folder.path.is_dir())
        .map(|folder| folder.path.display().to_string())
        .collect();
    folders.join(", ")
}

/// Where a bundle stands with the operator: how it loads and the origins it
/// is granted, or why it does not.
fn status(
    approvals: &Approvals,
    bundled: &BundledPlugins,
    request: &Request,
) -> Result<Admitted, Unapproved> {
    approvals.check(request.presented(), bundled)
}

#[derive(Serialize)]
struct ListedBundle {
    bundle: String,
    dir: PathBuf,
    sha256: String,
    /// Whether its component is one this build of Cordon ships.
    provenance: String,
    asks: Vec<String>,
    approved: bool,
    /// How it loads, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    admission: Option<String>,
    /// The origins it is granted, when it loads.
    network: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// `cordon grants list`.
pub(crate) fn list(global: &GlobalArgs, args: GrantsListArgs) -> anyhow::Result<ExitCode> {
    let operator = Operator::load(&global.settings())?;
    let bundled = context::bundled()?;
    let profile = UntrustedProfile::default();
    let mut listed = Vec::new();
    let plugins = args.plugins.path(&operator);
    for (dir, skill) in bundles(&plugins, &args.skills, &global.workspace)? {
        let request = match Request::read(&dir, skill.as_deref(), &profile) {
            Ok(request) => request,
            Err(error) => {
                eprintln!("warning: {error}");
                continue;
            }
        };
        let verdict = status(&operator.approvals, &bundled, &request);
        listed.push(ListedBundle {
            bundle: request.id.clone(),
            dir,
            sha256: request.digest.clone(),
            provenance: request.provenance(&bundled).to_string(),
            asks: request.manifest.grants.summary(),
            approved: verdict.is_ok(),
            admission: verdict
                .as_ref()
                .ok()
                .map(|admitted| admitted.admission.to_string()),
            network: verdict
                .as_ref()
                .map(|admitted| admitted.network.clone())
                .unwrap_or_default(),
            reason: verdict.err().map(|reason| reason.to_string()),
        });
    }
    if args.json {
        let approvals: Vec<_> = operator.approvals.iter().collect();
        let value = serde_json::json!({
            "file": operator.grants_file,
            "approvals": approvals.into_iter().map(|(bundle, approval)| serde_json::json!({
                "bundle": bundle,
                "sha256": approval.sha256,
                "grants": approval.grants.summary(),
            })).collect::<Vec<_>>(),
            "bundles": listed,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("approvals in {}:", operator.grants_file.display());
    if operator.approvals.iter().next().is_none() {
        println!("  (none)");
    }
    for (bundle, approval) in operator.approvals.iter() {
        println!(
            "  {bundle}  sha256:{}  {}",
            approval.sha256,
            describe(&approval.grants.summary())
        );
    }
    println!("bundles:");
    let width = listed
        .iter()
        .map(|bundle| bundle.bundle.len())
        .max()
        .unwrap_or(0);
    for bundle in &listed {
        let mark = if bundle.approved {
            "ok        "
        } else {
            "unapproved"
        };
        println!(
            "  {mark} {:width$}  asks {}  ({}; {})",
            bundle.bundle,
            describe(&bundle.asks),
            bundle.provenance,
            bundle.dir.display()
        );
        if let Some(reason) = &bundle.reason {
            println!("             {reason}");
        }
        if bundle.approved && bundle.asks.iter().any(|ask| ask.starts_with("network ")) {
            println!("             reaches {}", origins(&bundle.network));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The origins granted, for an operator.
fn origins(granted: &[String]) -> String {
    if granted.is_empty() {
        "no origin (approve some with --origin)".to_owned()
    } else {
        granted.join(", ")
    }
}

/// The origins `chosen` as the approval records them, each one `asked`
/// covers; all of `asked` when none is chosen.
fn chosen_origins(chosen: &[String], asked: &[String]) -> anyhow::Result<Vec<String>> {
    if chosen.is_empty() {
        return Ok(asked.to_vec());
    }
    let asked: Vec<Origin> = asked
        .iter()
        .filter_map(|text| Origin::parse(text).ok())
        .collect();
    let mut approved = Vec::new();
    for text in chosen {
        let origin =
            Origin::parse(text).map_err(|reason| anyhow::anyhow!("--origin {text:?}: {reason}"))?;
        if !asked.iter().any(|ask| ask.covers(&origin)) {
            bail!(
                "--origin {text:?}: the bundle does not ask for it (it asks for {}); an approval never widens a grant",
                if asked.is_empty() {
                    "no network".to_owned()
                } else {
                    asked
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            );
        }
        let shown = origin.to_string();
        if !approved.contains(&shown) {
            approved.push(shown);
        }
    }
    Ok(approved)
}

fn describe(lines: &[String]) -> String {
    if lines.is_empty() {
        "nothing".to_owned()
    } else {
        lines.join("; ")
    }
}

/// `cordon grants approve BUNDLE`.
pub(crate) fn approve(global: &GlobalArgs, args: GrantsApproveArgs) -> anyhow::Result<ExitCode> {
    let operator = Operator::load(&global.settings())?;
    let bundled = context::bundled()?;
    let profile = UntrustedProfile::default();
    let plugins = args.plugins.path(&operator);
    let found = bundles(&plugins, &args.skills, &global.workspace)?
        .into_iter()
        .filter_map(|(dir, skill)| {
            let request = Request::read(&dir, skill.as_deref(), &profile).ok()?;
            (request.id == args.bundle).then_some(Found { dir, request })
        })
        .next();
    let Some(Found { dir, request }) = found else {
        bail!(
            "no bundle `{}` in {} or in the skills found (name a skill's bundle `SKILL/NAME`; give the folders with --plugins and --skills)",
            args.bundle,
            searched(&plugins)
        );
    };
    let consent = if args.yes {
        Consent::Given
    } else {
        Consent::Ask
    };
    record(
        &operator,
        &bundled,
        (&dir, &request),
        &args.origins,
        consent,
    )
}

/// Whether the operator still has to say yes to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Consent {
    /// Ask on a terminal, and refuse without one.
    Ask,
    /// The command line already said yes (`--yes`, `cordon build --approve`).
    Given,
}

/// Show what the bundle `request` read from `dir` asks beyond its approval,
/// what changed since it, and record the approval of all it asks (of its
/// network origins, those `chosen` names, or all when none) once consent
/// is given.
pub(crate) fn record(
    operator: &Operator,
    bundled: &BundledPlugins,
    (dir, request): (&Path, &Request),
    chosen: &[String],
    consent: Consent,
) -> anyhow::Result<ExitCode> {
    let asked = &request.manifest.grants;
    let before = operator.approvals.get(&request.id);
    println!("bundle {} ({})", request.id, dir.display());
    println!("  component sha256:{}", request.digest);
    if request.provenance(bundled) == Provenance::NamedLikeBundled {
        println!(
            "  third-party: it is named like a plugin bundled with Cordon, but its component is not the one this build of Cordon made"
        );
    }
    println!("  asks: {}", describe(&asked.summary()));
    for taken in &request.narrowed {
        println!("  runs without {taken}: the profile of untrusted code");
    }
    let shipped = bundled.matching(&request.manifest.name, &request.digest);
    let (covered, pinned): (Grants, Option<&Pinned>) = match (before, shipped) {
        (Some(approval), _) => {
            if approval.sha256 != request.digest {
                println!(
                    "  its component changed since the last approval (sha256:{})",
                    approval.sha256
                );
            }
            if approval.manifest.is_none() {
                println!("  the last approval records no manifest; this one pins it");
            }
            (approval.grants.clone(), approval.manifest.as_ref())
        }
        (None, Some(shipped)) if request.skill.is_none() => {
            (shipped.grants.clone(), Some(&shipped.pinned))
        }
        (None, _) => (Grants::default(), None),
    };
    let changes = pinned.map_or_else(Vec::new, |pinned| pinned.changes(&request.pinned));
    for change in &changes {
        let since = if before.is_some() {
            "since the approval"
        } else {
            "from the manifest Cordon ships"
        };
        println!("  manifest changed {since}: {change}");
    }
    let network = chosen_origins(chosen, &asked.network)?;
    let approving = Grants {
        network: network.clone(),
        ..asked.clone()
    };
    let mut beyond = asked.beyond(&covered);
    beyond.extend(
        network
            .iter()
            .filter(|origin| !covered.network.contains(origin))
            .map(|origin| format!("network {origin}")),
    );
    let dropped: Vec<String> = covered
        .network
        .iter()
        .filter(|origin| !network.contains(origin))
        .map(|origin| format!("network {origin}"))
        .collect();
    let standing = status(&operator.approvals, bundled, request);
    let settled = standing
        .as_ref()
        .is_ok_and(|admitted| admitted.admission != Admission::AsksNothing);
    if settled && beyond.is_empty() && dropped.is_empty() {
        println!("  nothing beyond what is approved");
        return Ok(ExitCode::SUCCESS);
    }
    if standing.is_ok_and(|admitted| admitted.admission == Admission::AsksNothing) {
        println!(
            "  it asks for nothing and loads unapproved; approving pins this component and manifest, which trust by name in the operator config covers"
        );
    }
    if !asked.network.is_empty() {
        println!("  reaches: {}", origins(&network));
    }
    println!("  beyond the approval: {}", describe(&beyond));
    if !dropped.is_empty() {
        println!("  no longer approved: {}", describe(&dropped));
    }
    if consent == Consent::Ask {
        if !std::io::stdin().is_terminal() {
            bail!("not on a terminal: approve with --yes after reading the above");
        }
        print!("approve these grants for this component and manifest? [y/N] ");
        std::io::stdout().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            println!("not approved");
            return Ok(ExitCode::from(1));
        }
    }
    let mut approvals = operator.approvals.clone();
    approvals.approve(
        &request.id,
        &request.digest,
        approving,
        request.pinned.clone(),
    );
    save(&operator.grants_file, &approvals)?;
    println!(
        "approved {} for sha256:{} and its manifest in {}",
        request.id,
        request.digest,
        operator.grants_file.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `cordon grants revoke BUNDLE`.
pub(crate) fn revoke(global: &GlobalArgs, args: GrantsRevokeArgs) -> anyhow::Result<ExitCode> {
    let operator = Operator::load(&global.settings())?;
    let mut approvals = operator.approvals.clone();
    if !approvals.revoke(&args.bundle) {
        bail!(
            "{} holds no approval of `{}`",
            operator.grants_file.display(),
            args.bundle
        );
    }
    save(&operator.grants_file, &approvals)?;
    println!("revoked {}", args.bundle);
    Ok(ExitCode::SUCCESS)
}

/// Write `approvals` to `file`, creating its folder.
fn save(file: &Path, approvals: &Approvals) -> anyhow::Result<()> {
    if let Some(folder) = file
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("creating {}", folder.display()))?;
    }
    let text = format!(
        "# The grants the operator approved, per bundle, for one component and one manifest;\n# written by `cordon grants approve`. A bundle loads only when everything it asks is\n# here and its component and manifest are the ones approved.\n\n{}",
        approvals.to_toml()
    );
    std::fs::write(file, text).with_context(|| format!("writing {}", file.display()))
}
