//! Finding skills. A root is a folder of skill folders (or one skill folder
//! itself); roots are searched in precedence order: the `--skills` folders as
//! given, the agent file's `skills`, the project's `.agents/skills`, then the
//! user's `~/.agents/skills`. A skill found first shadows one of the same
//! name found later, which is reported. An invalid skill is reported with
//! every problem it has and offered to no one; the others are unaffected.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::problem::Problem;
use crate::skill::{SKILL_FILE, Skill};

/// Where a root of skills comes from, in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// `--skills DIR` on the command line.
    Flag,
    /// The agent file's `skills = [...]`.
    Agent,
    /// The project's `.agents/skills`.
    Project,
    /// The user's `~/.agents/skills`.
    User,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Flag => "--skills",
            Self::Agent => "the agent file",
            Self::Project => "the project",
            Self::User => "the user",
        })
    }
}

/// The project's skills, under the workspace root.
pub const PROJECT_SKILLS: &str = ".agents/skills";

/// A folder searched for skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Where it comes from.
    pub source: Source,
    /// The folder.
    pub dir: PathBuf,
}

impl Root {
    /// The default roots: the project's `.agents/skills` under `workspace`,
    /// then the user's `~/.agents/skills` when `HOME` is set.
    pub fn defaults(workspace: &Path) -> Vec<Root> {
        let mut roots = vec![Root {
            source: Source::Project,
            dir: workspace.join(PROJECT_SKILLS),
        }];
        if let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) {
            roots.push(Root {
                source: Source::User,
                dir: PathBuf::from(home).join(".agents").join("skills"),
            });
        }
        roots
    }
}

/// A valid skill and where it was found.
#[derive(Debug, Clone)]
pub struct Found {
    /// The skill.
    pub skill: Skill,
    /// Its root's source.
    pub source: Source,
}

/// A folder that looked like a skill and is not a valid one.
#[derive(Debug, Clone)]
pub struct Invalid {
    /// The folder.
    pub folder: PathBuf,
    /// Its root's source.
    pub source: Source,
    /// Every rule it breaks.
    pub problems: Vec<Problem>,
}

/// A skill left out because one of the same name was found first.
#[derive(Debug, Clone)]
pub struct Shadowed {
    /// The name.
    pub name: String,
    /// The folder of the skill kept, and where it came from.
    pub kept: (PathBuf, Source),
    /// The folder of the skill left out, and where it came from.
    pub left: (PathBuf, Source),
}

impl fmt::Display for Shadowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skill `{}` of {} ({}) shadows the one of {} ({})",
            self.name,
            self.kept.1,
            self.kept.0.display(),
            self.left.1,
            self.left.0.display()
        )
    }
}

/// Everything a search found.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// The valid skills, one per name, by name.
    pub skills: Vec<Found>,
    /// The folders that are not valid skills.
    pub invalid: Vec<Invalid>,
    /// The skills shadowed by another of the same name.
    pub shadowed: Vec<Shadowed>,
}

/// Search `roots` in order. A root named on the command line or in the
/// agent file must exist; a default one may be missing.
pub fn discover(roots: &[Root]) -> Discovery {
    let mut discovery = Discovery::default();
    for root in roots {
        for folder in skill_folders(root, &mut discovery) {
            match Skill::load(&folder) {
                Err(problems) => discovery.invalid.push(Invalid {
                    folder,
                    source: root.source,
                    problems,
                }),
                Ok(skill) => match discovery
                    .skills
                    .iter()
                    .find(|found| found.skill.name() == skill.name())
                {
                    Some(kept) => discovery.shadowed.push(Shadowed {
                        name: skill.name().to_owned(),
                        kept: (kept.skill.folder.clone(), kept.source),
                        left: (skill.folder, root.source),
                    }),
                    None => discovery.skills.push(Found {
                        skill,
                        source: root.source,
                    }),
                },
            }
        }
    }
    discovery
        .skills
        .sort_by(|left, right| left.skill.name().cmp(right.skill.name()));
    discovery
}

