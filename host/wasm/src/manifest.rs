//! `plugin.toml`: the bundle manifest. Parsing rejects unknown keys; validation
//! rejects bad values. Every error names the file, the field and the value, so an
//! author can fix a manifest without reading Cordon's source.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use cordon_kernel::HookPhase;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::limits::{Limits, RawLimits};
use crate::workspace::paths::RESERVED;

/// The file name of a bundle manifest.
pub const MANIFEST_FILE: &str = "plugin.toml";

/// A parsed, validated bundle manifest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifest {
    /// Bundle name, unique within a plugins directory.
    pub name: String,
    /// Bundle version.
    pub version: semver::Version,
    /// What the bundle provides.
    pub kind: BundleKind,
    /// The phases a hook bundle handles, in loop order; empty for other kinds.
    pub hooks: Vec<HookPhase>,
    /// When a sandbox backend's writes are staged by the host.
    pub staging: StagingPolicy,
    /// One line for operators.
    pub description: String,
    /// The component file, relative to the bundle folder.
    pub component: PathBuf,
    /// Expected SHA-256 of the component, lowercase hex.
    pub sha256: Option<String>,
    /// What the bundle asks to be granted.
    pub grants: Grants,
    /// Resource limits for every call into the bundle.
    pub limits: Limits,
    /// The `[config]` table, as the component reads it: a JSON object.
    pub config: Value,
}

/// What a bundle provides. Closed: the host refuses kinds it cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BundleKind {
    /// Exports `cordon:plugin/tool`.
    Tool,
    /// Exports hook interfaces.
    Hook,
    /// Exports `cordon:plugin/workspace`.
    Sandbox,
}

/// When the host stages a sandbox backend's file writes instead of letting the
/// backend write its folder (`plugin.staging`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StagingPolicy {
    /// When the run is transactional; otherwise the backend writes its granted
    /// folder directly (or is refused, if the grant is read-only).
    #[default]
    Transactional,
    /// Always: the backend keeps nothing of its own (the `memory` backend).
    Always,
}

impl fmt::Display for BundleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Tool => "tool",
            Self::Hook => "hook",
            Self::Sandbox => "sandbox",
        })
    }
}

/// Capabilities a bundle requests. Everything absent is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Environment variables passed through from the host, by name.
    #[serde(default)]
    pub env: Vec<String>,
    /// Tools the component may call through `cordon:plugin/tools`.
    #[serde(default)]
    pub tools: Vec<String>,
    /// State keys the component may read and write.
    #[serde(default)]
    pub state: StateGrants,
    /// Directories preopened for the component.
    #[serde(default)]
    pub dirs: Vec<DirGrant>,
}

/// State keys, with reading and writing granted separately.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateGrants {
    /// Keys the component may read.
    #[serde(default)]
    pub read: Vec<String>,
    /// Keys the component may write.
    #[serde(default)]
    pub write: Vec<String>,
}

/// A directory the component sees at `guest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirGrant {
    /// Host directory, relative to the operator's workspace root; never outside it.
    pub host: PathBuf,
    /// Absolute path at which the component sees the directory.
    pub guest: String,
    /// Whether the component may change it.
    pub mode: DirMode,
}

/// Access to a granted directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirMode {
    /// Read only.
    Ro,
    /// Read and write.
    Rw,
}

impl fmt::Display for DirMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ro => "ro",
            Self::Rw => "rw",
        })
    }
}

/// Why a manifest was rejected.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("{}: cannot read manifest: {source}", file.display())]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, has an unknown key or a value of the wrong type.
    #[error("{}: {message}", file.display())]
    Parse { file: PathBuf, message: String },
    /// A value is present and well typed, but not acceptable.
    #[error("{}: field `{field}` = {value}: {reason}", file.display())]
    Invalid {
        file: PathBuf,
        field: String,
        value: String,
        reason: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    plugin: RawPlugin,
    #[serde(default)]
    grants: Grants,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    config: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    name: String,
    version: String,
    kind: BundleKind,
    #[serde(default)]
    description: String,
    component: PathBuf,
    sha256: Option<String>,
    #[serde(default)]
    hooks: Vec<String>,
    staging: Option<StagingPolicy>,
}

