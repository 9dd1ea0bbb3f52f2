//! One skill folder: its SKILL.md read, split and checked, its fingerprint
//! (the SHA-256 of SKILL.md, which an activation records), and the files it
//! holds, listed on activation but never read for the model.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::frontmatter;
use crate::meta::{self, SkillMeta};
use crate::packages::requirements;
use crate::problem::Problem;

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// The folder of a skill holding the tool bundles it ships.
pub const TOOLS_DIR: &str = "tools";
/// The largest SKILL.md read.
pub const MAX_SKILL_FILE: u64 = 1 << 20;
/// How many of a skill's files an activation lists.
pub const MAX_LISTED: usize = 200;

/// A valid skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its frontmatter.
    pub meta: SkillMeta,
    /// The Markdown body: the instructions an activation returns.
    pub body: String,
    /// The skill's folder, canonical.
    pub folder: PathBuf,
    /// SHA-256 of its SKILL.md, lowercase hex.
    pub fingerprint: String,
}

/// What is wrong with the pins of the skill in `folder`, whose SKILL.md's
/// `metadata` is `metadata`: a warning, since the skill loads, but its
/// packages cannot be approved until it is fixed.
fn requirements_problem(folder: &Path, metadata: &BTreeMap<String, String>) -> Option<Problem> {
    let error = requirements::read_with(folder, metadata).err()?;
    Some(Problem::tolerated_file(
        error.file(),
        format!(
            "{}; its packages cannot be approved until it is fixed",
            error.rule()
        ),
    ))
}

impl Skill {
    /// The skill in `folder`, or every rule it breaks.
    pub fn load(folder: &Path) -> Result<Self, Vec<Problem>> {
        let file = folder.join(SKILL_FILE);
        let real = folder.canonicalize().map_err(|error| {
            vec![Problem::file(
                folder,
                format!("cannot open the skill's folder: {error}"),
            )]
        })?;
        // The folder's name as found: a skill linked in under its own name
        // keeps that name.
        let name = folder
            .file_name()
            .or_else(|| real.file_name())
            .and_then(|name| name.to_str())
            .unwrap_or_default()
            .to_owned();
        let size = std::fs::metadata(&file)
            .map_err(|error| vec![Problem::file(&file, format!("cannot read: {error}"))])?
            .len();
        if size > MAX_SKILL_FILE {
            return Err(vec![Problem::file(
                &file,
                format!("is {size} bytes; a SKILL.md holds at most {MAX_SKILL_FILE} bytes"),
            )]);
        }
        let bytes = std::fs::read(&file)
            .map_err(|error| vec![Problem::file(&file, format!("cannot read: {error}"))])?;
        let text = String::from_utf8(bytes.clone())
            .map_err(|_| vec![Problem::file(&file, "is not UTF-8 text")])?;
        let split = frontmatter::split(&text).map_err(|rule| vec![Problem::file(&file, rule)])?;
        let fields =
            frontmatter::mapping(split.yaml).map_err(|rule| vec![Problem::file(&file, rule)])?;
        let mut meta = meta::check(&file, &name, &fields)?;
        let problem = requirements_problem(folder, &meta.metadata);
        meta.warnings.extend(problem);
        Ok(Self {
            meta,
            body: split.body.to_owned(),
            folder: real,
            fingerprint: hex::encode(Sha256::digest(&bytes)),
        })
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.meta.name
    }

    /// The folder of tool bundles the skill ships, if it has one.
    pub fn tools_dir(&self) -> Option<PathBuf> {
        let dir = self.folder.join(TOOLS_DIR);
        dir.is_dir().then_some(dir)
    }

    /// The skill's files other than SKILL.md, relative to its folder and in
    /// path order, at most [`MAX_LISTED`] of them, and how many more there
    /// are. Hidden files and folders, symbolic links and the tool bundles
    /// under `tools/` (offered as tools instead) are left out.
    pub fn files(&self) -> (Vec<String>, usize) {
        let mut found = Vec::new();
        collect(&self.folder, "", &mut found);
        found.retain(|path| path != SKILL_FILE && !path.starts_with(&format!("{TOOLS_DIR}/")));
        found.sort();
        let more = found.len().saturating_sub(MAX_LISTED);
        found.truncate(MAX_LISTED);
        (found, more)
    }
}

