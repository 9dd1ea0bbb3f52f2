//! Whether a component may touch a file, judged by where the file really is.
//!
//! cap-std already keeps every component inside its granted directories. The
//! guard adds what a grant cannot say: the run store's folder, the
//! operator's files and the compile cache are out of reach even inside a
//! granted directory; a `.cordon` folder at any depth of the workspace is
//! never created, changed, linked or removed; the plugins folders Cordon
//! loads bundles from and the run's skills' folders are read-only; and the
//! run's file rules ([`FileRules`]) hold for every component alike. It judges *real* paths, read from the
//! open handle the kernel gave back (`/proc/self/fd` on Linux), so a symbolic
//! link, a `..` detour or a hard link gains nothing; the path a component
//! wrote is judged too, so a link named like a denied file is refused as well.
//! Only the host holds a guard; the guarded filesystem over WASI applies it
//! to every path a component hands WASI, and the staging import to every staged path.

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use cordon_kernel::{FileAccess, FileRules};
use cordon_paths::RESERVED;

use super::reserved::{Holds, ReadOnly, Reserved};

/// What no component of a run reaches, and the rules every one obeys.
#[derive(Debug, Clone)]
pub(crate) struct FileGuard {
    /// The workspace root, canonical: rules name paths relative to it.
    root: PathBuf,
    /// What no component reaches, canonical, with everything beneath it and
    /// what it holds: the root's [`RESERVED`] folder, the run store's folder
    /// (or, for a store in the root itself, its files), the operator's files
    /// and the compile cache.
    reserved: Vec<(PathBuf, Holds)>,
    rules: FileRules,
    /// What may be read and never changed, canonical, with everything
    /// beneath it: the plugins folders and the run's skills' folders,
    /// outside the workspace's rules.
    read_only: Vec<(PathBuf, ReadOnly)>,
}

/// Which file a path names, as the file system identifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    /// How many names the file has.
    pub(crate) links: u64,
    pub(crate) is_dir: bool,
}

impl Identity {
    /// The identity `meta` describes.
    pub(crate) fn of(meta: &cap_primitives::fs::Metadata) -> Self {
        use cap_primitives::fs::MetadataExt;
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            links: meta.nlink(),
            is_dir: meta.is_dir(),
        }
    }

    /// The identity the standard library's `meta` describes.
    pub(crate) fn of_std(meta: &Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            links: meta.nlink(),
            is_dir: meta.is_dir(),
        }
    }
}

/// Why the guard refused an access, for the audit trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused(pub(crate) String);

impl FileGuard {
    /// This guard obeying `more` rules too: a sub-agent's call's.
    pub(crate) fn narrowed(&self, more: &FileRules) -> Self {
        Self {
            rules: self.rules.clone().union(more),
            ..self.clone()
        }
    }

    /// A guard for components whose grants lie under `root` (canonical),
    /// keeping them out of `reserved` (folders or files) besides the root's
    /// own `.cordon`.
    pub(crate) fn new(root: &Path, reserved: &[Reserved], rules: FileRules) -> Self {
        let own = root.join(RESERVED);
        let mut folders = vec![(own.clone(), Holds::CordonFolder)];
        folders.extend(
            own.canonicalize()
                .ok()
                .map(|real| (real, Holds::CordonFolder)),
        );
        folders.extend(reserved.iter().map(|reserved| {
            let path = &reserved.path;
            (Self::resolved(path), reserved.holds)
        }));
        folders.sort();
        folders.dedup_by(|a, b| a.0 == b.0);
        Self {
            root: root.to_owned(),
            reserved: folders,
            rules,
            read_only: Vec::new(),
        }
    }

    /// This guard, letting `folders` be read and never changed, whatever
    /// the rules of the workspace say.
    pub(crate) fn with_read_only(mut self, folders: &[PathBuf], kind: ReadOnly) -> Self {
        self.read_only
            .extend(folders.iter().map(|folder| (Self::resolved(folder), kind)));
        self
    }

