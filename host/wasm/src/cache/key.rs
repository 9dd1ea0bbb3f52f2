//! The per-user secret that seals what the cache keeps: compiled code, and
//! the fingerprints and digests that vouch for files without reading them.
//! Kept outside every workspace, readable by the user alone, so nothing a
//! component or another user writes can pass for an entry this user's
//! Cordon wrote.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The per-user secret that seals compiled entries.
#[derive(Clone)]
pub struct CacheKey(pub(super) [u8; blake3::KEY_LEN]);

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CacheKey(..)")
    }
}

/// Why the key could not be had.
#[derive(Debug, thiserror::Error)]
#[error("the compile cache's key {}: {message}", file.display())]
pub struct CacheKeyError {
    /// The key file.
    pub file: PathBuf,
    /// What went wrong.
    pub message: String,
}

impl CacheKey {
    /// The key kept in `file`, made when missing: random, readable and
    /// writable by the user alone. Keep it where no component reaches and
    /// out of anything shared, such as a CI cache.
    pub fn in_file(file: &Path) -> Result<Self, CacheKeyError> {
        let fail = |message: String| CacheKeyError {
            file: file.to_owned(),
            message,
        };
        let bytes = match std::fs::read(file) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let key = Self::random().map_err(|error| fail(error.to_string()))?;
                write_private(file, &key.0).map_err(|error| fail(error.to_string()))?;
                // Another process may have made one first: theirs stands.
                std::fs::read(file)
            }
            read => read,
        }
        .map_err(|error| fail(error.to_string()))?;
        let key: [u8; blake3::KEY_LEN] = bytes.as_slice().try_into().map_err(|_| {
            fail(format!(
                "holds {} bytes, not {}; delete it to have a new key made (the cache is then compiled again)",
                bytes.len(),
                blake3::KEY_LEN
            ))
        })?;
        Ok(Self(key))
    }

    /// A key of this process alone: what it seals verifies only in this
    /// process, so a cache shared with anything else only ever recompiles.
    pub fn ephemeral() -> Self {
        Self::random().unwrap_or_else(|_| {
            // No source of randomness: the time and the process id at least
            // make a key no other process shares.
            let seed = format!("{:?}{}", std::time::SystemTime::now(), std::process::id());
            Self(*blake3::hash(seed.as_bytes()).as_bytes())
        })
    }

    fn random() -> Result<Self, getrandom::Error> {
        let mut key = [0u8; blake3::KEY_LEN];
        getrandom::fill(&mut key)?;
        Ok(Self(key))
    }
}

/// `bytes` written to the new file `file`, readable by the user alone,
/// never replacing one another process wrote first.
fn write_private(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        temp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    match temp.persist_noclobber(file) {
        Ok(_) => Ok(()),
        Err(error) if error.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error.error),
    }
}

impl CacheKey {
    /// The keyed MAC of `parts`, each length-prefixed so that no two lists
    /// of parts read the same.
    pub(super) fn mac(&self, parts: &[&[u8]]) -> blake3::Hash {
        let mut mac = blake3::Hasher::new_keyed(&self.0);
        for part in parts {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac.finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_for_the_user_alone_and_a_bad_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state/cordon/cache.key");
        let first = CacheKey::in_file(&file).unwrap();
        let again = CacheKey::in_file(&file).unwrap();
        assert_eq!(first.0, again.0);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&file, b"short").unwrap();
        let error = CacheKey::in_file(&file).unwrap_err();
        assert!(error.to_string().contains("holds 5 bytes"), "{error}");
    }
}
