//! The real workspace folder, as the host reads and writes it: through a
//! capability handle on the folder ([`cap_std::fs::Dir`]), so no path, `..`
//! or planted symlink reaches outside it. The host reads what a path held
//! before a staged change (for diffs) and publishes committed changes here.

use std::io::{self, Write};
use std::path::Path;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use cordon_kernel::{FileState, PublishError};

use super::staging::Entry;

/// A workspace folder opened as a capability.
pub(crate) struct Folder {
    dir: Dir,
}

impl Folder {
    /// Open the folder at `path`.
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        Ok(Self {
            dir: Dir::open_ambient_dir(path, ambient_authority())?,
        })
    }

    /// What `path` holds now. A path the folder refuses (a symlink leading
    /// out), cannot read, or that is no regular file or directory counts as
    /// absent: its contents never leave it.
    pub(crate) fn state(&self, path: &str) -> FileState {
        if path.is_empty() {
            return FileState::Directory;
        }
        match self.dir.metadata(path) {
            Ok(meta) if meta.is_dir() => FileState::Directory,
            // Only regular files are read: opening a FIFO could block forever.
            Ok(meta) if meta.is_file() => self
                .dir
                .read(path)
                .map_or(FileState::Absent, FileState::File),
            Ok(_) | Err(_) => FileState::Absent,
        }
    }

    /// Make `entries` (path order) true of the folder: removals deepest first,
    /// then directories and files in path order. Each file is written to a
    /// temporary name and renamed over its path, so a crash mid-way leaves
    /// every file either old or new, and publishing again finishes the job.
    pub(crate) fn publish<'a>(
        &self,
        entries: impl DoubleEndedIterator<Item = (&'a String, &'a Entry)> + Clone,
    ) -> Result<(), PublishError> {
        for (path, entry) in entries.clone().rev() {
            if matches!(entry, Entry::Removed) {
                self.remove(path).map_err(|error| failed(path, &error))?;
            }
        }
        for (path, entry) in entries {
            let written = match entry {
                Entry::Removed => Ok(()),
                Entry::Directory => self.make_dir(path),
                Entry::File(contents) => self.write(path, contents),
            };
            written.map_err(|error| failed(path, &error))?;
        }
        Ok(())
    }

    fn remove(&self, path: &str) -> io::Result<()> {
        match self.dir.symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => self.dir.remove_dir_all(path),
            Ok(_) => self.dir.remove_file(path),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(error),
        }
    }

    fn make_dir(&self, path: &str) -> io::Result<()> {
        match self.dir.symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => self.dir.remove_file(path)?,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        self.dir.create_dir_all(path)
    }

    fn write(&self, path: &str, contents: &[u8]) -> io::Result<()> {
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        if !parent.is_empty() {
            self.make_dir(parent)?;
        }
        if let Ok(meta) = self.dir.symlink_metadata(path)
            && meta.is_dir()
        {
            self.dir.remove_dir_all(path)?;
        }
        let temporary = if parent.is_empty() {
            format!(".{name}.cordon-publish")
        } else {
            format!("{parent}/.{name}.cordon-publish")
        };
        let mut file = self.dir.create(&temporary)?;
        file.write_all(contents)?;
        file.sync_all()?;
        drop(file);
        self.dir.rename(&temporary, &self.dir, path)
    }
}

fn failed(path: &str, error: &io::Error) -> PublishError {
    PublishError {
        path: path.to_owned(),
        message: error.to_string(),
    }
}