    /// Whether `access` to what is now at the real path `real` is allowed.
    pub(crate) fn check(&self, real: &Path, access: FileAccess) -> Result<(), Refused> {
        if let Some((folder, holds)) = self
            .reserved
            .iter()
            .find(|(folder, _)| real.starts_with(folder))
        {
            return Err(Refused(format!(
                "{} holds {holds}; no component reaches it",
                folder.display()
            )));
        }
        if access == FileAccess::Write
            && let Some(folder) = self.operator_folder(real)
        {
            return Err(Refused(format!(
                "{} is a `{RESERVED}` folder, which holds Cordon's operator files; no component creates, changes, links or removes one or anything in it",
                folder.display()
            )));
        }
        if let Some((folder, kind)) = self
            .read_only
            .iter()
            .find(|(folder, _)| real.starts_with(folder))
        {
            return match access {
                FileAccess::Read => Ok(()),
                FileAccess::Write => Err(Refused(format!(
                    "{} is {kind}, which is read-only",
                    folder.display()
                ))),
            };
        }
        if self.rules.is_empty() {
            return Ok(());
        }
        let Ok(relative) = real.strip_prefix(&self.root) else {
            return Err(Refused(format!(
                "{} is outside the workspace {}",
                real.display(),
                self.root.display()
            )));
        };
        self.rules
            .check(&relative.to_string_lossy(), access)
            .map_err(|refusal| Refused(refusal.to_string()))
    }

    /// Whether `access` is allowed both to what `written` names lexically in
    /// the directory whose real path is `dir` and, when `real` is known, to
    /// where it really leads.
    pub(crate) fn check_both(
        &self,
        dir: &Path,
        written: &str,
        real: Option<&Path>,
        access: FileAccess,
    ) -> Result<(), Refused> {
        if access == FileAccess::Write && written.chars().any(char::is_control) {
            return Err(Refused(format!(
                "{written:?} holds a control character; no file is created or changed under such a name"
            )));
        }
        let as_written = lexical(dir, written);
        self.check(&as_written, access)?;
        match real {
            Some(real) if real != as_written => self.check(real, access),
            _ => Ok(()),
        }
    }

    /// The workspace root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `access` is allowed to everything at and beneath the real path
    /// `real`: what moving a directory would carry along.
    pub(crate) fn check_tree(&self, real: &Path, access: FileAccess) -> Result<(), Refused> {
        self.check(real, access)?;
        let inside = |folder: &PathBuf| folder.starts_with(real);
        if let Some(folder) = self
            .reserved
            .iter()
            .map(|(folder, _)| folder)
            .chain(self.read_only.iter().map(|(folder, _)| folder))
            .find(|folder| inside(folder))
        {
            return Err(Refused(format!(
                "it holds {}, which no component changes",
                folder.display()
            )));
        }
        let operator_folders = access == FileAccess::Write && self.inside(real);
        if (self.rules.is_empty() && !operator_folders) || !real.is_dir() {
            return Ok(());
        }
        walkdir::WalkDir::new(real)
            .follow_links(false)
            .into_iter()
            .filter_map(Result::ok)
            .try_for_each(|entry| self.check(entry.path(), access))
    }

    /// The `.cordon` folder the real path `real` lies in, at any depth of
    /// the workspace, when it lies in one.
    fn operator_folder(&self, real: &Path) -> Option<PathBuf> {
        let relative = real.strip_prefix(&self.root).ok()?;
        let mut folder = self.root.clone();
        for part in relative.components() {
            folder.push(part);
            if part.as_os_str() == RESERVED {
                return Some(folder);
            }
        }
        None
    }

    /// Whether listings leave out what is at the real path `path`.
    pub(crate) fn hides(&self, path: &Path) -> bool {
        self.reserved
            .iter()
            .any(|(folder, _)| path.starts_with(folder))
            || (!self.rules.is_empty()
                && path
                    .strip_prefix(&self.root)
                    .is_ok_and(|relative| self.rules.hides(&relative.to_string_lossy())))
    }

