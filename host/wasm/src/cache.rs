//! The compiled-component cache: native code for each component, on disk, keyed by
//! the component's SHA-256 and the engine's compatibility hash (wasmtime's version
//! and every compilation setting), so that a second start loads machine code
//! instead of compiling again.
//!
//! A compiled entry is native code the host runs, so an entry is trusted only
//! when it proves it was written by this user's Cordon for this component:
//! each entry is sealed with a keyed BLAKE3 MAC over the engine's hash, the
//! component's digest and the compiled code, under a per-user key kept
//! outside every workspace ([`CacheKey`]). An entry that does not verify
//! (swapped for another component's, truncated, flipped, or crafted) is never
//! deserialized: it is discarded, reported ([`CacheOutcome::Replaced`]) and
//! compiled again.
//!
//! Entries are written to a temporary file and renamed into place, so a crash
//! never leaves a half-written entry under a real name.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;

/// What an entry starts with: the format, then the MAC, then the code.
const MAGIC: &[u8; 16] = b"cordon-cwasm-v1\n";
/// The MAC's length.
const MAC_LEN: usize = blake3::OUT_LEN;
/// Where the compiled code begins.
const HEADER_LEN: usize = MAGIC.len() + MAC_LEN;

/// The per-user secret that seals compiled entries.
#[derive(Clone)]
pub struct CacheKey([u8; blake3::KEY_LEN]);

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

/// Where compiled components are cached, and the key that seals them.
#[derive(Debug, Clone)]
pub struct CacheConfig {
    /// The folder of entries.
    pub dir: PathBuf,
    /// The key entries are sealed with.
    pub key: CacheKey,
}

/// Where compiled components live, or nowhere.
#[derive(Debug, Clone)]
pub(crate) struct ComponentCache {
    config: Option<CacheConfig>,
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
    /// The cached entry was refused and discarded, and the component
    /// compiled again.
    Replaced(Discarded),
}

/// Why a cached entry was discarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discarded {
    /// It is not sealed as Cordon seals entries: too short, or another format.
    Malformed,
    /// Its seal does not verify: it was changed, truncated, swapped for
    /// another component's entry, or written with another key.
    Unverified,
    /// It verifies, but this engine cannot use it.
    Incompatible,
}

impl fmt::Display for Discarded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Malformed => "it is not a sealed entry (too short, or another format)",
            Self::Unverified => {
                "its seal does not verify: it was changed, truncated or swapped, or sealed with another key"
            }
            Self::Incompatible => "this engine cannot use it",
        })
    }
}

impl ComponentCache {
    pub(crate) fn new(engine: &wasmtime::Engine, config: Option<CacheConfig>) -> Self {
        let mut hasher = StableHasher::default();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        // The compatibility hash covers the compiler's target and flags, the
        // engine's tunables and features, and wasmtime's own version.
        let engine_key = format!("{:016x}", hasher.finish());
        Self { config, engine_key }
    }

    /// The compiled form of `bytes`, whose SHA-256 is `digest`, the
    /// component of bundle `bundle`.
    pub(crate) fn load(
        &self,
        engine: &wasmtime::Engine,
        (bytes, digest): (&[u8], &str),
        bundle: &str,
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let (Some(config), Some(entry)) = (&self.config, self.entry_path(digest)) else {
            return Ok((Component::new(engine, bytes)?, CacheOutcome::Uncached));
        };
        // The entry is read into memory rather than mapped: a mapped file that
        // someone truncates under a running host would crash it, and the seal
        // is checked on the very bytes deserialized.
        let discarded = match std::fs::read(&entry) {
            Ok(sealed) => match self.open(&config.key, digest, &sealed) {
                Ok(code) => {
                    // SAFETY: `code` verified against a MAC under the user's
                    // key over this engine's compatibility hash and this
                    // component's digest, which only `store` below writes,
                    // from `Component::serialize` of this same engine
                    // configuration; wasmtime checks the header before use.
                    match unsafe { Component::deserialize(engine, code) } {
                        Ok(component) => return Ok((component, CacheOutcome::Hit)),
                        Err(_) => Some(Discarded::Incompatible),
                    }
                }
                Err(discarded) => Some(discarded),
            },
            Err(_) => None,
        };
        if let Some(why) = discarded {
            tracing::warn!(
                bundle,
                path = %entry.display(),
                reason = %why,
                "refused a compiled component from the cache; discarding it and compiling again"
            );
            let _ = std::fs::remove_file(&entry);
        }
        let component = Component::new(engine, bytes)?;
        let stored = component
            .serialize()
            .map_err(|error| error.to_string())
            .and_then(|code| {
                let sealed = self.seal(&config.key, digest, &code);
                store(&entry, &sealed).map_err(|error| error.to_string())
            });
        let outcome = match (stored, discarded) {
            (Ok(()), Some(why)) => CacheOutcome::Replaced(why),
            (Ok(()), None) => CacheOutcome::Compiled,
            (Err(error), _) => {
                tracing::warn!(path = %entry.display(), %error, "cannot cache the compiled component");
                CacheOutcome::Uncached
            }
        };
        Ok((component, outcome))
    }

    /// Whether the compiled form of the component whose SHA-256 is
    /// `digest` is cached, so that loading it likely compiles nothing.
    pub(crate) fn has(&self, digest: &str) -> bool {
        self.entry_path(digest).is_some_and(|entry| entry.is_file())
    }

