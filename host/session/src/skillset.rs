//! The skills a run offers: found in its roots (the `--skills` folders, the
//! agent file's `skills`, the project's `.agents/skills`, the user's
//! `~/.agents/skills`, in that precedence), each invalid or shadowed one a
//! warning; the tool bundles each ships, loaded under the profile of
//! untrusted code and the operator's approvals, a refused one a warning and
//! left out; and the catalog the model sees through the built-in `skill`
//! tool.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cordon_kernel::AgentDef;
use cordon_skills::{Catalog, Discovery, Root, SkillTool, Source, discover};
use cordon_wasm::{LoadedBundle, PluginHost};

/// A run's skills, and the tool bundles they ship.
pub struct Skillset {
    /// The skills offered.
    pub catalog: Arc<Catalog>,
    /// The tool bundles the skills ship, loaded.
    pub bundles: Vec<LoadedBundle>,
    /// The tools each skill ships, by skill.
    pub tools: BTreeMap<String, Vec<String>>,
}

/// Where a run looks for skills: the `flags` folders as given, the agent
/// file's `skills` (relative to `agent_file`), then the default places of
/// `workspace`.
pub fn roots(
    flags: &[PathBuf],
    agent: &AgentDef,
    agent_file: Option<&Path>,
    workspace: &Path,
) -> Vec<Root> {
    let base = agent_file
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let mut roots: Vec<Root> = flags
        .iter()
        .map(|dir| Root {
            source: Source::Flag,
            dir: dir.clone(),
        })
        .collect();
    roots.extend(agent.skills.iter().map(|dir| Root {
        source: Source::Agent,
        dir: base.join(dir),
    }));
    roots.extend(Root::defaults(workspace));
    roots
}

/// Print what `discovery` found wrong or shadowed, as warnings.
pub fn warn(discovery: &Discovery) {
    for invalid in &discovery.invalid {
        eprintln!(
            "warning: skill {} of {} is not offered: it breaks {} rule(s) of the Agent Skills format",
            invalid.folder.display(),
            invalid.source,
            invalid.problems.len()
        );
        for problem in &invalid.problems {
            eprintln!("  {problem}");
        }
    }
    for shadowed in &discovery.shadowed {
        eprintln!("warning: {shadowed}");
    }
}

/// Find the skills of `roots`, warning about what is wrong, and load the
/// tool bundles they ship with `host`, directory grants under `workspace`.
pub async fn assemble(host: &PluginHost, roots: &[Root], workspace: &Path) -> Skillset {
    let discovery = discover(roots);
    warn(&discovery);
    let catalog = Catalog::of(&discovery);
    let mut bundles = Vec::new();
    let mut tools: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for skill in catalog.skills() {
        let Some(dir) = skill.tools_dir() else {
            continue;
        };
        let report = match host.load_skill_tools(skill.name(), &dir, workspace).await {
            Ok(report) => report,
            Err(error) => {
                eprintln!(
                    "warning: skill `{}`: its tools are not loaded: {error}",
                    skill.name()
                );
                continue;
            }
        };
        for error in &report.errors {
            eprintln!(
                "warning: skill `{}`: a tool bundle is not loaded: {error}",
                skill.name()
            );
        }
        for loaded in report.bundles {
            for taken in &loaded.narrowed {
                eprintln!(
                    "warning: skill tool bundle `{}` runs without {taken}",
                    loaded.bundle.id()
                );
            }
            tools
                .entry(skill.name().to_owned())
                .or_default()
                .extend(loaded.tools.iter().map(|tool| tool.name.clone()));
            bundles.push(loaded);
        }
    }
    Skillset {
        catalog: Arc::new(catalog),
        bundles,
        tools,
    }
}

impl Skillset {
    /// The folders of the skills offered, by skill.
    pub fn folders(&self) -> BTreeMap<String, PathBuf> {
        self.catalog
            .skills()
            .map(|skill| (skill.name().to_owned(), skill.folder.clone()))
            .collect()
    }

    /// The built-in `skill` tool over these skills, whose folders the run's
    /// workspace mounts when `mounted`.
    pub fn tool(&self, mounted: bool) -> SkillTool {
        SkillTool::new(Arc::clone(&self.catalog), mounted, self.tools.clone())
    }
}