impl Manifest {
    /// Read and validate the manifest at `file`.
    pub fn load(file: &Path) -> Result<Self, ManifestError> {
        let text = std::fs::read_to_string(file).map_err(|source| ManifestError::Read {
            file: file.to_owned(),
            source,
        })?;
        Self::parse(file, &text)
    }

    /// Validate manifest `text`, reporting errors against `file`.
    pub fn parse(file: &Path, text: &str) -> Result<Self, ManifestError> {
        let raw: RawManifest = toml::from_str(text).map_err(|error| ManifestError::Parse {
            file: file.to_owned(),
            message: error.to_string().trim_end().to_owned(),
        })?;
        Validator { file }.manifest(raw)
    }
}

struct Validator<'a> {
    file: &'a Path,
}

impl Validator<'_> {
    fn invalid(&self, field: &str, value: impl fmt::Debug, reason: &str) -> ManifestError {
        ManifestError::Invalid {
            file: self.file.to_owned(),
            field: field.to_owned(),
            value: format!("{value:?}"),
            reason: reason.to_owned(),
        }
    }

    fn manifest(&self, raw: RawManifest) -> Result<Manifest, ManifestError> {
        let RawPlugin {
            name,
            version,
            kind,
            description,
            component,
            sha256,
            hooks,
            staging,
        } = raw.plugin;
        if !is_identifier(&name, |c| c == '-' || c == '_') || name.len() > 64 {
            return Err(self.invalid(
                "plugin.name",
                &name,
                "use 1 to 64 lowercase letters, digits, `-` or `_`, starting with a letter or digit",
            ));
        }
        let version = semver::Version::parse(&version)
            .map_err(|error| self.invalid("plugin.version", &version, &error.to_string()))?;
        if !is_contained_relative(&component) || component.as_os_str().is_empty() {
            return Err(self.invalid(
                "plugin.component",
                &component,
                "must be a relative path inside the bundle folder",
            ));
        }
        let sha256 = sha256
            .map(|digest| {
                let lower = digest.to_ascii_lowercase();
                if lower.len() == 64 && lower.bytes().all(|b| b.is_ascii_hexdigit()) {
                    Ok(lower)
                } else {
                    Err(self.invalid("plugin.sha256", &digest, "must be 64 hex digits"))
                }
            })
            .transpose()?;
        let hooks = self.hooks(kind, &hooks)?;
        let staging = match (kind, staging) {
            (BundleKind::Sandbox, staging) => staging.unwrap_or_default(),
            (_, None) => StagingPolicy::default(),
            (_, Some(staging)) => {
                return Err(self.invalid(
                    "plugin.staging",
                    staging,
                    &format!("only `sandbox` bundles stage writes; this bundle's kind is `{kind}`"),
                ));
            }
        };
        self.grants(&raw.grants)?;
        if kind != BundleKind::Tool && !raw.grants.tools.is_empty() {
            return Err(self.invalid(
                "grants.tools",
                &raw.grants.tools,
                &format!(
                    "only `tool` bundles call tools; a {kind} bundle runs inside the gate, where its calls could not be judged"
                ),
            ));
        }
        let config = match raw.config {
            Some(table) => serde_json::to_value(table)
                .map_err(|error| self.invalid("config", "[config]", &error.to_string()))?,
            None => Value::Object(serde_json::Map::new()),
        };
        let limits = raw.limits.validate().map_err(|(field, value, reason)| {
            self.invalid(&format!("limits.{field}"), value, &reason)
        })?;
        Ok(Manifest {
            name,
            version,
            kind,
            hooks,
            staging,
            description,
            component,
            sha256,
            grants: raw.grants,
            limits,
            config,
        })
    }

    /// The phases `names` lists: at least one for a hook bundle, none for others.
    fn hooks(&self, kind: BundleKind, names: &[String]) -> Result<Vec<HookPhase>, ManifestError> {
        if kind != BundleKind::Hook {
            return match names.first() {
                Some(name) => Err(self.invalid(
                    "plugin.hooks",
                    name,
                    &format!("only `hook` bundles handle hooks; this bundle's kind is `{kind}`"),
                )),
                None => Ok(Vec::new()),
            };
        }
        if names.is_empty() {
            return Err(self.invalid(
                "plugin.hooks",
                names,
                "a hook bundle lists the phases it handles: before-inference, before-tool-call, after-tool-call, step-end",
            ));
        }
        let mut phases = Vec::new();
        for (index, name) in names.iter().enumerate() {
            let field = format!("plugin.hooks[{index}]");
            let phase = HookPhase::parse(name).ok_or_else(|| {
                self.invalid(
                    &field,
                    name,
                    "not a hook phase; use before-inference, before-tool-call, after-tool-call or step-end",
                )
            })?;
            if phases.contains(&phase) {
                return Err(self.invalid(&field, name, "is listed twice"));
            }
            phases.push(phase);
        }
        phases.sort();
        Ok(phases)
    }

    fn grants(&self, grants: &Grants) -> Result<(), ManifestError> {
        self.unique_names(
            "grants.env",
            &grants.env,
            is_env_name,
            "not a valid variable name",
        )?;
        self.unique_names(
            "grants.tools",
            &grants.tools,
            is_tool_name,
            "not a valid tool name",
        )?;
        for (field, keys) in [
            ("grants.state.read", &grants.state.read),
            ("grants.state.write", &grants.state.write),
        ] {
            self.unique_names(field, keys, is_state_key, "not a valid state key")?;
        }
        let mut guests = BTreeSet::new();
        for (index, dir) in grants.dirs.iter().enumerate() {
            if !is_contained_relative(&dir.host) {
                return Err(self.invalid(
                    &format!("grants.dirs[{index}].host"),
                    &dir.host,
                    "must be a relative path inside the workspace root, without `..`",
                ));
            }
            let first = dir
                .host
                .components()
                .find(|part| *part != Component::CurDir);
            if first.is_some_and(|part| part.as_os_str() == RESERVED) {
                return Err(self.invalid(
                    &format!("grants.dirs[{index}].host"),
                    &dir.host,
                    &format!("`{RESERVED}` holds Cordon's run store; no bundle is granted it"),
                ));
            }
            let guest_ok = dir.guest.starts_with('/')
                && !dir.guest.split('/').any(|part| part == ".." || part == ".");
            if !guest_ok {
                return Err(self.invalid(
                    &format!("grants.dirs[{index}].guest"),
                    &dir.guest,
                    "must be an absolute guest path without `.` or `..`",
                ));
            }
            if !guests.insert(dir.guest.as_str()) {
                return Err(self.invalid(
                    &format!("grants.dirs[{index}].guest"),
                    &dir.guest,
                    "is granted twice",
                ));
            }
        }
        Ok(())
    }

    fn unique_names(
        &self,
        field: &str,
        names: &[String],
        valid: fn(&str) -> bool,
        reason: &str,
    ) -> Result<(), ManifestError> {
        let mut seen = BTreeSet::new();
        for (index, name) in names.iter().enumerate() {
            if !valid(name) {
                return Err(self.invalid(&format!("{field}[{index}]"), name, reason));
            }
            if !seen.insert(name) {
                return Err(self.invalid(&format!("{field}[{index}]"), name, "is listed twice"));
            }
        }
        Ok(())
    }
}