    /// The device and inode of every file of a reserved folder that has
    /// another name somewhere: what a listing must leave out wherever it
    /// meets them. Usually none.
    pub(crate) fn linked_files(&self) -> Vec<(u64, u64)> {
        let mut files = Vec::new();
        for (reserved, _) in &self.reserved {
            match std::fs::read_dir(reserved) {
                Ok(entries) => files.extend(
                    entries
                        .filter_map(Result::ok)
                        .filter_map(|entry| entry.metadata().ok()),
                ),
                Err(_) => files.extend(std::fs::symlink_metadata(reserved).ok()),
            }
        }
        files
            .into_iter()
            .filter(|meta| meta.is_file() && meta.nlink() > 1)
            .map(|meta| (meta.dev(), meta.ino()))
            .collect()
    }

    /// Where the real path `path` leads once every link on it that exists
    /// is followed: the canonical form of its longest existing part, with the
    /// rest appended.
    pub(crate) fn resolved(path: &Path) -> PathBuf {
        let mut existing = path;
        let mut rest = Vec::new();
        loop {
            if let Ok(real) = existing.canonicalize() {
                return rest
                    .iter()
                    .rev()
                    .fold(real, |joined, part| joined.join(part));
            }
            match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_owned());
                    existing = parent;
                }
                _ => return path.to_owned(),
            }
        }
    }

    /// Where a symbolic link at `link` (a real path) whose text is `target`
    /// leads, lexically; `None` when the text is absolute.
    pub(crate) fn link_target(link: &Path, target: &str) -> Option<PathBuf> {
        if target.starts_with('/') {
            return None;
        }
        Some(lexical(link.parent().unwrap_or(link), target))
    }

    /// Whether `real` lies inside the workspace root.
    pub(crate) fn inside(&self, real: &Path) -> bool {
        real.starts_with(&self.root)
    }
}

