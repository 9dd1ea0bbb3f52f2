//! The real workspace folder, as the host reads and writes it: through a
//! capability handle on the folder, so no path, `..` or planted symlink
//! reaches outside it. The host reads what a path held before a staged change
//! (for diffs) and publishes committed changes here.
//!
//! Publishing never goes through a symbolic link: each directory on the way
//! to a path is opened without following links, and a link where a directory
//! should be refuses the change. A link at the path itself is replaced, never
//! followed, and publishing creates no link.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use cap_primitives::fs::FollowSymlinks;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use cordon_kernel::{FileState, PublishError};

/// A workspace folder opened as a capability.
pub(crate) struct Folder {
    dir: Dir,
    /// Where the folder is, canonical.
    real: PathBuf,
}

/// Why publishing stopped at a path: the error the loop reports, and
/// whether it was a link on the way, which the host refuses.
#[derive(Debug)]
pub(crate) struct Stopped {
    pub(crate) error: PublishError,
    pub(crate) through_link: bool,
}

/// Why publishing refused a path.
#[derive(Debug)]
enum Refusal {
    /// A directory on the way is a symbolic link.
    Link(String),
    /// The file system failed.
    Io(io::Error),
}

impl From<io::Error> for Refusal {
    fn from(error: io::Error) -> Self {
        Self::Io(error)
    }
}

impl Folder {
    /// Open the folder at `path`, canonical.
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        Ok(Self {
            dir: Dir::open_ambient_dir(path, ambient_authority())?,
            real: path.to_owned(),
        })
    }

    /// Where the folder is.
    pub(crate) fn real(&self) -> &Path {
        &self.real
    }

    /// What `path` holds now, reached without following any symbolic link.
    /// A link, a path the folder refuses or cannot read, and anything that is
    /// no regular file or directory count as absent: nothing is read through
    /// a link, so no link shows another file's contents.
    pub(crate) fn state(&self, path: &str) -> FileState {
        if path.is_empty() {
            return FileState::Directory;
        }
        let (parents, name) = path.rsplit_once('/').unwrap_or(("", path));
        let Ok(Some(parent)) = self.parent(parents, false) else {
            return FileState::Absent;
        };
        match parent.symlink_metadata(name) {
            Ok(meta) if meta.is_dir() => FileState::Directory,
            // Only regular files are read: opening a FIFO could block forever.
            Ok(meta) if meta.is_file() => read_nofollow(&parent, name)
                .map_or(FileState::Absent, |bytes| FileState::File(bytes.into())),
            Ok(_) | Err(_) => FileState::Absent,
        }
    }

    /// Whether `path` (normalized, not the root) is a symbolic link in the
    /// folder. Its directories are followed as the folder allows; the link
    /// question is about the final name.
    pub(crate) fn is_link(&self, path: &str) -> bool {
        self.dir
            .symlink_metadata(path)
            .is_ok_and(|meta| meta.file_type().is_symlink())
    }

    /// Make `entries` (path order) true of the folder: removals deepest first,
    /// then directories and files in path order. Each file is written to a
    /// temporary name and renamed over its path, so a crash mid-way leaves
    /// every file either old or new, and publishing again finishes the job.
    pub(crate) fn publish<'a>(
        &self,
        entries: impl DoubleEndedIterator<Item = (&'a String, &'a FileState)> + Clone,
    ) -> Result<(), Stopped> {
        for (path, entry) in entries.clone().rev() {
            if matches!(entry, FileState::Absent) {
                self.apply(path, entry)?;
            }
        }
        for (path, entry) in entries {
            if !matches!(entry, FileState::Absent) {
                self.apply(path, entry)?;
            }
        }
        Ok(())
    }

    fn apply(&self, path: &str, entry: &FileState) -> Result<(), Stopped> {
        let (parents, name) = match path.rsplit_once('/') {
            Some((parents, name)) => (parents, name),
            None => ("", path),
        };
        let done = self
            .parent(parents, !matches!(entry, FileState::Absent))
            .and_then(|parent| match (parent, entry) {
                (None, _) => Ok(()),
                (Some(parent), FileState::Absent) => remove(&parent, name).map_err(Refusal::Io),
                (Some(parent), FileState::Directory) => {
                    make_dir(&parent, name).map_err(Refusal::Io)
                }
                (Some(parent), FileState::File(contents)) => {
                    write(&parent, name, contents).map_err(Refusal::Io)
                }
            });
        done.map_err(|refusal| Stopped {
            through_link: matches!(refusal, Refusal::Link(_)),
            error: PublishError {
                path: path.to_owned(),
                message: match refusal {
                    Refusal::Link(link) => format!(
                        "`{link}` is a symbolic link, and publishing never goes through one"
                    ),
                    Refusal::Io(error) => error.to_string(),
                },
            },
        })
    }

    /// The directory `parents` (`a/b`), opened one component at a time
    /// without following links, creating missing ones when `create`; `None`
    /// when it is missing and not to be created (nothing to remove).
    fn parent(&self, parents: &str, create: bool) -> Result<Option<Dir>, Refusal> {
        let mut current: File = self.dir.try_clone()?.into_std_file();
        let mut walked = String::new();
        for name in parents.split('/').filter(|name| !name.is_empty()) {
            if !walked.is_empty() {
                walked.push('/');
            }
            walked.push_str(name);
            match cap_primitives::fs::stat(&current, Path::new(name), FollowSymlinks::No) {
                Ok(meta) if meta.file_type().is_symlink() => return Err(Refusal::Link(walked)),
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::NotFound && create => {
                    cap_primitives::fs::create_dir(
                        &current,
                        Path::new(name),
                        &cap_primitives::fs::DirOptions::new(),
                    )?;
                }
                Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(error) => return Err(error.into()),
            }
            current = cap_primitives::fs::open_dir_nofollow(&current, Path::new(name))?;
        }
        Ok(Some(Dir::from_std_file(current)))
    }
}

/// The contents of the file `name` in `parent`, refusing a symbolic link.
fn read_nofollow(parent: &Dir, name: &str) -> io::Result<Vec<u8>> {
    use cap_primitives::fs::OpenOptions;
    use std::io::Read;
    let mut options = OpenOptions::new();
    options.read(true);
    options._cap_fs_ext_follow(FollowSymlinks::No);
    let start = parent.try_clone()?.into_std_file();
    let mut file = cap_primitives::fs::open(&start, Path::new(name), &options)?;
    let mut contents = Vec::new();
    file.read_to_end(&mut contents)?;
    Ok(contents)
}

fn remove(parent: &Dir, name: &str) -> io::Result<()> {
    match parent.symlink_metadata(name) {
        Ok(meta) if meta.is_dir() => parent.remove_dir_all(name),
        Ok(_) => parent.remove_file(name),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}

fn make_dir(parent: &Dir, name: &str) -> io::Result<()> {
    match parent.symlink_metadata(name) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => parent.remove_file(name)?,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    parent.create_dir(name)
}

fn write(parent: &Dir, name: &str, contents: &[u8]) -> io::Result<()> {
    if let Ok(meta) = parent.symlink_metadata(name)
        && meta.is_dir()
    {
        parent.remove_dir_all(name)?;
    }
    // A leftover temporary name is removed, never written through: it might
    // be a link someone planted.
    let temporary = format!(".{name}.cordon-publish");
    match parent.remove_file(&temporary) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
        _ => {}
    }
    let mut file = parent.open_with(
        &temporary,
        cap_std::fs::OpenOptions::new().write(true).create_new(true),
    )?;
    file.write_all(contents)?;
    file.sync_all()?;
    drop(file);
    parent.rename(&temporary, parent, name)
}
