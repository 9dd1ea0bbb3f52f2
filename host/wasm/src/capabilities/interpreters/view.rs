//! What an interpreter sees: one tree the host assembles for each run from
//! the calling operation's own view. `/workspace` is the workspace as that
//! operation sees it (its backend's folder, with the staged changes the
//! operation sees over it, and what the run itself wrote over both),
//! `/skills/NAME` the folder of each active skill and `/packages/NAME` its
//! approved Python packages (both read-only), `/tmp` the run's own (see
//! [`super::layer`]); nothing else exists. Every file of the
//! folder is opened through a capability handle on it, so no link or `..`
//! leads out, and judged by the run's file guard on where it really is, so
//! the file rules and the run store's folder hold as they do for every
//! component. What a run may write is in [`super::writes`].

use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use cordon_kernel::{FileAccess, FileState};
use cordon_paths::RESERVED;

use super::layer::{self, Change, SharedLayer, Tree, Written};
use crate::capabilities::dirs::guard::{FileGuard, real_path};

/// A folder of read-only folders, one per active skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Shelf {
    /// `/skills`: each skill's own folder.
    Skills,
    /// `/packages`: each skill's approved Python packages.
    Packages,
}

impl Shelf {
    /// Its name under the root.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Skills => "skills",
            Self::Packages => "packages",
        }
    }
}

/// Where a node lies in the tree.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Place {
    /// `/`.
    Root,
    /// `/skills` or `/packages`.
    Shelf(Shelf),
    /// A workspace path under `/workspace` (`""` for the folder itself).
    Workspace(String),
    /// A path in skill `.1`'s folder on a shelf (`""` for the folder itself).
    OnShelf(Shelf, String, String),
    /// A path in the run's `/tmp` (`""` for the folder itself).
    Tmp(String),
}

impl Place {
    /// The place's path from the root, component by component.
    pub(crate) fn components(&self) -> Vec<String> {
        let split = |path: &str| -> Vec<String> {
            path.split('/')
                .filter(|part| !part.is_empty())
                .map(str::to_owned)
                .collect()
        };
        match self {
            Self::Root => Vec::new(),
            Self::Shelf(shelf) => vec![shelf.name().into()],
            Self::Workspace(path) => {
                let mut parts = vec!["workspace".to_owned()];
                parts.extend(split(path));
                parts
            }
            Self::OnShelf(shelf, name, path) => {
                let mut parts = vec![shelf.name().to_owned(), name.clone()];
                parts.extend(split(path));
                parts
            }
            Self::Tmp(path) => {
                let mut parts = vec!["tmp".to_owned()];
                parts.extend(split(path));
                parts
            }
        }
    }

    /// The place as an absolute path, for messages.
    pub(crate) fn shown(&self) -> String {
        format!("/{}", self.components().join("/"))
    }
}

/// The contents of a file, read on demand.
#[derive(Debug, Clone)]
pub(crate) enum Contents {
    /// A staged file, held by the host.
    Staged(Arc<[u8]>),
    /// A file of a folder, opened read-only.
    Disk(Arc<File>),
    /// A file the run wrote.
    Written(Written),
}

impl Contents {
    /// Its size in bytes.
    pub(crate) fn size(&self) -> u64 {
        match self {
            Self::Staged(bytes) => bytes.len() as u64,
            Self::Disk(file) => file.metadata().map_or(0, |meta| meta.len()),
            Self::Written(file) => layer::data(file).bytes().len() as u64,
        }
    }

    /// Up to `len` bytes from `offset`.
    pub(crate) fn read(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        match self {
            Self::Staged(bytes) => {
                let start = usize::try_from(offset)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                let end = start.saturating_add(len).min(bytes.len());
                Ok(bytes[start..end].to_vec())
            }
            Self::Disk(file) => {
                use std::os::unix::fs::FileExt;
                let len = len.min(usize::try_from(self.size().saturating_sub(offset)).unwrap_or(0));
                let mut buffer = vec![0; len];
                let mut read = 0;
                while read < len {
                    match file.read_at(&mut buffer[read..], offset + read as u64)? {
                        0 => break,
                        more => read += more,
                    }
                }
                buffer.truncate(read);
                Ok(buffer)
            }
            Self::Written(file) => {
                let data = layer::data(file);
                let bytes = data.bytes();
                let start = usize::try_from(offset)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                let end = start.saturating_add(len).min(bytes.len());
                Ok(bytes[start..end].to_vec())
            }
        }
    }
}