fn is_identifier(name: &str, extra: impl Fn(char) -> bool) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || extra(c))
}

/// Whether `name` is an acceptable tool name: lowercase letters, digits, `.`, `_`
/// and `-`, starting with a letter or digit, at most 128 characters.
pub fn is_tool_name(name: &str) -> bool {
    name.len() <= 128 && is_identifier(name, |c| matches!(c, '.' | '_' | '-'))
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_state_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 256
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':'))
}

fn is_contained_relative(path: &Path) -> bool {
    path.components()
        .all(|part| matches!(part, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
        [plugin]
        name = "notes"
        version = "0.1.0"
        kind = "tool"
        component = "notes.wasm"
        [grants.state]
        read = ["notes"]
        write = ["notes"]
        [[grants.dirs]]
        host = "docs"
        guest = "/docs"
        mode = "ro"
        [limits]
        memory-mib = 32
    "#;

    fn parse(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse(Path::new("bundle/plugin.toml"), text)
    }

    fn error_text(text: &str) -> String {
        parse(text)
            .expect_err("manifest should be rejected")
            .to_string()
    }

    #[test]
    fn a_complete_manifest_parses_with_defaults_filled_in() {
        let manifest = parse(GOOD).unwrap();
        assert_eq!(manifest.name, "notes");
        assert_eq!(manifest.kind, BundleKind::Tool);
        assert_eq!(manifest.grants.dirs[0].mode, DirMode::Ro);
        assert_eq!(manifest.limits.memory_bytes, 32 << 20);
        assert_eq!(
            manifest.limits,
            Limits {
                memory_bytes: 32 << 20,
                ..Limits::default()
            }
        );
    }

    #[test]
    fn an_unknown_key_is_named_with_the_file() {
        let text = error_text(&GOOD.replace("kind = \"tool\"", "kind = \"tool\"\ncolour = 1"));
        assert!(text.starts_with("bundle/plugin.toml"), "{text}");
        assert!(text.contains("colour"), "{text}");
    }

    #[test]
    fn an_unknown_kind_is_rejected() {
        let text = error_text(&GOOD.replace("\"tool\"", "\"daemon\""));
        assert!(text.contains("daemon"), "{text}");
    }

    #[test]
    fn bad_values_name_their_field_and_value() {
        for (from, to, field) in [
            ("name = \"notes\"", "name = \"Notes!\"", "plugin.name"),
            ("\"0.1.0\"", "\"one\"", "plugin.version"),
            ("\"notes.wasm\"", "\"../notes.wasm\"", "plugin.component"),
            (
                "host = \"docs\"",
                "host = \"../etc\"",
                "grants.dirs[0].host",
            ),
            ("host = \"docs\"", "host = \"/etc\"", "grants.dirs[0].host"),
            (
                "host = \"docs\"",
                "host = \"./.cordon/x\"",
                "grants.dirs[0].host",
            ),
            ("memory-mib = 32", "staged-mib = 0", "limits.staged-mib"),
            (
                "guest = \"/docs\"",
                "guest = \"docs\"",
                "grants.dirs[0].guest",
            ),
            ("memory-mib = 32", "memory-mib = 0", "limits.memory-mib"),
            (
                "memory-mib = 32",
                "memory-mib = 100000",
                "limits.memory-mib",
            ),
            (
                "read = [\"notes\"]",
                "read = [\"notes\", \"notes\"]",
                "grants.state.read[1]",
            ),
        ] {
            let text = error_text(&GOOD.replacen(from, to, 1));
            assert!(text.contains(&format!("`{field}`")), "{field}: {text}");
        }
    }

    const HOOK: &str = r#"
        [plugin]
        name = "guard"
        version = "0.1.0"
        kind = "hook"
        hooks = ["before-tool-call", "before-inference"]
        component = "guard.wasm"
        [config]
        max-calls = 3
        patterns = ["a", "b"]
    "#;

    #[test]
    fn a_hook_manifest_lists_its_phases_in_loop_order_and_carries_its_config() {
        let manifest = parse(HOOK).unwrap();
        assert_eq!(
            manifest.hooks,
            vec![HookPhase::BeforeInference, HookPhase::BeforeToolCall]
        );
        assert_eq!(
            manifest.config,
            serde_json::json!({"max-calls": 3, "patterns": ["a", "b"]})
        );
        assert_eq!(parse(GOOD).unwrap().config, serde_json::json!({}));
    }

    #[test]
    fn hook_lists_are_checked_against_the_kind_and_the_phase_names() {
        for (from, to, needle) in [
            (
                "\"before-inference\"",
                "\"on-start\"",
                "`plugin.hooks[1]` = \"on-start\"",
            ),
            (
                "\"before-inference\"",
                "\"before-tool-call\"",
                "listed twice",
            ),
            (
                "hooks = [\"before-tool-call\", \"before-inference\"]",
                "hooks = []",
                "lists the phases",
            ),
            ("kind = \"hook\"", "kind = \"tool\"", "only `hook` bundles"),
            (
                "[config]",
                "[grants]\ntools = [\"jq.query\"]\n[config]",
                "only `tool` bundles call tools",
            ),
        ] {
            let text = error_text(&HOOK.replacen(from, to, 1));
            assert!(text.contains(needle), "{needle}: {text}");
        }
    }

    #[test]
    fn a_malformed_digest_is_rejected() {
        let text = error_text(&GOOD.replace(
            "component = \"notes.wasm\"",
            "component = \"notes.wasm\"\nsha256 = \"abc\"",
        ));
        assert!(
            text.contains("plugin.sha256") && text.contains("abc"),
            "{text}"
        );
    }
}
