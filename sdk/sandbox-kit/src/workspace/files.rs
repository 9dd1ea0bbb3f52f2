//! The single-path operations: read, write, edit, list-dir, stat, remove,
//! rename and mkdir.

use super::Entry;
use crate::error::{Error, Result, shown};
use crate::fs::{FileSystem, Meta};
use crate::path;

/// The contents of a file.
pub fn read(fs: &dyn FileSystem, path: &str) -> Result<Vec<u8>> {
    let path = path::normalize(path)?;
    match fs.meta(&path)? {
        None => Err(Error::not_found(&path)),
        Some(meta) if meta.is_dir() => {
            Err(Error::Invalid(format!("{} is a directory", shown(&path))))
        }
        Some(_) => fs.read(&path),
    }
}

/// Create or replace a file, creating missing parent directories.
pub fn write(fs: &dyn FileSystem, path: &str, contents: &[u8]) -> Result<()> {
    let path = path::normalize(path)?;
    if fs.meta(&path)?.is_some_and(|meta| meta.is_dir()) {
        return Err(Error::Invalid(format!("{} is a directory", shown(&path))));
    }
    fs.write(&path, contents)
}

/// Replace the single occurrence of `old` with `new` in a UTF-8 text file.
pub fn edit(fs: &dyn FileSystem, path: &str, old: &str, new: &str) -> Result<()> {
    if old.is_empty() {
        return Err(Error::Invalid("the text to replace is empty".into()));
    }
    let normal = path::normalize(path)?;
    let data = read(fs, &normal)?;
    let text = String::from_utf8(data)
        .map_err(|_| Error::Invalid(format!("{normal} is not a UTF-8 text file")))?;
    let found = text.matches(old).count();
    if found != 1 {
        return Err(Error::Invalid(format!(
            "the text to replace occurs {found} times in {normal}; it must occur exactly once"
        )));
    }
    fs.write(&normal, text.replacen(old, new, 1).as_bytes())
}

/// The entries of a directory, sorted by name.
pub fn list_dir(fs: &dyn FileSystem, path: &str) -> Result<Vec<Entry>> {
    let dir = path::normalize(path)?;
    expect_dir(fs, &dir)?;
    Ok(fs
        .list(&dir)?
        .into_iter()
        .map(|(name, meta)| Entry::new(path::join(&dir, &name), meta))
        .collect())
}

/// Metadata of one path.
pub fn stat(fs: &dyn FileSystem, path: &str) -> Result<Entry> {
    let path = path::normalize(path)?;
    let meta = fs.meta(&path)?.ok_or_else(|| Error::not_found(&path))?;
    Ok(Entry::new(path, meta))
}

/// Remove a file or an empty directory.
pub fn remove(fs: &dyn FileSystem, path: &str) -> Result<()> {
    let path = path::normalize(path)?;
    if path.is_empty() {
        return Err(Error::Denied("the workspace root cannot be removed".into()));
    }
    let meta = fs.meta(&path)?.ok_or_else(|| Error::not_found(&path))?;
    if meta.is_dir() && !fs.list(&path)?.is_empty() {
        return Err(Error::Invalid(format!("directory {path} is not empty")));
    }
    fs.remove(&path)
}

/// Move a file or directory. The destination's parent must exist; an existing
/// file there is replaced by a file, an existing directory is never replaced.
pub fn rename(fs: &dyn FileSystem, source: &str, destination: &str) -> Result<()> {
    let from = path::normalize(source)?;
    let to = path::normalize(destination)?;
    if from.is_empty() || to.is_empty() {
        return Err(Error::Denied(
            "the workspace root cannot be moved or replaced".into(),
        ));
    }
    let meta = fs.meta(&from)?.ok_or_else(|| Error::not_found(&from))?;
    if from == to {
        return Ok(());
    }
    if meta.is_dir() && path::strip_dir(&to, &from).is_some() {
        return Err(Error::Invalid(format!(
            "cannot move {from} into itself ({to})"
        )));
    }
    expect_dir(fs, path::parent(&to).unwrap_or_default())?;
    match fs.meta(&to)? {
        Some(target) if target.is_dir() => Err(Error::Invalid(format!(
            "{to} already exists and is a directory"
        ))),
        Some(_) if meta.is_dir() => Err(Error::Invalid(format!(
            "cannot replace the file {to} with the directory {from}"
        ))),
        _ => fs.rename(&from, &to),
    }
}

/// Create a directory and its missing parents; an existing directory is fine.
pub fn mkdir(fs: &dyn FileSystem, path: &str) -> Result<()> {
    let path = path::normalize(path)?;
    if path.is_empty() {
        return Ok(());
    }
    for dir in path::ancestors(&path).chain([path.as_str()]) {
        match fs.meta(dir)? {
            None => fs.create_dir(dir)?,
            Some(meta) if meta.is_dir() => {}
            Some(_) => {
                return Err(Error::Invalid(format!(
                    "{dir} exists and is not a directory"
                )));
            }
        }
    }
    Ok(())
}

/// Fails unless `dir` is a directory: `NotFound` if nothing is there.
pub(crate) fn expect_dir(fs: &dyn FileSystem, dir: &str) -> Result<Meta> {
    match fs.meta(dir)? {
        Some(meta) if meta.is_dir() => Ok(meta),
        Some(_) => Err(Error::Invalid(format!("{} is not a directory", shown(dir)))),
        None => Err(Error::not_found(dir)),
    }
}