/// A node found in the tree.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// A directory.
    Dir(Place),
    /// A file with its contents.
    File(Place, Contents),
}

/// What a path leads to.
#[derive(Debug)]
pub(crate) enum Found {
    /// A node.
    Node(Node),
    /// Nothing is there: a plain "not found", not audited.
    Missing,
    /// A file on the way is not a directory.
    NotADirectory,
    /// Something is there that a rule refuses: an audited refusal, with why.
    Refused(String),
}

/// The workspace as the calling operation sees it.
pub(crate) struct WorkspaceView {
    /// The backend's folder, opened as a capability, and where it really is.
    pub(super) folder: Option<(Dir, PathBuf)>,
    /// What is staged over it, as the operation sees it.
    pub(super) staged: BTreeMap<String, FileState>,
    /// Whether the operation may change it.
    pub(super) writable: bool,
}

impl WorkspaceView {
    /// The folder at `folder` (canonical), if any, with `staged` over it;
    /// `writable` if the operation may change it.
    pub(crate) fn new(
        folder: Option<&std::path::Path>,
        staged: BTreeMap<String, FileState>,
        writable: bool,
    ) -> std::io::Result<Self> {
        let folder = folder
            .map(|path| {
                Dir::open_ambient_dir(path, ambient_authority()).map(|dir| (dir, path.to_owned()))
            })
            .transpose()?;
        Ok(Self {
            folder,
            staged,
            writable,
        })
    }
}

/// Read-only folders by shelf, then by skill: each opened, and where it
/// really is.
type Shelves = BTreeMap<Shelf, BTreeMap<String, (Dir, PathBuf)>>;

/// The tree one interpreter run sees.
pub(crate) struct View {
    pub(super) workspace: Option<WorkspaceView>,
    shelves: Shelves,
    pub(super) guard: Arc<FileGuard>,
    /// What the run wrote.
    pub(super) layer: SharedLayer,
}

/// Why a folder given to a view cannot be opened.
pub(crate) type OpenError = (PathBuf, std::io::Error);

impl View {
    /// A view of `workspace`, if the operation has one, and of the folders
    /// on each shelf (canonical, by skill), every file judged by `guard`.
    pub(crate) fn new(
        workspace: Option<WorkspaceView>,
        folders: &BTreeMap<Shelf, BTreeMap<String, PathBuf>>,
        guard: Arc<FileGuard>,
    ) -> Result<Self, OpenError> {
        let mut shelves = Shelves::new();
        for shelf in [Shelf::Skills, Shelf::Packages] {
            let opened = folders
                .get(&shelf)
                .into_iter()
                .flatten()
                .map(|(name, path)| {
                    Dir::open_ambient_dir(path, ambient_authority())
                        .map(|dir| (name.clone(), (dir, path.clone())))
                        .map_err(|error| (path.clone(), error))
                })
                .collect::<Result<_, _>>()?;
            shelves.insert(shelf, opened);
        }
        Ok(Self {
            workspace,
            shelves,
            guard,
            layer: SharedLayer::default(),
        })
    }

    /// What the run writes, shared with whoever takes its changes after.
    pub(crate) fn layer(&self) -> SharedLayer {
        Arc::clone(&self.layer)
    }

    /// What the path `components` (from the root, without `.` or `..`) leads to.
    pub(crate) fn find(&self, components: &[String]) -> Found {
        let parts: Vec<&str> = components.iter().map(String::as_str).collect();
        match parts.as_slice() {
            [] => Found::Node(Node::Dir(Place::Root)),
            ["workspace", rest @ ..] if self.workspace.is_some() => {
                self.in_workspace(&rest.join("/"))
            }
            ["tmp", rest @ ..] => self.in_tmp(&rest.join("/")),
            [top, rest @ ..] => match self.shelf(top) {
                Some(shelf) => match rest {
                    [] => Found::Node(Node::Dir(Place::Shelf(shelf))),
                    [name, rest @ ..] => match self.shelves[&shelf].get(*name) {
                        Some((dir, real)) => {
                            let path = rest.join("/");
                            in_folder(dir, real, &path, &self.guard, |path| {
                                Place::OnShelf(shelf, (*name).to_owned(), path)
                            })
                        }
                        None => Found::Missing,
                    },
                },
                // Nothing else is in the sandbox: a path there is a probe of
                // something that does not exist (an interpreter looks for its
                // own modules in many places), not an access to refuse.
                None => Found::Missing,
            },
        }
    }