/// `path` as written, applied to the real directory `dir` without touching
/// the file system: `.` dropped, `..` taking off one component.
fn lexical(dir: &Path, path: &str) -> PathBuf {
    let mut joined = dir.to_owned();
    for part in Path::new(path).components() {
        match part {
            Component::ParentDir => {
                joined.pop();
            }
            Component::Normal(name) => joined.push(name),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    joined
}

/// The real path of the open file or directory `file`, as the kernel knows it.
pub(crate) fn real_path(file: &File) -> io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let proc = rustix_linux_procfs::proc_self_fd()?;
        let link = rustix::fs::readlinkat(proc, file.as_raw_fd().to_string(), Vec::new())?;
        let path = PathBuf::from(
            <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(link.into_bytes()),
        );
        if !path.is_absolute() {
            return Err(io::Error::other(format!(
                "the handle is not a file of the file system: {}",
                path.display()
            )));
        }
        Ok(path)
    }
    #[cfg(target_os = "macos")]
    {
        let path = rustix::fs::getpath(file)?;
        Ok(PathBuf::from(
            <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(path.into_bytes()),
        ))
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = file;
        Err(io::Error::other(
            "cannot tell where an open file is on this platform",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(root: &Path, deny: &[&str], read_only: &[&str]) -> FileGuard {
        FileGuard::new(root, &[], FileRules::new().with(deny, read_only).unwrap())
    }

    #[test]
    fn the_store_folder_is_refused_whatever_the_rules() {
        let root = Path::new("/w");
        let guard = guard(root, &[], &[]);
        for path in ["/w/.cordon", "/w/.cordon/cordon.db"] {
            assert!(
                guard.check(Path::new(path), FileAccess::Read).is_err(),
                "{path}"
            );
        }
        assert!(guard.hides(&root.join(".cordon")));
        assert!(!guard.hides(&root.join("src")));
    }

    #[test]
    fn a_cordon_folder_at_any_depth_is_read_and_never_changed() {
        let guard = guard(Path::new("/w"), &[], &[]);
        for path in [
            "/w/src/.cordon",
            "/w/sub/.cordon/grants.toml",
            "/w/a/b/.cordon/config.toml",
            "/w/a/b/.cordon/plugins/evil/plugin.toml",
        ] {
            let refused = guard.check(Path::new(path), FileAccess::Write).unwrap_err();
            assert!(refused.0.contains("operator files"), "{path}: {refused:?}");
            assert!(
                guard.check(Path::new(path), FileAccess::Read).is_ok(),
                "{path}"
            );
        }
        let refused = guard
            .check_both(Path::new("/w/a"), "b/../.cordon/x", None, FileAccess::Write)
            .unwrap_err();
        assert!(refused.0.contains("/w/a/.cordon "), "{refused:?}");
        for fine in ["/w/src/cordon", "/w/src/.cordon.bak", "/w/x.cordon"] {
            assert!(
                guard.check(Path::new(fine), FileAccess::Write).is_ok(),
                "{fine}"
            );
        }
        assert!(
            guard
                .check(Path::new("/elsewhere/.cordon/x"), FileAccess::Write)
                .is_ok(),
            "only the workspace's folders are the guard's to judge by name"
        );
    }

    #[test]
    fn reserved_and_read_only_places_say_what_they_hold() {
        let guard = FileGuard::new(
            Path::new("/w"),
            &[
                Reserved::new("/w/ops/grants.toml", Holds::OperatorFiles),
                Reserved::new("/w/cache", Holds::CompileCache),
            ],
            FileRules::new(),
        )
        .with_read_only(&[PathBuf::from("/w/plugins")], ReadOnly::Plugins);
        let refused = guard
            .check(Path::new("/w/ops/grants.toml"), FileAccess::Read)
            .unwrap_err();
        assert!(
            refused.0.contains("operator's Cordon config or approvals"),
            "{refused:?}"
        );
        let refused = guard
            .check(Path::new("/w/cache/x.cwasm"), FileAccess::Read)
            .unwrap_err();
        assert!(refused.0.contains("compiled components"), "{refused:?}");
        assert!(
            guard
                .check(Path::new("/w/plugins/guard/plugin.toml"), FileAccess::Read)
                .is_ok()
        );
        let refused = guard
            .check(Path::new("/w/plugins/guard/plugin.toml"), FileAccess::Write)
            .unwrap_err();
        assert!(refused.0.contains("plugins folder"), "{refused:?}");
        let refused = guard
            .check_tree(Path::new("/w"), FileAccess::Write)
            .unwrap_err();
        assert!(
            refused.0.contains("which no component changes"),
            "{refused:?}"
        );
    }

    #[test]
    fn rules_judge_the_written_and_the_real_path() {
        let root = Path::new("/w");
        let guard = guard(root, &["**/.env"], &["Cargo.lock"]);
        let real = Path::new("/w/.env");
        assert!(
            guard
                .check_both(root, "config.txt", Some(real), FileAccess::Read)
                .is_err()
        );
        assert!(
            guard
                .check_both(root, "sub/../.env", None, FileAccess::Read)
                .is_err()
        );
        assert!(
            guard
                .check_both(root, "Cargo.lock", None, FileAccess::Read)
                .is_ok()
        );
        let refused = guard.check_both(root, "Cargo.lock", None, FileAccess::Write);
        assert!(refused.unwrap_err().0.contains("read-only `Cargo.lock`"));
        assert!(guard.hides(Path::new("/w/app/.env")));
    }

    #[test]
    fn links_resolve_lexically_from_their_folder() {
        assert_eq!(
            FileGuard::link_target(Path::new("/w/a/link"), "../.cordon"),
            Some(PathBuf::from("/w/.cordon"))
        );
        assert_eq!(FileGuard::link_target(Path::new("/w/a/link"), "/etc"), None);
    }
}