/// The skill folders of `root`: itself when it holds a SKILL.md, else each
/// folder in it that does, in name order. Hidden folders are skipped.
fn skill_folders(root: &Root, discovery: &mut Discovery) -> Vec<PathBuf> {
    if root.dir.join(SKILL_FILE).is_file() {
        return vec![root.dir.clone()];
    }
    let entries = match std::fs::read_dir(&root.dir) {
        Ok(entries) => entries,
        Err(error) => {
            if matches!(root.source, Source::Flag | Source::Agent) {
                discovery.invalid.push(Invalid {
                    folder: root.dir.clone(),
                    source: root.source,
                    problems: vec![Problem::file(
                        &root.dir,
                        format!("cannot read this folder of skills: {error}"),
                    )],
                });
            }
            return Vec::new();
        }
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .map(|entry| entry.path())
        .filter(|path| path.is_dir() && path.join(SKILL_FILE).exists())
        .collect();
    folders.sort();
    if folders.is_empty() && matches!(root.source, Source::Flag | Source::Agent) {
        discovery.invalid.push(Invalid {
            folder: root.dir.clone(),
            source: root.source,
            problems: vec![Problem::file(
                &root.dir,
                format!("holds no {SKILL_FILE}, and no folder in it holds one"),
            )],
        });
    }
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_skill(root: &Path, name: &str, description: &str) {
        let folder = root.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join(SKILL_FILE),
            format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"),
        )
        .unwrap();
    }

    #[test]
    fn earlier_roots_shadow_later_ones_and_the_shadowing_is_reported() {
        let project = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        write_skill(project.path(), "shared", "from the project");
        write_skill(user.path(), "shared", "from the user");
        write_skill(user.path(), "only-user", "mine");
        let found = discover(&[
            Root {
                source: Source::Project,
                dir: project.path().into(),
            },
            Root {
                source: Source::User,
                dir: user.path().into(),
            },
        ]);
        let names: Vec<&str> = found.skills.iter().map(|f| f.skill.name()).collect();
        assert_eq!(names, ["only-user", "shared"]);
        let shared = &found.skills[1];
        assert_eq!(shared.skill.meta.description, "from the project");
        assert_eq!(shared.source, Source::Project);
        assert_eq!(found.shadowed.len(), 1);
        let warning = found.shadowed[0].to_string();
        assert!(
            warning.contains("skill `shared` of the project") && warning.contains("of the user"),
            "{warning}"
        );
    }

    #[test]
    fn an_invalid_skill_is_reported_and_the_others_still_load() {
        let root = tempfile::tempdir().unwrap();
        write_skill(root.path(), "good", "fine");
        std::fs::create_dir_all(root.path().join("bad")).unwrap();
        std::fs::write(root.path().join("bad/SKILL.md"), "---\nname: Bad\n---\n").unwrap();
        std::fs::create_dir_all(root.path().join(".hidden")).unwrap();
        std::fs::create_dir_all(root.path().join("not-a-skill")).unwrap();
        let found = discover(&[Root {
            source: Source::Flag,
            dir: root.path().into(),
        }]);
        assert_eq!(found.skills.len(), 1);
        assert_eq!(found.invalid.len(), 1);
        assert!(
            found.invalid[0].problems.len() >= 2,
            "{:?}",
            found.invalid[0].problems
        );
    }

    #[test]
    fn a_root_may_be_one_skill_and_a_missing_named_root_is_a_problem() {
        let root = tempfile::tempdir().unwrap();
        write_skill(root.path(), "solo", "alone");
        let found = discover(&[Root {
            source: Source::Flag,
            dir: root.path().join("solo"),
        }]);
        assert_eq!(found.skills[0].skill.name(), "solo");
        let missing = discover(&[
            Root {
                source: Source::Agent,
                dir: root.path().join("nowhere"),
            },
            Root {
                source: Source::User,
                dir: root.path().join("nowhere-either"),
            },
        ]);
        assert_eq!(missing.invalid.len(), 1, "only the named root must exist");
        assert!(
            missing.invalid[0].problems[0]
                .rule
                .contains("cannot read this folder")
        );
    }
}
