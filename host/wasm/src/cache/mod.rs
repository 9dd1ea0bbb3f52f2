//! The compiled-component cache: native code for each component, on disk, keyed by
//! the component's SHA-256 and the engine's compatibility hash (wasmtime's version
//! and every compilation setting), so that a second start loads machine code
//! instead of compiling again.
//!
//! A compiled entry is native code the host runs, so an entry is trusted only
//! when it proves it was written by this user's Cordon for this component:
//! each entry's code is sealed with a keyed BLAKE3 MAC over the engine's hash,
//! the component's digest and the code, under a per-user key kept outside
//! every workspace ([`CacheKey`]). An entry that does not verify (swapped for
//! another component's, truncated, flipped, or crafted) is never
//! deserialized: it is discarded, reported ([`CacheOutcome::Replaced`]) and
//! compiled again.
//!
//! The code is a file of its own, as wasmtime serialized it, and its seal a
//! small file beside it ([`seal`]). The first start after the code settled
//! reads it whole, checks its MAC on the very bytes it deserializes, and
//! seals the file's [`Fingerprint`]; from then on a start whose code file
//! still has that fingerprint maps the file instead of reading and hashing
//! it, through the descriptor it checked, so a file renamed over it in
//! between is not the one mapped. Only a file that is the user's alone
//! (owned by the user, writable by nobody else, linked once, on a local file
//! system) is mapped, so nobody else can write it, and any write changes its
//! fingerprint; a replaced or removed entry leaves the mapped inode as it
//! was. What mapping gives up: the user's own tools writing an entry in
//! place (`cp` over it, `rsync --inplace`) while a Cordon runs it change or
//! crash that Cordon, and a disk corrupting the file without a write is not
//! caught once its fingerprint is sealed; a cache the user keeps elsewhere
//! than their own local disk is read and verified at every start.
//!
//! Entries are written to a temporary file and renamed into place, so a crash
//! never leaves a half-written entry under a real name. The digests of
//! component files are remembered the same way ([`digests`]).

mod digests;
mod fingerprint;
mod key;
mod notes;
mod seal;

use std::fmt;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};
use wasmtime::component::Component;