    /// The entries of the directory at `place`, by name, each a directory
    /// (`true`) or a file.
    pub(crate) fn list(&self, place: &Place) -> Vec<(String, bool)> {
        match place {
            Place::Root => {
                let mut entries = Vec::new();
                if self.workspace.is_some() {
                    entries.push(("workspace".to_owned(), true));
                }
                entries.push(("skills".to_owned(), true));
                if !self.shelves[&Shelf::Packages].is_empty() {
                    entries.push(("packages".to_owned(), true));
                }
                entries.push(("tmp".to_owned(), true));
                entries
            }
            Place::Shelf(shelf) => self.shelves[shelf]
                .keys()
                .map(|name| (name.clone(), true))
                .collect(),
            Place::OnShelf(shelf, name, path) => match self.shelves[shelf].get(name) {
                Some((dir, real)) => listing(dir, real, path, &self.guard),
                None => Vec::new(),
            },
            Place::Workspace(path) => self.list_workspace(path),
            Place::Tmp(path) => layer::lock(&self.layer)
                .children(Tree::Tmp, path)
                .into_iter()
                .filter_map(|(name, change)| match change {
                    Change::Dir => Some((name, true)),
                    Change::File(_) => Some((name, false)),
                    Change::Gone => None,
                })
                .collect(),
        }
    }

    /// The shelf named `name` under the root: `/skills` always, `/packages`
    /// when a skill has packages.
    fn shelf(&self, name: &str) -> Option<Shelf> {
        match name {
            "skills" => Some(Shelf::Skills),
            "packages" if !self.shelves[&Shelf::Packages].is_empty() => Some(Shelf::Packages),
            _ => None,
        }
    }

    /// What `path` leads to in the run's `/tmp`.
    fn in_tmp(&self, path: &str) -> Found {
        if path.is_empty() {
            return Found::Node(Node::Dir(Place::Tmp(String::new())));
        }
        let layer = layer::lock(&self.layer);
        for (slash, _) in path.match_indices('/') {
            match layer.get(Tree::Tmp, &path[..slash]) {
                Some(Change::Dir) => {}
                Some(Change::File(_)) => return Found::NotADirectory,
                Some(Change::Gone) | None => return Found::Missing,
            }
        }
        match layer.get(Tree::Tmp, path) {
            Some(Change::Dir) => Found::Node(Node::Dir(Place::Tmp(path.to_owned()))),
            Some(Change::File(file)) => Found::Node(Node::File(
                Place::Tmp(path.to_owned()),
                Contents::Written(file),
            )),
            Some(Change::Gone) | None => Found::Missing,
        }
    }

    fn in_workspace(&self, path: &str) -> Found {
        let Some(workspace) = &self.workspace else {
            return Found::Missing;
        };
        if path == RESERVED || path.starts_with(&format!("{RESERVED}/")) {
            return Found::Missing;
        }
        {
            let layer = layer::lock(&self.layer);
            match layer.get(Tree::Workspace, path) {
                Some(Change::Gone) => return Found::Missing,
                Some(Change::Dir) => {
                    return Found::Node(Node::Dir(Place::Workspace(path.to_owned())));
                }
                Some(Change::File(file)) => {
                    return Found::Node(Node::File(
                        Place::Workspace(path.to_owned()),
                        Contents::Written(file),
                    ));
                }
                None => {}
            }
            for (slash, _) in path.match_indices('/') {
                match layer.get(Tree::Workspace, &path[..slash]) {
                    Some(Change::Gone) => return Found::Missing,
                    Some(Change::File(_)) => return Found::NotADirectory,
                    Some(Change::Dir) | None => {}
                }
            }
        }
        if let Some(state) = workspace.staged.get(path) {
            return match state {
                FileState::Absent => Found::Missing,
                FileState::Directory => Found::Node(Node::Dir(Place::Workspace(path.to_owned()))),
                FileState::File(bytes) => Found::Node(Node::File(
                    Place::Workspace(path.to_owned()),
                    Contents::Staged(Arc::clone(bytes)),
                )),
            };
        }
        for (slash, _) in path.match_indices('/') {
            match workspace.staged.get(&path[..slash]) {
                Some(FileState::Absent) => return Found::Missing,
                Some(FileState::File(_)) => return Found::NotADirectory,
                Some(FileState::Directory) | None => {}
            }
        }
        match &workspace.folder {
            Some((dir, real)) => in_folder(dir, real, path, &self.guard, Place::Workspace),
            None if path.is_empty() => Found::Node(Node::Dir(Place::Workspace(String::new()))),
            None => Found::Missing,
        }
    }