/// Append the files beneath `dir` (whose path relative to the skill is
/// `prefix`) to `out`, bounded so a huge tree cannot stall activation.
fn collect(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    const MAX_SEEN: usize = 10_000;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        if out.len() >= MAX_SEEN {
            return;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if kind.is_dir() {
            collect(&entry.path(), &path, out);
        } else if kind.is_file() {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill_folder(root: &Path, name: &str, text: &str) -> PathBuf {
        let folder = root.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(SKILL_FILE), text).unwrap();
        folder
    }

    #[test]
    fn a_skill_is_read_with_its_body_fingerprint_and_files() {
        let root = tempfile::tempdir().unwrap();
        let folder = skill_folder(
            root.path(),
            "report",
            "---\nname: report\ndescription: Make a report.\n---\n# Report\nRun the script.\n",
        );
        std::fs::create_dir_all(folder.join("scripts")).unwrap();
        std::fs::write(folder.join("scripts/run.py"), "print(1)").unwrap();
        std::fs::write(folder.join(".hidden"), "").unwrap();
        std::fs::create_dir_all(folder.join("tools/t")).unwrap();
        std::fs::write(folder.join("tools/t/plugin.toml"), "").unwrap();
        let skill = Skill::load(&folder).unwrap();
        assert_eq!(skill.name(), "report");
        assert_eq!(skill.body, "# Report\nRun the script.\n");
        assert_eq!(skill.fingerprint.len(), 64);
        assert_eq!(skill.files(), (vec!["scripts/run.py".to_owned()], 0));
        assert_eq!(skill.tools_dir(), Some(skill.folder.join("tools")));
        std::fs::write(
            folder.join(SKILL_FILE),
            "---\nname: report\ndescription: Make a report!\n---\n",
        )
        .unwrap();
        assert_ne!(Skill::load(&folder).unwrap().fingerprint, skill.fingerprint);
    }

    #[test]
    fn a_folder_without_a_readable_skill_file_says_why() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("empty")).unwrap();
        let problems = Skill::load(&root.path().join("empty")).unwrap_err();
        assert!(
            problems[0].to_string().contains("SKILL.md: cannot read"),
            "{problems:?}"
        );
        let folder = skill_folder(root.path(), "plain", "# just markdown\n");
        let problems = Skill::load(&folder).unwrap_err();
        assert!(problems[0].rule.contains("`---`"), "{problems:?}");
        let big = skill_folder(
            root.path(),
            "big",
            &"x".repeat((MAX_SKILL_FILE + 1) as usize),
        );
        assert!(Skill::load(&big).unwrap_err()[0].rule.contains("at most"));
    }

    #[test]
    fn pins_that_cannot_be_approved_load_the_skill_with_a_warning_on_their_file() {
        let root = tempfile::tempdir().unwrap();
        let folder = skill_folder(
            root.path(),
            "pdf",
            "---\nname: pdf\ndescription: d\nmetadata:\n  python-requirements: pypdf>=5\n---\n",
        );
        let skill = Skill::load(&folder).unwrap();
        let warnings: Vec<_> = skill
            .meta
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            warnings.iter().any(|warning| warning.contains("SKILL.md")
                && warning
                    .contains("`metadata.python-requirements`: `pypdf>=5` is not an exact pin")),
            "{warnings:?}"
        );
        std::fs::write(
            folder.join(SKILL_FILE),
            "---\nname: pdf\ndescription: d\nmetadata:\n  python-requirements: pypdf==5.1.0\n---\n",
        )
        .unwrap();
        std::fs::write(folder.join("requirements.txt"), "pypdf==4.0\n").unwrap();
        let warnings: Vec<_> = Skill::load(&folder)
            .unwrap()
            .meta
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            warnings
                .iter()
                .any(|warning| warning.contains("pins pypdf==5.1.0, but")),
            "{warnings:?}"
        );
    }
}