pub(crate) use digests::{ComponentRead, Digests};
use fingerprint::Fingerprint;
pub use key::{CacheKey, CacheKeyError};
use seal::Seal;

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
    /// The time, for judging whether a file has settled.
    clock: fn() -> SystemTime,
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
        Self {
            config,
            engine_key,
            clock: SystemTime::now,
        }
    }

    /// Where component files' digests are remembered, when caching is on.
    pub(crate) fn digests(&self) -> Option<Digests<'_>> {
        self.config.as_ref().map(|config| Digests {
            config,
            clock: self.clock,
        })
    }

    /// The cached compiled form of the component whose SHA-256 is
    /// `digest`, the component of bundle `bundle`; or why it must be
    /// compiled.
    pub(crate) fn lookup(&self, engine: &wasmtime::Engine, digest: &str, bundle: &str) -> Lookup {
        let Some((config, entry)) = self.entry(digest) else {
            return Lookup::Miss(None);
        };
        let Ok(sealed) = std::fs::read(&entry.seal) else {
            return Lookup::Miss(None);
        };
        let context = self.context(digest);
        let seal = match Seal::decode(&sealed, &config.key, &context) {
            Ok(seal) => seal,
            Err(why) => return entry.discard(bundle, why),
        };
        // A file that cannot be opened now (a symbolic link, which is never
        // followed, or one being replaced) is compiled again, and written
        // over.
        let Ok(mut file) = open_code(&entry.code) else {
            return Lookup::Miss(None);
        };
        let seen = Fingerprint::of_own(&file);
        if seal.file.is_some()
            && seal.file == seen
            && let Some(component) = mapped(engine, &file)
        {
            return Lookup::Hit(Compiled {
                component,
                core_instances: seal.core_instances,
            });
        }
        let mut code = Vec::new();
        if file.read_to_end(&mut code).is_err() {
            return Lookup::Miss(None);
        }
        // `blake3::Hash` compares in constant time.
        if Seal::code_mac(&config.key, &context, &code) != seal.code {
            return entry.discard(bundle, Discarded::Unverified);
        }
        // SAFETY: `code` verified against a MAC under the user's key over
        // this engine's compatibility hash and this component's digest,
        // which only `compile` below writes, from `Component::serialize` of
        // this same engine configuration; wasmtime checks the header before
        // use.
        let Ok(component) = (unsafe { Component::deserialize(engine, &code) }) else {
            return entry.discard(bundle, Discarded::Incompatible);
        };
        if let Some(seen) = seen
            && seal.file != Some(seen)
            && Fingerprint::of_own(&file) == Some(seen)
            && seen.settled((self.clock)())
        {
            let settled = Seal {
                file: Some(seen),
                ..seal
            };
            if let Err(error) = store(&entry.seal, &settled.encode(&config.key, &context)) {
                tracing::debug!(path = %entry.seal.display(), %error, "cannot seal a settled entry");
            }
        }
        Lookup::Hit(Compiled {
            component,
            core_instances: seal.core_instances,
        })
    }

    /// Compile `bytes`, whose SHA-256 is `digest` and whose instances each
    /// create `core_instances` core instances, and cache the code, unless
    /// that count could not be had; the cached entry was discarded first
    /// for `discarded`.
    pub(crate) fn compile(
        &self,
        engine: &wasmtime::Engine,
        (bytes, digest): (&[u8], &str),
        core_instances: Option<u32>,
        discarded: Option<Discarded>,
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let component = Component::new(engine, bytes)?;
        let (Some((config, entry)), Some(core_instances)) = (self.entry(digest), core_instances)
        else {
            return Ok((component, CacheOutcome::Uncached));
        };
        let context = self.context(digest);
        let stored = component
            .serialize()
            .map_err(|error| error.to_string())
            .and_then(|code| {
                store(&entry.code, &code).map_err(|error| error.to_string())?;
                let seal = Seal {
                    code: Seal::code_mac(&config.key, &context, &code),
                    // Just written: not settled before a later start reads it.
                    file: None,
                    core_instances,
                };
                store(&entry.seal, &seal.encode(&config.key, &context))
                    .map_err(|error| error.to_string())
            });
        let outcome = match (stored, discarded) {
            (Ok(()), Some(why)) => CacheOutcome::Replaced(why),
            (Ok(()), None) => CacheOutcome::Compiled,
            (Err(error), _) => {
                tracing::warn!(path = %entry.code.display(), %error, "cannot cache the compiled component");
                CacheOutcome::Uncached
            }
        };
        Ok((component, outcome))
    }

    /// Whether the compiled form of the component whose SHA-256 is
    /// `digest` is cached, so that loading it likely compiles nothing.
    pub(crate) fn has(&self, digest: &str) -> bool {
        self.entry(digest)
            .is_some_and(|(_, entry)| entry.seal.is_file())
    }

    /// The entry of the component `digest`, with the cache's settings.
    fn entry(&self, digest: &str) -> Option<(&CacheConfig, Entry)> {
        let config = self.config.as_ref()?;
        let mut key = Sha256::new();
        key.update(self.engine_key.as_bytes());
        key.update(b"\0");
        key.update(digest.as_bytes());
        let name = hex::encode(key.finalize());
        Some((
            config,
            Entry {
                code: config.dir.join(format!("{name}.cwasm")),
                seal: config.dir.join(format!("{name}.seal")),
            },
        ))
    }

    /// What an entry of the component `digest` is sealed for.
    fn context(&self, digest: &str) -> Vec<u8> {
        [self.engine_key.as_bytes(), b"\0", digest.as_bytes()].concat()
    }
}

/// A component's cached compiled form, or why it must be compiled.
pub(crate) enum Lookup {
    /// Cached and verified.
    Hit(Compiled),
    /// Not cached, or discarded for the reason given.
    Miss(Option<Discarded>),
}

/// A cached compiled component, and what its binary said of its footprint.
pub(crate) struct Compiled {
    pub(crate) component: Component,
    /// The core instances one of its instances creates.
    pub(crate) core_instances: u32,
}

