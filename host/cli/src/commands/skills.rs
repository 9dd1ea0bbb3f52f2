//! `cordon skills check` and `cordon skills list`: skill folders checked
//! against the Agent Skills format, and the skills a run would offer.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use cordon_kernel::AgentDef;
use cordon_skills::{Discovery, Problem, Root, Severity, Source, TOOLS_DIR, discover};
use serde::Serialize;

use crate::args::{GlobalArgs, SkillsArg};
use crate::skillset;

/// What `cordon skills check` checks.
#[derive(Debug, Args)]
pub(crate) struct SkillsCheckArgs {
    /// Skill folders, or folders of skill folders.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Fail on warnings too: the slips other hosts tolerate, which Cordon
    /// loads a skill despite (an over-long description, an unknown field).
    #[arg(long)]
    pub strict: bool,
}

/// What `cordon skills list` lists.
#[derive(Debug, Args)]
pub(crate) struct SkillsListArgs {
    #[command(flatten)]
    pub skills: SkillsArg,
    /// An agent file whose `skills` join the search.
    #[arg(long, env = "CORDON_AGENT")]
    pub agent: Option<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Checked {
    ok: bool,
    skills: Vec<CheckedSkill>,
}

#[derive(Serialize)]
struct CheckedSkill {
    folder: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    ok: bool,
    problems: Vec<Problem>,
}

/// `cordon skills check DIR...`.
pub(crate) fn check(args: SkillsCheckArgs) -> anyhow::Result<ExitCode> {
    let roots: Vec<Root> = args
        .dirs
        .iter()
        .map(|dir| Root {
            source: Source::Flag,
            dir: dir.clone(),
        })
        .collect();
    let mut checked = Vec::new();
    for root in &roots {
        let found = discover(std::slice::from_ref(root));
        checked.extend(found.skills.into_iter().map(|found| CheckedSkill {
            folder: found.skill.folder.clone(),
            name: Some(found.skill.name().to_owned()),
            ok: !args.strict || found.skill.meta.warnings.is_empty(),
            problems: found.skill.meta.warnings.clone(),
        }));
        checked.extend(found.invalid.into_iter().map(|invalid| CheckedSkill {
            folder: invalid.folder,
            name: None,
            ok: false,
            problems: invalid.problems,
        }));
    }
    let ok = checked.iter().all(|skill| skill.ok);
    let report = Checked {
        ok,
        skills: checked,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for skill in &report.skills {
            if let Some(name) = skill.name.as_ref().filter(|_| skill.ok) {
                println!("ok     {name} {}", skill.folder.display());
            }
            for problem in &skill.problems {
                match problem.severity {
                    Severity::Error => println!("error  {problem}"),
                    Severity::Warning if args.strict => println!("error  {problem} (--strict)"),
                    Severity::Warning => println!("warn   {problem}"),
                }
            }
        }
        let valid = report.skills.iter().filter(|skill| skill.ok).count();
        let all = report.skills.iter().flat_map(|skill| &skill.problems);
        let warnings = all
            .clone()
            .filter(|problem| problem.severity == Severity::Warning)
            .count();
        let errors = all.count() - warnings;
        if warnings == 0 {
            println!("{valid} skill(s) valid, {errors} problem(s)");
        } else {
            println!("{valid} skill(s) valid, {errors} problem(s), {warnings} warning(s)");
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[derive(Serialize)]
struct Listed<'a> {
    name: &'a str,
    description: &'a str,
    source: Source,
    folder: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed_tools: Option<&'a [String]>,
    ships_tools: bool,
    /// Its Python packages: ready, or why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    packages: Option<String>,
    #[serde(skip_serializing_if = "<[Problem]>::is_empty")]
    warnings: &'a [Problem],
}

#[derive(Serialize)]
struct ListedReport<'a> {
    skills: Vec<Listed<'a>>,
    shadowed: Vec<String>,
    invalid: Vec<String>,
}

/// The skills a run would find: in `skills`, the agent file's, and the
/// default places; with the places searched.
pub(crate) fn found(
    global: &GlobalArgs,
    skills: &SkillsArg,
    agent: Option<&Path>,
) -> anyhow::Result<(Discovery, Vec<Root>)> {
    let definition = match agent {
        Some(file) => AgentDef::load(file)?,
        None => AgentDef::parse("(no agent)", "name = \"cordon\"")?,
    };
    let roots = skillset::roots(&skills.skills, &definition, agent, &global.workspace);
    Ok((discover(&roots), roots))
}

/// `cordon skills list`.
pub(crate) fn list(global: &GlobalArgs, args: SkillsListArgs) -> anyhow::Result<ExitCode> {
    let (discovery, roots) = found(global, &args.skills, args.agent.as_deref())?;
    let folders = discovery
        .skills
        .iter()
        .map(|found| (found.skill.name().to_owned(), found.skill.folder.clone()))
        .collect();
    let packages = cordon_session::packages::sites(&global.settings(), &folders);
    let report = ListedReport {
        skills: discovery
            .skills
            .iter()
            .map(|found| Listed {
                name: found.skill.name(),
                description: &found.skill.meta.description,
                source: found.source,
                folder: &found.skill.folder,
                allowed_tools: found.skill.meta.allowed_tools.as_deref(),
                ships_tools: found.skill.folder.join(TOOLS_DIR).is_dir(),
                packages: match (
                    packages.ready.get(found.skill.name()),
                    packages.missing.get(found.skill.name()),
                ) {
                    (Some(site), _) => Some(format!("approved, in {}", site.display())),
                    (None, Some(why)) => Some(why.clone()),
                    (None, None) => None,
                },
                warnings: &found.skill.meta.warnings,
            })
            .collect(),
        shadowed: discovery.shadowed.iter().map(ToString::to_string).collect(),
        invalid: discovery
            .invalid
            .iter()
            .flat_map(|invalid| invalid.problems.iter().map(ToString::to_string))
            .collect(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    if report.skills.is_empty() {
        let searched: Vec<String> = roots
            .iter()
            .map(|root| root.dir.display().to_string())
            .collect();
        println!("no skills found in {}", searched.join(", "));
    }
    for skill in &report.skills {
        println!(
            "{}  ({}, {})",
            skill.name,
            skill.source,
            skill.folder.display()
        );
        println!("  {}", skill.description.lines().next().unwrap_or_default());
        if let Some(allowed) = skill.allowed_tools {
            println!("  allowed-tools: {}", allowed.join(" "));
        }
        if skill.ships_tools {
            println!("  ships tool bundles in {TOOLS_DIR}/");
        }
        if let Some(packages) = &skill.packages {
            println!("  python packages: {packages}");
        }
        for warning in skill.warnings {
            println!("  warning: {warning}");
        }
    }
    for shadowed in &report.shadowed {
        println!("warning: {shadowed}");
    }
    for invalid in &report.invalid {
        println!("invalid: {invalid}");
    }
    Ok(ExitCode::SUCCESS)
}
