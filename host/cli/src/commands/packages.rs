//! `cordon skills approve NAME`: the Python packages a skill's scripts
//! import, shown with the wheel the sandbox would run and its SHA-256, then,
//! on the operator's yes, fetched, checked and unpacked read-only into the
//! package store, and recorded in `.cordon/packages.toml` beside the grants
//! (see [`cordon_session::packages`]).

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use cordon_session::packages::{STORE_VARIABLE, approvals_file, store};
use cordon_skills::packages::approvals::{self, ApprovedSkill, ApprovedWheel, PackageApprovals};
use cordon_skills::packages::index::Taken;
use cordon_skills::packages::requirements::Requirement;
use cordon_skills::packages::{Client, index, wheel};

use crate::args::{GlobalArgs, SkillsArg};

/// What `cordon skills approve` approves.
#[derive(Debug, Args)]
pub(crate) struct SkillsApproveArgs {
    /// The skill, by name.
    pub skill: String,
    /// A package the skill's scripts need that it does not declare, as
    /// NAME==VERSION (repeatable).
    #[arg(long = "package", value_name = "NAME==VERSION")]
    pub packages: Vec<String>,
    /// Take only the Python files of NAME's native wheel, leaving its
    /// compiled modules out, for a package that runs without them (such as
    /// PyYAML, which falls back to pure Python) and has no pure wheel
    /// (repeatable).
    #[arg(long = "python-only", value_name = "NAME")]
    pub python_only: Vec<String>,
    #[command(flatten)]
    pub skills: SkillsArg,
    /// An agent file whose `skills` join the search.
    #[arg(long, env = "CORDON_AGENT")]
    pub agent: Option<PathBuf>,
    /// Approve without asking (required when not on a terminal).
    #[arg(long)]
    pub yes: bool,
}

/// `cordon skills approve NAME`.
pub(crate) async fn approve(
    global: &GlobalArgs,
    args: SkillsApproveArgs,
) -> anyhow::Result<ExitCode> {
    let (discovery, _) = super::skills::found(global, &args.skills, args.agent.as_deref())?;
    let Some(found) = discovery
        .skills
        .iter()
        .find(|found| found.skill.name() == args.skill)
    else {
        let offered: Vec<&str> = discovery
            .skills
            .iter()
            .map(|found| found.skill.name())
            .collect();
        bail!(
            "no skill `{}` is offered here; the skills found are: {}",
            args.skill,
            if offered.is_empty() {
                "none".to_owned()
            } else {
                offered.join(", ")
            }
        );
    };
    let folder = found.skill.folder.clone();
    let file = approvals_file(&global.settings());
    let mut all = PackageApprovals::load(&file)?;
    let mut approved = all.skills.get(&args.skill).cloned().unwrap_or_default();
    for named in &args.packages {
        let pin = Requirement::parse(named).map_err(anyhow::Error::msg)?;
        approved.named.retain(|known| {
            Requirement::parse(known).map_or(true, |known| known.normalized() != pin.normalized())
        });
        approved.named.push(pin.to_string());
    }
    let pins = approved.requirements(&folder)?;
    if pins.is_empty() {
        println!(
            "skill `{}` names no Python packages (no requirements.txt in {}, and no \
             `metadata.python-requirements` in its SKILL.md); name one with --package NAME==VERSION",
            args.skill,
            folder.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let index = index::chosen();
    let client = Client::new();
    println!(
        "skill `{}` ({}) asks for these Python packages, from {index}:",
        args.skill,
        folder.display()
    );
    let mut wheels = Vec::new();
    for pin in &pins {
        let python_only = args.python_only.iter().any(|name| {
            Requirement::parse(&format!("{name}==0"))
                .is_ok_and(|named| named.normalized() == pin.normalized())
        });
        let taken = if python_only {
            Taken::PythonOnly
        } else {
            Taken::Whole
        };
        let chosen = index::find(&client, &index, pin, taken).await?;
        let note = if chosen.python_only {
            "  (its Python files only: its compiled modules are left out)"
        } else {
            ""
        };
        println!("  {pin}  {}  sha256:{}{note}", chosen.file, chosen.sha256);
        wheels.push(chosen);
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            bail!("not on a terminal: approve with --yes after reading the above");
        }
        print!(
            "approve and fetch these packages for `{}`? [y/N] ",
            args.skill
        );
        std::io::stdout().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            println!("not approved");
            return Ok(ExitCode::from(1));
        }
    }
    let store =
        store().with_context(|| format!("no package store: set {STORE_VARIABLE} or HOME"))?;
    let next = ApprovedSkill {
        named: approved.named.clone(),
        wheels: wheels
            .iter()
            .map(|chosen| ApprovedWheel {
                name: chosen.requirement.name.clone(),
                version: chosen.requirement.version.clone(),
                file: chosen.file.clone(),
                sha256: chosen.sha256.clone(),
                python_only: chosen.python_only,
            })
            .collect(),
    };
    let packages = next.folder(&store, &args.skill);
    fetch(&client, &wheels, &packages).await?;
    all.skills.insert(args.skill.clone(), next);
    all.save(&file)?;
    println!(
        "approved; {} package(s) in {} (recorded in {})",
        wheels.len(),
        packages.display(),
        file.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Downloads, checks and unpacks `wheels` into a fresh `packages` folder,
/// read-only once whole; a folder already whole is kept.
async fn fetch(client: &Client, wheels: &[index::Wheel], packages: &Path) -> anyhow::Result<()> {
    if approvals::is_complete(packages) {
        return Ok(());
    }
    let partial = packages.with_extension("partial");
    if partial.exists() {
        make_writable(&partial)?;
        std::fs::remove_dir_all(&partial)?;
    }
    let site = approvals::site(&partial);
    std::fs::create_dir_all(&site)?;
    for chosen in wheels {
        let bytes = wheel::download(client, chosen, Some(&chosen.sha256)).await?;
        wheel::unpack(&chosen.file, &bytes, &site, chosen.python_only)?;
    }
    wheel::seal(&site)?;
    approvals::mark_complete(&partial)?;
    if packages.exists() {
        make_writable(packages)?;
        std::fs::remove_dir_all(packages)?;
    }
    std::fs::rename(&partial, packages)
        .with_context(|| format!("cannot move the packages into {}", packages.display()))?;
    Ok(())
}

/// Undoes [`wheel::seal`] so a stale folder can be removed.
fn make_writable(folder: &Path) -> std::io::Result<()> {
    for entry in walk(folder)? {
        let mut permissions = std::fs::metadata(&entry)?.permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
        std::fs::set_permissions(&entry, permissions)?;
    }
    Ok(())
}

fn walk(folder: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = vec![folder.to_owned()];
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            found.extend(walk(&entry.path())?);
        } else {
            found.push(entry.path());
        }
    }
    Ok(found)
}