    fn list_workspace(&self, path: &str) -> Vec<(String, bool)> {
        let Some(workspace) = &self.workspace else {
            return Vec::new();
        };
        let mut entries: BTreeMap<String, bool> = match &workspace.folder {
            Some((dir, real)) => listing(dir, real, path, &self.guard).into_iter().collect(),
            None => BTreeMap::new(),
        };
        if path.is_empty() {
            entries.remove(RESERVED);
        }
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        for (staged, state) in workspace.staged.range(prefix.clone()..) {
            let Some(rest) = staged.strip_prefix(&prefix) else {
                break;
            };
            if rest.is_empty() || rest.contains('/') {
                continue;
            }
            match state {
                FileState::Absent => {
                    entries.remove(rest);
                }
                FileState::Directory => {
                    entries.insert(rest.to_owned(), true);
                }
                FileState::File(_) => {
                    entries.insert(rest.to_owned(), false);
                }
            }
        }
        for (name, change) in layer::lock(&self.layer).children(Tree::Workspace, path) {
            match change {
                Change::Gone => {
                    entries.remove(&name);
                }
                Change::Dir => {
                    entries.insert(name, true);
                }
                Change::File(_) => {
                    entries.insert(name, false);
                }
            }
        }
        entries.into_iter().collect()
    }
}

/// What `path` leads to in the folder `dir`, really at `real`, each file and
/// directory judged by `guard` on where it really is.
fn in_folder(
    dir: &Dir,
    real: &std::path::Path,
    path: &str,
    guard: &FileGuard,
    place: impl Fn(String) -> Place,
) -> Found {
    let here = if path.is_empty() { "." } else { path };
    let meta = match dir.metadata(here) {
        Ok(meta) => meta,
        Err(error) => {
            return match error.kind() {
                std::io::ErrorKind::NotADirectory => Found::NotADirectory,
                std::io::ErrorKind::PermissionDenied => {
                    Found::Refused(format!("{path}: the folder's capability refuses it"))
                }
                _ => Found::Missing,
            };
        }
    };
    if meta.is_dir() {
        let judged = if path.is_empty() {
            guard.check(real, FileAccess::Read)
        } else {
            guard.check(&real.join(path), FileAccess::Read)
        };
        return match judged {
            Ok(()) => Found::Node(Node::Dir(place(path.to_owned()))),
            Err(refused) => Found::Refused(refused.0),
        };
    }
    if !meta.is_file() {
        return Found::Missing;
    }
    let file = match dir.open(here) {
        Ok(file) => file.into_std(),
        Err(_) => return Found::Missing,
    };
    let judged = real_path(&file)
        .map_err(|error| format!("{path}: cannot tell where it is: {error}"))
        .and_then(|at| {
            guard
                .check(&at, FileAccess::Read)
                .map_err(|refused| refused.0)
        });
    match judged {
        Ok(()) => Found::Node(Node::File(
            place(path.to_owned()),
            Contents::Disk(Arc::new(file)),
        )),
        Err(reason) => Found::Refused(reason),
    }
}

