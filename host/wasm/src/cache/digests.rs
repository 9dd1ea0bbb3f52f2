//! The digests of component files, remembered so that a start need not read
//! and hash an unchanged component. A record binds a file's path and
//! [`Fingerprint`] to the SHA-256 its bytes had when they were read, sealed
//! with the cache's key; a file whose fingerprint differs from its record
//! (written in place, replaced, resized) is read and hashed again. A
//! component read this way is read whole only if it must be compiled, and
//! then its bytes must still have the digest approved.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::fingerprint::{self, Fingerprint};
use super::key::CacheKey;
use super::{CacheConfig, sha256_hex, store};

/// What a record starts with.
const MAGIC: &[u8; 16] = b"cordon-digest-1\n";
/// A digest's length, in hex.
const DIGEST_LEN: usize = 64;
/// A record's length.
const LEN: usize = MAGIC.len() + fingerprint::LEN + DIGEST_LEN + blake3::OUT_LEN;

/// The remembered digests, in the cache's folder.
#[derive(Clone, Copy)]
pub(crate) struct Digests<'a> {
    pub(super) config: &'a CacheConfig,
    /// The time, for judging whether a file has settled.
    pub(super) clock: fn() -> SystemTime,
}

/// A component file as a start found it.
pub(crate) struct ComponentRead {
    /// Its SHA-256, lowercase hex.
    pub(crate) digest: String,
    /// Its length in bytes.
    pub(crate) size: usize,
    /// Its bytes, when they had to be read to know the digest.
    pub(crate) bytes: Option<Vec<u8>>,
}

impl ComponentRead {
    /// A component read whole, with its digest.
    pub(crate) fn of(bytes: Vec<u8>) -> Self {
        Self {
            digest: sha256_hex(&bytes),
            size: bytes.len(),
            bytes: Some(bytes),
        }
    }
}

impl Digests<'_> {
    /// The component at `path`: its remembered digest when its record
    /// matches the file, or its bytes read and hashed, remembered for next
    /// time once the file has settled.
    pub(crate) fn read(&self, path: &Path) -> std::io::Result<ComponentRead> {
        let mut file = File::open(path)?;
        let before = Fingerprint::of(&file);
        if let Some(seen) = before
            && let Some(digest) = self.known(path, &seen)
        {
            return Ok(ComponentRead {
                digest,
                size: usize::try_from(seen.size()).unwrap_or(usize::MAX),
                bytes: None,
            });
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let read = ComponentRead::of(bytes);
        if let Some(seen) = before
            && Fingerprint::of(&file) == Some(seen)
            && seen.settled((self.clock)())
        {
            self.remember(path, &seen, &read.digest);
        }
        Ok(read)
    }

    fn record_path(&self, path: &Path) -> PathBuf {
        let name = hex::encode(Sha256::digest(path.as_os_str().as_encoded_bytes()));
        self.config.dir.join("digests").join(name)
    }

    fn mac(key: &CacheKey, path: &Path, body: &[u8]) -> blake3::Hash {
        key.mac(&[b"digest", path.as_os_str().as_encoded_bytes(), body])
    }

    /// The digest recorded for `path` with fingerprint `seen`, if the record
    /// verifies.
    fn known(&self, path: &Path, seen: &Fingerprint) -> Option<String> {
        let record = std::fs::read(self.record_path(path)).ok()?;
        if record.len() != LEN || !record.starts_with(MAGIC) {
            return None;
        }
        let (body, mac) = record.split_at(LEN - blake3::OUT_LEN);
        let claimed: [u8; blake3::OUT_LEN] = mac.try_into().ok()?;
        if Self::mac(&self.config.key, path, body) != blake3::Hash::from_bytes(claimed) {
            return None;
        }
        let (recorded, digest) = body[MAGIC.len()..].split_at(fingerprint::LEN);
        let recorded: [u8; fingerprint::LEN] = recorded.try_into().ok()?;
        (Fingerprint::decode(&recorded) == *seen)
            .then(|| String::from_utf8(digest.to_vec()).ok())
            .flatten()
    }

    /// Remember `digest` for `path` as fingerprint `seen`; a failure only
    /// means the next start hashes it again.
    fn remember(&self, path: &Path, seen: &Fingerprint, digest: &str) {
        let mut record = Vec::with_capacity(LEN);
        record.extend_from_slice(MAGIC);
        record.extend_from_slice(&seen.encode());
        record.extend_from_slice(digest.as_bytes());
        let mac = Self::mac(&self.config.key, path, &record);
        record.extend_from_slice(mac.as_bytes());
        if let Err(error) = store(&self.record_path(path), &record) {
            tracing::debug!(path = %path.display(), %error, "cannot remember a component's digest");
        }
    }
}
