//! The compiled-component cache: native code for each component, on disk, keyed by
//! the component's SHA-256 and the engine's compatibility hash (wasmtime's version
//! and every compilation setting),
//! so that a second start loads machine code instead of compiling again.
//!
//! Entries are written to a temporary file and renamed into place, so a crash
//! never leaves a half-written entry under a real name. An entry that fails to
//! load (truncated, from an incompatible build) is recompiled and replaced.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;

/// Where compiled components live, or nowhere.
#[derive(Debug, Clone)]
pub(crate) struct ComponentCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from the cache without compiling.
    Hit,
    /// Compiled, and stored for next time.
    Compiled,
    /// Compiled; caching is off or the entry could not be written.
    Uncached,
}

impl ComponentCache {
    pub(crate) fn new(engine: &wasmtime::Engine, dir: Option<PathBuf>) -> Self {
        let mut hasher = StableHasher::default();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        // The compatibility hash covers the compiler's target and flags, the
        // engine's tunables and features, and wasmtime's own version.
        let engine_key = format!("{:016x}", hasher.finish());
        Self { dir, engine_key }
    }

    /// The compiled form of `bytes`, whose SHA-256 is `digest`.
    pub(crate) fn load(
        &self,
        engine: &wasmtime::Engine,
        bytes: &[u8],
        digest: &str,
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let Some(entry) = self.entry_path(digest) else {
            return Ok((Component::new(engine, bytes)?, CacheOutcome::Uncached));
        };
        // The entry is read into memory rather than mapped: a mapped file that
        // someone truncates under a running host would crash it.
        if let Ok(code) = std::fs::read(&entry) {
            // SAFETY: entries are only ever written by `store` below from
            // `Component::serialize` of this same engine configuration, into a
            // directory private to the operator; the key includes the engine's
            // compatibility hash, and wasmtime checks the header before use.
            match unsafe { Component::deserialize(engine, &code) } {
                Ok(component) => return Ok((component, CacheOutcome::Hit)),
                Err(error) => tracing::warn!(
                    path = %entry.display(),
                    %error,
                    "discarding unusable compiled component"
                ),
            }
        }
        let component = Component::new(engine, bytes)?;
        let outcome = match component.serialize().map(|code| store(&entry, &code)) {
            Ok(Ok(())) => CacheOutcome::Compiled,
            Ok(Err(error)) => {
                tracing::warn!(path = %entry.display(), %error, "cannot write compiled component");
                CacheOutcome::Uncached
            }
            Err(error) => {
                tracing::warn!(%error, "cannot serialize compiled component");
                CacheOutcome::Uncached
            }
        };
        Ok((component, outcome))
    }

    /// Whether the compiled form of the component whose SHA-256 is
    /// `digest` is cached, so that loading it compiles nothing.
    pub(crate) fn has(&self, digest: &str) -> bool {
        self.entry_path(digest).is_some_and(|entry| entry.is_file())
    }

    fn entry_path(&self, digest: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        let mut key = Sha256::new();
        key.update(self.engine_key.as_bytes());
        key.update(b"\0");
        key.update(digest.as_bytes());
        Some(dir.join(format!("{}.cwasm", hex::encode(key.finalize()))))
    }
}

fn store(entry: &Path, code: &[u8]) -> std::io::Result<()> {
    let dir = entry.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(code)?;
    file.as_file().sync_all()?;
    file.persist(entry).map_err(|error| error.error)?;
    Ok(())
}

/// A hasher whose output does not change between processes, unlike `DefaultHasher`
/// with random keys. FNV-1a: the input is small and this is not a security boundary
/// (the component digest is SHA-256).
#[derive(Default)]
struct StableHasher(u64);

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