/// The entries of the directory `path` of the folder `dir`, really at
/// `real`, leaving out what `guard` hides; each a directory (`true`) or not.
fn listing(
    dir: &Dir,
    real: &std::path::Path,
    path: &str,
    guard: &FileGuard,
) -> Vec<(String, bool)> {
    let here = if path.is_empty() { "." } else { path };
    let Ok(entries) = dir.read_dir(here) else {
        return Vec::new();
    };
    let base = if path.is_empty() {
        real.to_owned()
    } else {
        real.join(path)
    };
    let mut found: Vec<(String, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if guard.hides(&base.join(&name)) {
                return None;
            }
            let is_dir = entry.file_type().ok()?.is_dir()
                || dir
                    .metadata(format!("{here}/{name}"))
                    .is_ok_and(|meta| meta.is_dir());
            Some((name, is_dir))
        })
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_kernel::FileRules;

    fn view(
        root: &std::path::Path,
        skill: &std::path::Path,
        staged: BTreeMap<String, FileState>,
    ) -> View {
        let guard = Arc::new(
            FileGuard::new(
                &root.canonicalize().unwrap(),
                &[],
                FileRules::new().with(&["**/.env"], &[]).unwrap(),
            )
            .with_read_only(&[skill.to_owned()], crate::safeguards::ReadOnly::Skill),
        );
        let workspace =
            WorkspaceView::new(Some(&root.canonicalize().unwrap()), staged, true).unwrap();
        View::new(
            Some(workspace),
            &BTreeMap::from([(
                Shelf::Skills,
                BTreeMap::from([("report".to_owned(), skill.canonicalize().unwrap())]),
            )]),
            guard,
        )
        .unwrap()
    }

    fn parts(path: &str) -> Vec<String> {
        path.split('/')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect()
    }

    fn text(found: Found) -> String {
        match found {
            Found::Node(Node::File(_, contents)) => {
                String::from_utf8(contents.read(0, 1 << 20).unwrap()).unwrap()
            }
            other => panic!("not a file: {other:?}"),
        }
    }

    #[test]
    fn the_workspace_shows_its_staged_changes_over_its_folder() {
        let root = tempfile::tempdir().unwrap();
        let skill = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "on disk").unwrap();
        std::fs::write(root.path().join("gone.txt"), "removed").unwrap();
        std::fs::write(root.path().join(".env"), "SECRET").unwrap();
        std::fs::create_dir(root.path().join(".cordon")).unwrap();
        std::fs::write(skill.path().join("SKILL.md"), "skill").unwrap();
        let staged = BTreeMap::from([
            (
                "a.txt".to_owned(),
                FileState::File(Arc::from(&b"staged"[..])),
            ),
            (
                "new/b.txt".to_owned(),
                FileState::File(Arc::from(&b"new"[..])),
            ),
            ("new".to_owned(), FileState::Directory),
            ("gone.txt".to_owned(), FileState::Absent),
        ]);
        let view = view(root.path(), skill.path(), staged);
        assert_eq!(text(view.find(&parts("workspace/a.txt"))), "staged");
        assert_eq!(text(view.find(&parts("workspace/new/b.txt"))), "new");
        assert!(matches!(
            view.find(&parts("workspace/gone.txt")),
            Found::Missing
        ));
        assert!(matches!(
            view.find(&parts("workspace/.env")),
            Found::Refused(_)
        ));
        assert!(matches!(
            view.find(&parts("workspace/.cordon")),
            Found::Missing
        ));
        assert_eq!(text(view.find(&parts("skills/report/SKILL.md"))), "skill");
        assert!(matches!(view.find(&parts("etc/passwd")), Found::Missing));
        assert!(matches!(
            view.find(&parts("skills/other/x")),
            Found::Missing
        ));
        let names: Vec<String> = view
            .list(&Place::Workspace(String::new()))
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["a.txt", "new"]);
        assert_eq!(view.list(&Place::Root).len(), 3);
    }

    #[test]
    fn writes_keep_what_the_view_hides_and_bytes_stay_charged_while_held() {
        use super::super::writes::{Open, WriteError};
        let root = tempfile::tempdir().unwrap();
        let skill = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("config")).unwrap();
        std::fs::write(root.path().join("config/.env"), "SECRET").unwrap();
        std::fs::write(root.path().join("notes.txt"), "kept").unwrap();
        let view = view(root.path(), skill.path(), BTreeMap::new());
        assert!(
            matches!(
                view.remove(&parts("workspace/config"), true),
                Err(WriteError::NotEmpty)
            ),
            "a directory holding only what the guard hides is not empty"
        );
        view.rename(&parts("workspace/notes.txt"), &parts("workspace/notes.txt"))
            .unwrap();
        assert_eq!(text(view.find(&parts("workspace/notes.txt"))), "kept");
        let create = Open {
            create: true,
            ..Open::default()
        };
        let (_, held) = view.open_written(&parts("tmp/big"), create).unwrap();
        layer::data(&held).set_len(40 << 20).unwrap();
        view.remove(&parts("tmp/big"), false).unwrap();
        let (_, other) = view.open_written(&parts("tmp/other"), create).unwrap();
        assert!(
            layer::data(&other).set_len(40 << 20).is_err(),
            "a removed file still held by a descriptor keeps its bytes charged"
        );
        drop(held);
        layer::data(&other).set_len(40 << 20).unwrap();
        assert!(
            matches!(
                view.open_written(&parts("tmp/a\u{1b}b"), create),
                Err(WriteError::Denied(_))
            ),
            "a control character is refused"
        );
        let long = format!("tmp/{}", "a".repeat(300));
        assert!(matches!(
            view.open_written(&parts(&long), create),
            Err(WriteError::NameTooLong)
        ));
    }

    #[test]
    fn a_link_out_of_the_folder_leads_nowhere() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let skill = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("link"))
            .unwrap();
        let view = view(root.path(), skill.path(), BTreeMap::new());
        assert!(!matches!(
            view.find(&parts("workspace/link")),
            Found::Node(_)
        ));
    }
}
