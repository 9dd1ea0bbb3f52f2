//! The manifest as an approval pins it: everything a component runs under
//! but its grants (the plugin's kind, hooks and staging, `[config]`,
//! `[limits]`, `[secrets]`, `[state]`, `[interpreter]`, `[command]`), as values, whatever
//! the layout, comments or order of the file. Grants are compared by what
//! they allow instead (see [`Grants::beyond`]), since an approval may grant
//! fewer than asked. What changes nothing a component runs under is left
//! out: the version and description, which only inform; the component's
//! file name and `sha256`, as the approval pins the component's own digest;
//! and `[build]`, which loading never runs.
//!
//! A change to any pinned value is named as the path to it in the file and
//! its value before and after, so the operator sees exactly what would take
//! effect: `` `config.deny-tools`: ["rm"] → [] ``.
//!
//! [`Grants::beyond`]: crate::manifest::Grants::beyond

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::manifest::ManifestError;

/// The tables of a manifest an approval does not pin as values.
const UNPINNED_TABLES: &[&str] = &["grants", "build"];

/// The fields of `[plugin]` an approval does not pin.
const UNPINNED_FIELDS: &[&str] = &["version", "description", "component", "sha256"];

/// How long a value may be shown in a change before it is cut.
const SHOWN: usize = 120;

/// A manifest as an approval pins it: every table but `[grants]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Pinned(toml::Table);

impl Pinned {
    /// The pinned part of manifest `text`, read from `file`.
    pub fn of(file: &Path, text: &str) -> Result<Self, ManifestError> {
        let mut table: toml::Table =
            toml::from_str(text).map_err(|error| ManifestError::Parse {
                file: file.to_owned(),
                message: error.to_string().trim_end().to_owned(),
            })?;
        for name in UNPINNED_TABLES {
            table.remove(*name);
        }
        if let Some(toml::Value::Table(plugin)) = table.get_mut("plugin") {
            for name in UNPINNED_FIELDS {
                plugin.remove(*name);
            }
        }
        Ok(Self(table))
    }

    /// What differs in `now` from these values, one line per value: the
    /// path to it and its value here and there. Empty when nothing does.
    pub fn changes(&self, now: &Pinned) -> Vec<String> {
        let mut lines = Vec::new();
        compare("", &self.0, &now.0, &mut lines);
        lines
    }
}

fn compare(at: &str, was: &toml::Table, now: &toml::Table, lines: &mut Vec<String>) {
    let keys: BTreeSet<&String> = was.keys().chain(now.keys()).collect();
    for key in keys {
        let path = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        match (was.get(key), now.get(key)) {
            (Some(toml::Value::Table(was)), Some(toml::Value::Table(now))) => {
                compare(&path, was, now, lines);
            }
            (Some(was), Some(now)) if was != now => {
                lines.push(format!("`{path}`: {} → {}", shown(was), shown(now)));
            }
            (Some(was), None) => lines.push(format!("`{path}` removed (was {})", shown(was))),
            (None, Some(now)) => lines.push(format!("`{path}` added: {}", shown(now))),
            _ => {}
        }
    }
}

/// `value` as TOML writes it inline, cut when long.
fn shown(value: &toml::Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN {
        return text;
    }
    let cut: String = text.chars().take(SHOWN).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pinned(text: &str) -> Pinned {
        Pinned::of(Path::new("plugin.toml"), text).unwrap()
    }

    const GUARD: &str = "[plugin]\nname = \"guard\"\nkind = \"hook\"\nhooks = [\"before-tool-call\"]\n\
        [grants.state]\nread = [\"k\"]\n[config]\ndeny-tools = [\"rm\"]\n[limits]\ntimeout-ms = 2000\n";

    #[test]
    fn layout_comments_and_grants_change_nothing_pinned() {
        let same = "# the guard\n[limits]\ntimeout-ms = 2000\n[config]\ndeny-tools = [ \"rm\" ]\n\
            [plugin]\nhooks = [\"before-tool-call\"]\nkind = \"hook\"\nname = \"guard\"\n\
            [grants]\nenv = [\"LANG\"]\n";
        assert_eq!(pinned(GUARD).changes(&pinned(same)), Vec::<String>::new());
    }

    #[test]
    fn each_changed_value_is_named_with_its_path_and_both_values() {
        let changed = "[plugin]\nname = \"guard\"\nkind = \"hook\"\nhooks = [\"after-tool-call\"]\n\
            [config]\ndeny-tools = []\nask-tools = [\"x\"]\n";
        assert_eq!(
            pinned(GUARD).changes(&pinned(changed)),
            [
                "`config.ask-tools` added: [\"x\"]",
                "`config.deny-tools`: [\"rm\"] → []",
                "`limits` removed (was { timeout-ms = 2000 })",
                "`plugin.hooks`: [\"before-tool-call\"] → [\"after-tool-call\"]",
            ]
        );
    }

    #[test]
    fn what_a_component_does_not_run_under_is_not_pinned() {
        let informed = format!(
            "{GUARD}[build]\ncommand = \"make\"\n"
        )
        .replace(
            "[plugin]\n",
            "[plugin]\nversion = \"9.9.9\"\ndescription = \"new words\"\ncomponent = \"other.wasm\"\n",
        );
        assert_eq!(
            pinned(GUARD).changes(&pinned(&informed)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_long_value_is_cut() {
        let long = format!("[config]\npattern = \"{}\"\n", "a".repeat(500));
        let lines = pinned("[config]\npattern = \"a\"\n").changes(&pinned(&long));
        assert!(lines[0].ends_with('…') && lines[0].len() < 300, "{lines:?}");
    }
}
