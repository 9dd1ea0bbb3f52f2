//! `plugin.toml`: the bundle manifest. Parsing rejects unknown keys; validation
//! rejects bad values. Every error names the file, the field and the value, so an
//! author can fix a manifest without reading Cordon's source. Each grant's
//! section and its checks belong to its capability (see
//! [`capabilities`](crate::capabilities)); this module puts them together.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cordon_kernel::HookPhase;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) mod checks;
pub(crate) mod kind;

pub use crate::capabilities::{DirGrant, DirMode, Grants, SecretUse, StagingPolicy, StateGrants};
pub use crate::state_keys::StateDeclaration;
pub use checks::{ManifestError, is_tool_name};
pub use kind::BundleKind;

use crate::capabilities::{self as registry, CommandTable, InterpreterTable, Sections};
use crate::limits::{Limits, RawLimits};
use checks::{Validator, is_contained_relative, is_identifier};

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
    /// The secrets it uses and where each may go, by name.
    pub secrets: BTreeMap<String, SecretUse>,
    /// The state keys it writes and declares, which every run adopts.
    pub state: BTreeMap<String, StateDeclaration>,
    /// Resource limits for every call into the bundle.
    pub limits: Limits,
    /// The `[config]` table, as the component reads it: a JSON object.
    pub config: Value,
    /// The commands an interpreter or command bundle serves; empty for
    /// other kinds.
    pub commands: Vec<String>,
    /// How `cordon build` makes the component from source; `None` for a
    /// bundle that ships its component.
    pub build: Option<BuildRecipe>,
}

/// The `[build]` table: a shell command run in the bundle folder that writes
/// the component the manifest names. `cordon build` runs it; loading a
/// bundle never does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildRecipe {
    /// The command, run with `sh -c` in the bundle folder. `CORDON_WIT`
    /// names a folder holding Cordon's WIT and `CORDON_SDK` one holding the
    /// SDKs, for commands that need them.
    pub command: String,
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
    #[serde(default)]
    build: Option<BuildRecipe>,
    #[serde(default)]
    interpreter: Option<InterpreterTable>,
    #[serde(default)]
    command: Option<CommandTable>,
    #[serde(default)]
    secrets: BTreeMap<String, SecretUse>,
    #[serde(default)]
    state: BTreeMap<String, StateDeclaration>,
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
        Validator::new(file).manifest(raw)
    }
}

impl Validator<'_> {
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
        let checked = registry::check_sections(
            kind,
            &raw.grants,
            Sections {
                staging,
                config: raw.config,
                interpreter: raw.interpreter,
                command: raw.command,
                secrets: raw.secrets,
                state: raw.state,
            },
            self,
        )?;
        let limits = raw.limits.validate().map_err(|(field, value, reason)| {
            self.invalid(&format!("limits.{field}"), value, &reason)
        })?;
        Ok(Manifest {
            name,
            version,
            kind,
            hooks,
            staging: checked.staging,
            description,
            component,
            sha256,
            grants: raw.grants,
            secrets: checked.secrets,
            state: checked.state,
            limits,
            config: checked.config,
            commands: checked.commands,
            build: self.build(raw.build)?,
        })
    }

    /// The `[build]` table: a command that is not blank.
    fn build(&self, build: Option<BuildRecipe>) -> Result<Option<BuildRecipe>, ManifestError> {
        match build {
            Some(recipe) if recipe.command.trim().is_empty() => Err(self.invalid(
                "build.command",
                &recipe.command,
                "give the shell command that builds the component, run in the bundle folder",
            )),
            build => Ok(build),
        }
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
    fn a_bundle_declares_only_keys_it_writes_with_schemas_that_compile() {
        let manifest = parse(&format!(
            "{GOOD}\n[state.notes]\nschema = {{ type = \"array\" }}\nscope = \"thread\"\n"
        ))
        .unwrap();
        let declared = &manifest.state["notes"];
        assert_eq!(declared.scope, cordon_kernel::Scope::Thread);
        assert_eq!(declared.merge, cordon_kernel::MergePolicy::Exclusive);
        let error = error_text(&format!("{GOOD}\n[state.other]\nmerge = \"commutative\"\n"));
        assert!(
            error.contains("field `state.\"other\"`") && error.contains("grants.state.write"),
            "{error}"
        );
        let error = error_text(&format!("{GOOD}\n[state.notes]\nschema = {{ type = 3 }}\n"));
        assert!(error.contains("field `state.\"notes\".schema`"), "{error}");
        let error = error_text(&format!("{GOOD}\n[state.notes]\nmerge = \"sometimes\"\n"));
        assert!(error.contains("sometimes"), "{error}");
    }

    #[test]
    fn interpreter_and_command_bundles_name_their_commands_in_their_own_table() {
        let head = |kind: &str| {
            format!(
                "[plugin]\nname = \"x\"\nversion = \"0.1.0\"\nkind = \"{kind}\"\ncomponent = \"x.wasm\"\n"
            )
        };
        let command = parse(&format!(
            "{}[command]\nnames = [\"tr\", \"seq\"]\n",
            head("command")
        ))
        .unwrap();
        assert_eq!(command.kind, BundleKind::Command);
        assert_eq!(command.commands, ["tr", "seq"]);
        let interpreter = parse(&format!(
            "{}[interpreter]\ncommands = [\"python3\"]\n",
            head("interpreter")
        ))
        .unwrap();
        assert_eq!(interpreter.commands, ["python3"]);
        for (text, field) in [
            (head("command"), "command.names"),
            (
                format!("{}[command]\nnames = []\n", head("command")),
                "command.names",
            ),
            (
                format!("{}[interpreter]\ncommands = [\"tr\"]\n", head("command")),
                "interpreter",
            ),
            (
                format!("{}[command]\nnames = [\"tr\"]\n", head("tool")),
                "command",
            ),
            (
                format!("{}[command]\nnames = [\"Tr!\"]\n", head("command")),
                "command.names[0]",
            ),
            (
                format!(
                    "{}[command]\nnames = [\"tr\"]\n[grants]\nenv = [\"HOME\"]\n",
                    head("command")
                ),
                "grants",
            ),
        ] {
            let error = error_text(&text);
            assert!(
                error.contains(&format!("field `{field}`")),
                "{text}: {error}"
            );
        }
    }

    #[test]
    fn a_build_table_names_its_command_and_a_blank_one_is_refused() {
        let manifest = parse(&format!("{GOOD}\n[build]\ncommand = \"make tool\"\n")).unwrap();
        assert_eq!(manifest.build.unwrap().command, "make tool");
        assert_eq!(parse(GOOD).unwrap().build, None);
        let error = error_text(&format!("{GOOD}\n[build]\ncommand = \"  \"\n"));
        assert!(error.contains("field `build.command`"), "{error}");
        let error = error_text(&format!(
            "{GOOD}\n[build]\ncommand = \"make\"\nshell = \"bash\"\n"
        ));
        assert!(error.contains("shell"), "{error}");
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
            (
                "[config]",
                "[grants]\nelicit = true\n[config]",
                "`grants.elicit` = true: only `tool` bundles ask questions",
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