/// The two files of one entry.
struct Entry {
    /// The code, as wasmtime serialized it.
    code: PathBuf,
    /// Its [`Seal`].
    seal: PathBuf,
}

impl Entry {
    /// Discard this entry of bundle `bundle`'s component for `why`.
    fn discard(&self, bundle: &str, why: Discarded) -> Lookup {
        tracing::warn!(
            bundle,
            path = %self.code.display(),
            reason = %why,
            "refused a compiled component from the cache; discarding it and compiling again"
        );
        let _ = std::fs::remove_file(&self.seal);
        let _ = std::fs::remove_file(&self.code);
        Lookup::Miss(Some(why))
    }
}

/// The code file at `path`, opened for reading without following a
/// symbolic link.
fn open_code(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits().cast_signed());
    }
    options.open(path)
}

/// The component whose code `file` holds, mapped through the descriptor
/// checked rather than its name; none where that cannot be done, and the
/// file is read instead.
#[cfg(target_os = "linux")]
fn mapped(engine: &wasmtime::Engine, file: &File) -> Option<Component> {
    use std::os::fd::AsRawFd;
    let descriptor = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    // SAFETY: the file's fingerprint is the one sealed when its bytes last
    // verified against their MAC (see `lookup`), and it is opened through
    // the descriptor that fingerprint was taken from.
    unsafe { Component::deserialize_file(engine, descriptor) }.ok()
}

#[cfg(not(target_os = "linux"))]
fn mapped(_: &wasmtime::Engine, _: &File) -> Option<Component> {
    None
}

