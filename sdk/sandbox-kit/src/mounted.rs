//! [`Mounted`]: a workspace file system with the folders of the run's active
//! skills beside it, read-only, at `/skills/NAME`. A path there is read from
//! the skill's folder, which the host preopens read-only at exactly that
//! guest path; every other path goes to the workspace. Nothing under
//! `/skills` can be written, removed or moved, and nothing can be moved or
//! copied into it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::base::Base;
use crate::dir_base::DirBase;
use crate::error::{Error, Result};
use crate::fs::{FileSystem, Meta, Node, Prune};
use crate::path::mount_of;

/// Where the skills' folders are.
#[derive(Debug, Clone)]
enum Roots {
    /// At their guest paths, as a component sees them.
    Guest,
    /// In these folders, by skill (native tests).
    Folders(BTreeMap<String, PathBuf>),
}

/// A workspace file system with the active skills' folders mounted beside it.
#[derive(Debug)]
pub struct Mounted<F> {
    workspace: F,
    roots: Roots,
}

impl<F: FileSystem> Mounted<F> {
    /// `workspace`, with each skill's folder at its guest path `/skills/NAME`,
    /// as the host preopens it for a component.
    pub fn new(workspace: F) -> Self {
        Self {
            workspace,
            roots: Roots::Guest,
        }
    }

    /// `workspace`, with the folder of each skill in `folders` mounted at
    /// `/skills/NAME`.
    pub fn with_folders(workspace: F, folders: BTreeMap<String, PathBuf>) -> Self {
        Self {
            workspace,
            roots: Roots::Folders(folders),
        }
    }

    /// The skill folder holding the mounted path `path` as a base of its
    /// own, and the path inside it; `None` for a workspace path.
    fn mount<'p>(&self, path: &'p str) -> Option<Result<(DirBase, &'p str, String)>> {
        let (skill, inner) = mount_of(path)?;
        let root = match &self.roots {
            Roots::Guest => PathBuf::from(format!("{}/{skill}", crate::path::SKILLS_ROOT)),
            Roots::Folders(folders) => match folders.get(skill) {
                Some(folder) => folder.clone(),
                None => return Some(Err(Error::not_found(path))),
            },
        };
        let prefix = format!("{}/{skill}", crate::path::SKILLS_ROOT);
        Some(Ok((DirBase::new(root), inner, prefix)))
    }

    fn read_only(path: &str) -> Error {
        Error::Denied(format!(
            "{path}: a skill's folder is read-only; write in the workspace instead"
        ))
    }

    /// Refuse a change to `path` when it is in a skill's folder.
    fn writable(path: &str) -> Result<()> {
        match mount_of(path) {
            Some(_) => Err(Self::read_only(path)),
            None => Ok(()),
        }
    }
}

/// `inner`, a path inside a mounted folder, as a mounted path under `prefix`.
fn under(prefix: &str, inner: &str) -> String {
    if inner.is_empty() {
        prefix.to_owned()
    } else {
        format!("{prefix}/{inner}")
    }
}

impl<F: FileSystem> FileSystem for Mounted<F> {
    fn meta(&self, path: &str) -> Result<Option<Meta>> {
        match self.mount(path) {
            None => self.workspace.meta(path),
            Some(mount) => {
                let (base, inner, _) = mount?;
                base.meta(inner)
            }
        }
    }

    fn read(&self, path: &str) -> Result<Vec<u8>> {
        match self.mount(path) {
            None => self.workspace.read(path),
            Some(mount) => {
                let (base, inner, _) = mount?;
                let mut data = Vec::new();
                base.read_into(inner, &mut data)?;
                Ok(data)
            }
        }
    }

    fn list(&self, dir: &str) -> Result<Vec<(String, Meta)>> {
        match self.mount(dir) {
            None => self.workspace.list(dir),
            Some(mount) => {
                let (base, inner, _) = mount?;
                base.list(inner)
            }
        }
    }

    fn walk(&self, dir: &str, prune: Prune) -> Result<Vec<Node>> {
        match self.mount(dir) {
            None => self.workspace.walk(dir, prune),
            Some(mount) => {
                let (base, inner, prefix) = mount?;
                let mut nodes = Vec::new();
                base.walk(inner, prune, &mut nodes)?;
                Ok(nodes
                    .into_iter()
                    .map(|node| Node::base(under(&prefix, &node.path), node.meta))
                    .collect())
            }
        }
    }

    fn contents<'a>(&self, node: &'a Node, buf: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        match self.mount(&node.path) {
            None => self.workspace.contents(node, buf),
            Some(mount) => {
                let (base, inner, _) = mount?;
                base.read_into(inner, buf)?;
                Ok(buf)
            }
        }
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        Self::writable(path)?;
        self.workspace.write(path, data)
    }

    fn create_dir(&self, path: &str) -> Result<()> {
        Self::writable(path)?;
        self.workspace.create_dir(path)
    }

    fn remove(&self, path: &str) -> Result<()> {
        Self::writable(path)?;
        self.workspace.remove(path)
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        Self::writable(from)?;
        Self::writable(to)?;
        self.workspace.rename(from, to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EmptyBase, MemoryStaging, Overlay};

    fn mounted() -> (
        tempfile::TempDir,
        Mounted<Overlay<EmptyBase, MemoryStaging>>,
    ) {
        let skill = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(skill.path().join("references")).unwrap();
        std::fs::write(skill.path().join("SKILL.md"), "---\nname: report\n---\n").unwrap();
        std::fs::write(skill.path().join("references/format.md"), "columns").unwrap();
        let fs = Mounted::with_folders(
            Overlay::new(EmptyBase, MemoryStaging::new()),
            BTreeMap::from([("report".to_owned(), skill.path().to_owned())]),
        );
        (skill, fs)
    }

    #[test]
    fn a_skill_folder_reads_beside_the_workspace() {
        let (_skill, fs) = mounted();
        fs.write("notes.txt", b"mine").unwrap();
        assert_eq!(
            fs.read("/skills/report/references/format.md").unwrap(),
            b"columns"
        );
        assert_eq!(fs.read("notes.txt").unwrap(), b"mine");
        let names: Vec<String> = fs
            .list("/skills/report")
            .unwrap()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["SKILL.md", "references"]);
        let walked: Vec<String> = fs
            .walk("/skills/report", Prune::Nothing)
            .unwrap()
            .into_iter()
            .map(|node| node.path)
            .collect();
        assert_eq!(
            walked,
            [
                "/skills/report/SKILL.md",
                "/skills/report/references",
                "/skills/report/references/format.md"
            ]
        );
        assert!(matches!(
            fs.meta("/skills/other/x"),
            Err(Error::NotFound(_))
        ));
    }

    #[test]
    fn nothing_in_a_skill_folder_can_change() {
        let (skill, fs) = mounted();
        for refused in [
            fs.write("/skills/report/x", b"x"),
            fs.create_dir("/skills/report/d"),
            fs.remove("/skills/report/SKILL.md"),
            fs.rename("/skills/report/SKILL.md", "stolen.md"),
            fs.rename("notes.txt", "/skills/report/notes.txt"),
        ] {
            assert!(
                matches!(refused, Err(Error::Denied(message)) if message.contains("read-only"))
            );
        }
        assert!(skill.path().join("SKILL.md").exists());
    }
}
