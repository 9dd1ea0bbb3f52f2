//! What `cordon build` and `cordon new` hand to toolchains: Cordon's WIT, the
//! SDKs and the bundle templates, embedded in the binary so that a bundle
//! built anywhere is built against the contract this host runs. They are
//! written out once per content into the cache, in the repository's layout
//! (`wit/`, `sdk/python/cordon_sdk/`, `sdk/rust/`, `sdk/js/`, `sdk/c/`,
//! `sdk/sandbox-kit/`, `sdk/paths/`), which is the layout the SDKs' own
//! relative paths expect.

use std::path::{Path, PathBuf};

use anyhow::Context;
use include_dir::{Dir, include_dir};
use sha2::{Digest, Sha256};

static WIT: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../wit");
static PYTHON: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/python/cordon_sdk");
static RUST: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/rust");
static JS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/js");
static C: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/c");
static SANDBOX_KIT: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/sandbox-kit");
static PATHS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/paths");
/// The Go runtime package Go bindings import, from the `wit-bindgen-go` crate
/// (see `build.rs`): its `wit/` folder, `go.mod` and licence.
pub(crate) static GO_PKG: Dir<'_> = include_dir!("$CORDON_GO_PKG/wit");
/// The Go runtime package's licence.
pub(crate) const GO_PKG_LICENSE: &str = include_str!(concat!(env!("CORDON_GO_PKG"), "/LICENSE"));
/// The Go runtime package's module file.
pub(crate) const GO_PKG_MODULE: &str = "module go.bytecodealliance.org/pkg\n\ngo 1.25\n";
/// The bundled `dir` backend's source, which `cordon new sandbox` starts from.
pub(crate) static DIR_BACKEND: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../plugins/dir/src");
/// The bundle templates `cordon new` fills in, one folder per language.
pub(crate) static TEMPLATES: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/templates");
/// The workspace manifest: the versions the Rust SDK's dependencies are pinned to.
const WORKSPACE: &str = include_str!("../../../Cargo.toml");