    fn entry_path(&self, digest: &str) -> Option<PathBuf> {
        let dir = &self.config.as_ref()?.dir;
        let mut key = Sha256::new();
        key.update(self.engine_key.as_bytes());
        key.update(b"\0");
        key.update(digest.as_bytes());
        Some(dir.join(format!("{}.cwasm", hex::encode(key.finalize()))))
    }

    /// The MAC of `code` as the compiled form of the component `digest`
    /// on this engine.
    fn mac(&self, key: &CacheKey, digest: &str, code: &[u8]) -> blake3::Hash {
        let mut mac = blake3::Hasher::new_keyed(&key.0);
        mac.update(self.engine_key.as_bytes());
        mac.update(b"\0");
        mac.update(digest.as_bytes());
        mac.update(b"\0");
        mac.update(code);
        mac.finalize()
    }

    /// `code` sealed: the format, its MAC, then the code.
    fn seal(&self, key: &CacheKey, digest: &str, code: &[u8]) -> Vec<u8> {
        let mut sealed = Vec::with_capacity(HEADER_LEN + code.len());
        sealed.extend_from_slice(MAGIC);
        sealed.extend_from_slice(self.mac(key, digest, code).as_bytes());
        sealed.extend_from_slice(code);
        sealed
    }

    /// The code `sealed` holds, when its seal verifies for `digest`.
    fn open<'a>(
        &self,
        key: &CacheKey,
        digest: &str,
        sealed: &'a [u8],
    ) -> Result<&'a [u8], Discarded> {
        if sealed.len() < HEADER_LEN || !sealed.starts_with(MAGIC) {
            return Err(Discarded::Malformed);
        }
        let (header, code) = sealed.split_at(HEADER_LEN);
        let claimed: [u8; MAC_LEN] = header[MAGIC.len()..]
            .try_into()
            .map_err(|_| Discarded::Malformed)?;
        // `blake3::Hash` compares in constant time.
        if self.mac(key, digest, code) == blake3::Hash::from_bytes(claimed) {
            Ok(code)
        } else {
            Err(Discarded::Unverified)
        }
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
/// (the component digest is SHA-256, and entries are sealed with a keyed MAC).
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

#[cfg(test)]
mod tests {
    use super::*;

    const TOOL: &str = r#"(component
        (core module $m (func (export "f") (result i32) i32.const 7))
        (core instance $i (instantiate $m))
        (func (export "f") (result u32) (canon lift (core func $i "f")))
    )"#;

    fn engine() -> wasmtime::Engine {
        let mut config = wasmtime::Config::new();
        config.wasm_component_model(true);
        wasmtime::Engine::new(&config).unwrap()
    }

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

    #[test]
    fn an_entry_that_does_not_verify_is_discarded_and_compiled_again() {
        let engine = engine();
        let bytes = wat::parse_str(TOOL).unwrap();
        let digest = sha256_hex(&bytes);
        let dir = tempfile::tempdir().unwrap();
        let key = CacheKey::ephemeral();
        let cache = ComponentCache::new(
            &engine,
            Some(CacheConfig {
                dir: dir.path().to_owned(),
                key: key.clone(),
            }),
        );
        let load = || cache.load(&engine, (&bytes, &digest), "t").unwrap().1;
        assert_eq!(load(), CacheOutcome::Compiled);
        assert_eq!(load(), CacheOutcome::Hit);
        let entry = cache.entry_path(&digest).unwrap();
        let sealed = std::fs::read(&entry).unwrap();

        let mut flipped = sealed.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        std::fs::write(&entry, &flipped).unwrap();
        assert_eq!(load(), CacheOutcome::Replaced(Discarded::Unverified));
        assert_eq!(load(), CacheOutcome::Hit, "the entry was replaced");

        std::fs::write(&entry, &sealed[..sealed.len() / 2]).unwrap();
        assert_eq!(load(), CacheOutcome::Replaced(Discarded::Unverified));
        std::fs::write(&entry, &sealed[..10]).unwrap();
        assert_eq!(load(), CacheOutcome::Replaced(Discarded::Malformed));
        std::fs::write(&entry, &sealed[HEADER_LEN..]).unwrap();
        assert_eq!(
            load(),
            CacheOutcome::Replaced(Discarded::Malformed),
            "an unsealed entry, as wasmtime writes one, is never deserialized"
        );

        let other = ComponentCache::new(
            &engine,
            Some(CacheConfig {
                dir: dir.path().to_owned(),
                key: CacheKey::ephemeral(),
            }),
        );
        assert_eq!(
            other.load(&engine, (&bytes, &digest), "t").unwrap().1,
            CacheOutcome::Replaced(Discarded::Unverified),
            "an entry sealed with another key does not verify"
        );
    }

    #[test]
    fn an_entry_moved_under_another_components_name_does_not_verify() {
        let engine = engine();
        let first = wat::parse_str(TOOL).unwrap();
        let second = wat::parse_str(TOOL.replace("i32.const 7", "i32.const 8")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cache = ComponentCache::new(
            &engine,
            Some(CacheConfig {
                dir: dir.path().to_owned(),
                key: CacheKey::ephemeral(),
            }),
        );
        let (a, b) = (sha256_hex(&first), sha256_hex(&second));
        cache.load(&engine, (&first, &a), "a").unwrap();
        cache.load(&engine, (&second, &b), "b").unwrap();
        std::fs::copy(cache.entry_path(&b).unwrap(), cache.entry_path(&a).unwrap()).unwrap();
        assert_eq!(
            cache.load(&engine, (&first, &a), "a").unwrap().1,
            CacheOutcome::Replaced(Discarded::Unverified)
        );
    }
}