/// `bytes` as the file `path`, written beside it and renamed into place.
fn store(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
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
    use std::time::Duration;

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

    fn cache(engine: &wasmtime::Engine, dir: &Path, key: &CacheKey) -> ComponentCache {
        let config = CacheConfig {
            dir: dir.to_owned(),
            key: key.clone(),
        };
        ComponentCache::new(engine, Some(config))
    }

    /// The test component, its digest, and a cache of its own.
    struct Setup {
        engine: wasmtime::Engine,
        bytes: Vec<u8>,
        digest: String,
        dir: tempfile::TempDir,
        cache: ComponentCache,
    }

    impl Setup {
        fn new() -> Self {
            let engine = engine();
            let bytes = wat::parse_str(TOOL).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let cache = cache(&engine, dir.path(), &CacheKey::ephemeral());
            Self {
                digest: sha256_hex(&bytes),
                engine,
                bytes,
                dir,
                cache,
            }
        }
    }

    /// A clock far enough ahead that every file has settled.
    fn later() -> SystemTime {
        SystemTime::now() + Duration::from_secs(60)
    }

    /// How a lookup ended: a hit, or the reason it missed.
    fn looked_up(
        cache: &ComponentCache,
        engine: &wasmtime::Engine,
        digest: &str,
    ) -> Option<Discarded> {
        match cache.lookup(engine, digest, "t") {
            Lookup::Hit(compiled) => {
                assert_eq!(compiled.core_instances, 1);
                None
            }
            Lookup::Miss(why) => Some(why.expect("a discarded entry")),
        }
    }

    fn compile(
        cache: &ComponentCache,
        engine: &wasmtime::Engine,
        bytes: &[u8],
        discarded: Option<Discarded>,
    ) -> CacheOutcome {
        let digest = sha256_hex(bytes);
        cache
            .compile(engine, (bytes, &digest), Some(1), discarded)
            .unwrap()
            .1
    }

    #[test]
    fn an_entry_that_does_not_verify_is_discarded_and_compiled_again() {
        let Setup {
            engine,
            bytes,
            digest,
            dir,
            cache,
        } = Setup::new();
        assert!(matches!(
            cache.lookup(&engine, &digest, "t"),
            Lookup::Miss(None)
        ));
        assert_eq!(
            compile(&cache, &engine, &bytes, None),
            CacheOutcome::Compiled
        );
        assert_eq!(looked_up(&cache, &engine, &digest), None);
        let (_, entry) = cache.entry(&digest).unwrap();
        let (code, seal) = (
            std::fs::read(&entry.code).unwrap(),
            std::fs::read(&entry.seal).unwrap(),
        );

        let mut flipped = code.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        std::fs::write(&entry.code, &flipped).unwrap();
        assert_eq!(
            looked_up(&cache, &engine, &digest),
            Some(Discarded::Unverified)
        );
        assert!(
            !entry.code.exists() && !entry.seal.exists(),
            "discarded whole"
        );
        assert_eq!(
            compile(&cache, &engine, &bytes, Some(Discarded::Unverified)),
            CacheOutcome::Replaced(Discarded::Unverified)
        );
        assert_eq!(
            looked_up(&cache, &engine, &digest),
            None,
            "the entry was replaced"
        );

        std::fs::write(&entry.code, &code[..code.len() / 2]).unwrap();
        assert_eq!(
            looked_up(&cache, &engine, &digest),
            Some(Discarded::Unverified)
        );
        compile(&cache, &engine, &bytes, None);
        let mut forged = std::fs::read(&entry.seal).unwrap();
        forged[20] ^= 1;
        std::fs::write(&entry.seal, &forged).unwrap();
        assert_eq!(
            looked_up(&cache, &engine, &digest),
            Some(Discarded::Unverified)
        );
        compile(&cache, &engine, &bytes, None);
        std::fs::write(&entry.seal, &seal[..10]).unwrap();
        assert_eq!(
            looked_up(&cache, &engine, &digest),
            Some(Discarded::Malformed)
        );

        compile(&cache, &engine, &bytes, None);
        let other = super::tests::cache(&engine, dir.path(), &CacheKey::ephemeral());
        assert_eq!(
            looked_up(&other, &engine, &digest),
            Some(Discarded::Unverified),
            "an entry sealed with another key does not verify"
        );
    }

    #[test]
    fn an_entry_moved_under_another_components_name_does_not_verify() {
        let engine = engine();
        let first = wat::parse_str(TOOL).unwrap();
        let second = wat::parse_str(TOOL.replace("i32.const 7", "i32.const 8")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(&engine, dir.path(), &CacheKey::ephemeral());
        let (a, b) = (sha256_hex(&first), sha256_hex(&second));
        compile(&cache, &engine, &first, None);
        compile(&cache, &engine, &second, None);
        let ((_, to), (_, from)) = (cache.entry(&a).unwrap(), cache.entry(&b).unwrap());
        std::fs::copy(&from.code, &to.code).unwrap();
        std::fs::copy(&from.seal, &to.seal).unwrap();
        assert_eq!(looked_up(&cache, &engine, &a), Some(Discarded::Unverified));
    }

    #[test]
    fn a_settled_entry_is_mapped_by_its_fingerprint_and_a_swapped_file_is_still_caught() {
        let Setup {
            engine,
            bytes,
            digest,
            dir,
            mut cache,
        } = Setup::new();
        compile(&cache, &engine, &bytes, None);
        let (_, entry) = cache.entry(&digest).unwrap();
        let unsettled = std::fs::read(&entry.seal).unwrap();
        assert_eq!(looked_up(&cache, &engine, &digest), None);
        assert_eq!(
            std::fs::read(&entry.seal).unwrap(),
            unsettled,
            "too fresh to vouch for"
        );

        cache.clock = later;
        assert_eq!(looked_up(&cache, &engine, &digest), None);
        let settled = std::fs::read(&entry.seal).unwrap();
        assert_ne!(
            settled, unsettled,
            "the settled file's fingerprint is sealed"
        );
        assert_eq!(looked_up(&cache, &engine, &digest), None, "mapped");
        assert_eq!(std::fs::read(&entry.seal).unwrap(), settled);

        // Rewritten in place at the same length, a clock tick later: the
        // fingerprint no longer matches, so the bytes are read and their MAC
        // refuses them.
        std::thread::sleep(Duration::from_millis(50));
        let mut flipped = std::fs::read(&entry.code).unwrap();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        std::fs::write(&entry.code, &flipped).unwrap();
        assert_eq!(
            looked_up(&cache, &engine, &digest),
            Some(Discarded::Unverified)
        );

        // Replaced by a rename after its fingerprint was sealed.
        compile(&cache, &engine, &bytes, None);
        looked_up(&cache, &engine, &digest);
        let swapped = dir.path().join("swapped");
        std::fs::write(&swapped, &flipped).unwrap();
        std::fs::rename(&swapped, &entry.code).unwrap();
        assert_eq!(
            looked_up(&cache, &engine, &digest),
            Some(Discarded::Unverified)
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_entry_another_user_owns_or_may_write_is_read_and_verified_at_every_start() {
        use std::os::unix::fs::PermissionsExt;
        let Setup {
            engine,
            bytes,
            digest,
            dir,
            mut cache,
        } = Setup::new();
        cache.clock = later;
        compile(&cache, &engine, &bytes, None);
        let (_, entry) = cache.entry(&digest).unwrap();
        let unsettled = std::fs::read(&entry.seal).unwrap();
        let others_may_write = std::fs::Permissions::from_mode(0o666);
        std::fs::set_permissions(&entry.code, others_may_write).unwrap();
        assert_eq!(
            looked_up(&cache, &engine, &digest),
            None,
            "verified, so loaded"
        );
        assert_eq!(
            std::fs::read(&entry.seal).unwrap(),
            unsettled,
            "but never vouched for"
        );

        std::fs::set_permissions(&entry.code, std::fs::Permissions::from_mode(0o600)).unwrap();
        if rustix::process::geteuid().is_root() {
            // The same bytes, in a file another user owns (who could write
            // them once they were mapped).
            std::os::unix::fs::chown(&entry.code, Some(65534), Some(65534)).unwrap();
            assert_eq!(looked_up(&cache, &engine, &digest), None);
            assert_eq!(
                std::fs::read(&entry.seal).unwrap(),
                unsettled,
                "another user's file"
            );
            std::os::unix::fs::chown(&entry.code, Some(0), Some(0)).unwrap();
        }
        let link = dir.path().join("elsewhere");
        std::fs::rename(&entry.code, &link).unwrap();
        std::os::unix::fs::symlink(&link, &entry.code).unwrap();
        assert!(
            matches!(cache.lookup(&engine, &digest, "t"), Lookup::Miss(None)),
            "a symbolic link is never followed"
        );
        std::fs::remove_file(&entry.code).unwrap();
        std::fs::rename(&link, &entry.code).unwrap();
        assert_eq!(looked_up(&cache, &engine, &digest), None);
        assert_ne!(
            std::fs::read(&entry.seal).unwrap(),
            unsettled,
            "the user's alone: vouched for"
        );
    }

    #[test]
    fn a_components_digest_is_remembered_once_settled_and_read_again_when_it_changes() {
        let engine = engine();
        let dir = tempfile::tempdir().unwrap();
        let mut cache = cache(&engine, dir.path(), &CacheKey::ephemeral());
        let component = dir.path().join("tool.wasm");
        std::fs::write(&component, b"first").unwrap();
        let read = |cache: &ComponentCache| cache.digests().unwrap().read(&component).unwrap();

        let fresh = read(&cache);
        assert_eq!(fresh.digest, sha256_hex(b"first"));
        assert!(fresh.bytes.is_some());
        assert!(read(&cache).bytes.is_some(), "too fresh to remember");

        cache.clock = later;
        assert!(read(&cache).bytes.is_some(), "read, then remembered");
        let known = read(&cache);
        assert_eq!(
            (known.digest.as_str(), known.bytes, known.size),
            (sha256_hex(b"first").as_str(), None, 5)
        );

        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(&component, b"other").unwrap();
        let changed = read(&cache);
        assert_eq!(changed.digest, sha256_hex(b"other"), "written in place");
        assert_eq!(changed.bytes.as_deref(), Some(&b"other"[..]));

        let other_key = super::tests::cache(&engine, dir.path(), &CacheKey::ephemeral());
        assert!(
            other_key
                .digests()
                .unwrap()
                .read(&component)
                .unwrap()
                .bytes
                .is_some(),
            "a record sealed with another key is not believed"
        );
    }
}