/// The embedded trees and where each goes under the written-out root.
fn trees() -> [(&'static str, &'static Dir<'static>); 7] {
    [
        ("wit", &WIT),
        ("sdk/python/cordon_sdk", &PYTHON),
        ("sdk/rust", &RUST),
        ("sdk/js", &JS),
        ("sdk/c", &C),
        ("sdk/sandbox-kit", &SANDBOX_KIT),
        ("sdk/paths", &PATHS),
    ]
}

/// The WIT and the SDKs, written out.
pub(crate) struct Sdk {
    root: PathBuf,
}

impl Sdk {
    /// Write them out under `cache` (once per content) and return where.
    pub(crate) fn materialize(cache: &Path) -> anyhow::Result<Self> {
        let root = cache.join(format!("sdk-{}", digest()));
        if !root.join(".complete").is_file() {
            write(&root).with_context(|| format!("writing Cordon's SDK to {}", root.display()))?;
        }
        Ok(Self { root })
    }

    /// The folder holding Cordon's `.wit` files (`CORDON_WIT`).
    pub(crate) fn wit(&self) -> PathBuf {
        self.root.join("wit")
    }

    /// The folder holding one folder per SDK (`CORDON_SDK`).
    pub(crate) fn sdks(&self) -> PathBuf {
        self.root.join("sdk")
    }
}

fn digest() -> String {
    let mut hash = Sha256::new();
    hash.update(WORKSPACE.as_bytes());
    for (at, tree) in trees() {
        for (path, bytes) in files(tree) {
            hash.update(at.as_bytes());
            hash.update(path.to_string_lossy().as_bytes());
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        }
    }
    hex_prefix(&hash.finalize())
}

fn hex_prefix(bytes: &[u8]) -> String {
    bytes[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Every file of `tree` but bytecode caches, with its path inside the tree.
pub(crate) fn files<'a>(tree: &'a Dir<'a>) -> Vec<(&'a Path, &'a [u8])> {
    let mut out = Vec::new();
    let mut pending = vec![tree];
    while let Some(dir) = pending.pop() {
        for file in dir.files() {
            if file.path().extension().is_none_or(|ext| ext != "pyc") {
                out.push((file.path(), file.contents()));
            }
        }
        pending.extend(dir.dirs().filter(|sub| {
            sub.path()
                .file_name()
                .is_none_or(|name| name != "__pycache__")
        }));
    }
    out.sort_by_key(|(path, _)| *path);
    out
}

/// Write every tree under a temporary folder beside `root`, then move it
/// into place, so a half-written SDK never sits under the real name.
fn write(root: &Path) -> anyhow::Result<()> {
    let parent = root.parent().context("the SDK folder has no parent")?;
    std::fs::create_dir_all(parent)?;
    let staging = tempfile::tempdir_in(parent)?;
    for (at, tree) in trees() {
        for (path, bytes) in files(tree) {
            let target = staging.path().join(at).join(path);
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&target, bytes)?;
        }
    }
    for krate in ["sdk/rust", "sdk/sandbox-kit", "sdk/paths"] {
        let manifest = staging.path().join(krate).join("Cargo.toml");
        let text = standalone_manifest(krate, &std::fs::read_to_string(&manifest)?)?;
        std::fs::write(&manifest, text)?;
    }
    std::fs::write(staging.path().join(".complete"), b"")?;
    let staged = staging.keep();
    if let Err(error) = std::fs::rename(&staged, root) {
        // Another build wrote it first; theirs is the same content.
        std::fs::remove_dir_all(&staged).ok();
        if !root.join(".complete").is_file() {
            return Err(error.into());
        }
    }
    Ok(())
}

/// The workspace's pin of the crate `krate`, as inline TOML
/// (`"1.0.145"` or `{ version = "1.0.228", features = ["derive"] }`).
pub(crate) fn pinned_dependency(krate: &str) -> anyhow::Result<String> {
    let workspace: toml::Table = toml::from_str(WORKSPACE)?;
    let pin = workspace
        .get("workspace")
        .and_then(|value| value.get("dependencies"))
        .and_then(|value| value.get(krate))
        .with_context(|| format!("the workspace pins no crate `{krate}`"))?;
    Ok(pin.to_string())
}

/// The manifest of the workspace member at `member` (a path from the
/// repository root) with every `workspace = true` replaced by the
/// workspace's own value, path dependencies made relative to the member, so
/// it builds outside the repository.
fn standalone_manifest(member: &str, text: &str) -> anyhow::Result<String> {
    let workspace: toml::Table = toml::from_str(WORKSPACE)?;
    let shared = |section: &str| {
        workspace
            .get("workspace")
            .and_then(|value| value.get(section))
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_default()
    };
    let (package, dependencies) = (shared("package"), shared("dependencies"));
    let up = "../".repeat(Path::new(member).components().count());
    let mut manifest: toml::Table = toml::from_str(text)?;
    manifest.remove("lints");
    for (section, values) in [
        ("package", &package),
        ("dependencies", &dependencies),
        ("dev-dependencies", &dependencies),
    ] {
        let Some(table) = manifest
            .get_mut(section)
            .and_then(toml::Value::as_table_mut)
        else {
            continue;
        };
        for (key, value) in table.iter_mut() {
            let inherited = value
                .as_table()
                .and_then(|fields| fields.get("workspace"))
                .and_then(toml::Value::as_bool)
                == Some(true);
            if inherited {
                let mut resolved = values
                    .get(key)
                    .with_context(|| format!("the workspace has no `{key}` for `[{section}]`"))?
                    .clone();
                if let Some(path) = resolved.get_mut("path") {
                    let relative = format!("{up}{}", path.as_str().unwrap_or_default());
                    *path = toml::Value::String(relative);
                }
                *value = if section == "package" {
                    resolved
                } else {
                    with_member_keys(resolved, value)
                };
            }
        }
    }
    Ok(toml::to_string(&manifest)?)
}

/// The workspace's `resolved` entry of a dependency, with what the member's
/// own entry `member` adds to it (`optional`, more `features`), as Cargo
/// merges them.
fn with_member_keys(resolved: toml::Value, member: &toml::Value) -> toml::Value {
    let mut table = match resolved {
        toml::Value::Table(table) => table,
        version => toml::Table::from_iter([("version".to_owned(), version)]),
    };
    for (key, extra) in member.as_table().into_iter().flatten() {
        match (key.as_str(), extra) {
            ("workspace", _) => {}
            ("features", toml::Value::Array(more)) => {
                let features = table
                    .entry("features")
                    .or_insert_with(|| toml::Value::Array(Vec::new()));
                if let toml::Value::Array(features) = features {
                    features.extend(more.iter().cloned());
                }
            }
            _ => {
                table.insert(key.clone(), extra.clone());
            }
        }
    }
    toml::Value::Table(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rust_sdk_manifest_stands_alone() {
        let text = std::str::from_utf8(RUST.get_file("Cargo.toml").unwrap().contents()).unwrap();
        let manifest = standalone_manifest("sdk/rust", text).unwrap();
        assert!(!manifest.contains("workspace"), "{manifest}");
        let parsed: toml::Table = toml::from_str(&manifest).unwrap();
        assert!(
            parsed["dependencies"]["wit-bindgen"]
                .get("version")
                .is_some()
        );
        assert_eq!(parsed["package"]["edition"].as_str(), Some("2024"));
        assert_eq!(
            parsed["dependencies"]["wasi"]["optional"].as_bool(),
            Some(true),
            "what the member adds to the workspace's entry stays: {manifest}"
        );
        assert!(parsed["features"]["http"].as_array().is_some());
    }

    #[test]
    fn path_dependencies_point_at_their_written_out_copies() {
        let text =
            std::str::from_utf8(SANDBOX_KIT.get_file("Cargo.toml").unwrap().contents()).unwrap();
        let manifest = standalone_manifest("sdk/sandbox-kit", text).unwrap();
        let parsed: toml::Table = toml::from_str(&manifest).unwrap();
        assert_eq!(
            parsed["dependencies"]["cordon-paths"]["path"].as_str(),
            Some("../../sdk/paths")
        );
    }

    #[test]
    fn writing_out_is_once_per_content_and_complete() {
        let cache = tempfile::tempdir().unwrap();
        let sdk = Sdk::materialize(cache.path()).unwrap();
        assert!(sdk.wit().join("worlds.wit").is_file());
        assert!(sdk.sdks().join("python/cordon_sdk/__init__.py").is_file());
        assert!(sdk.sdks().join("rust/src/lib.rs").is_file());
        let again = Sdk::materialize(cache.path()).unwrap();
        assert_eq!(again.root, sdk.root);
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 1);
    }
}
