//! File rules: paths of the workspace that no component may touch (`deny`)
//! or change (`read-only`), whatever tool or backend asks. Argument rules
//! (`files.read(path=...)`) judge what a call *says*; file rules judge what
//! the file layer is *asked to do*, so `bash cat .env`, a grep over the tree, a
//! glob that would list the file and a link planted to it are all refused
//! alike. The host enforces them where components reach files: the WASI
//! filesystem and the staging import.
//!
//! A rule is a glob over workspace paths (`**/.env`, `secrets/**`,
//! `Cargo.lock`); `*` stays inside one path component and `**` spans any
//! number. A rule that names a directory covers everything beneath it. A
//! denied path is also left out of every listing.

use std::fmt;

use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::Deserialize;

/// What a component asks to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAccess {
    /// Read it, stat it, list it.
    Read,
    /// Create, write, truncate, remove, rename or link it.
    Write,
}

/// Which kind of rule refused an access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRuleKind {
    /// The path may not be touched at all.
    Deny,
    /// The path may be read but not changed.
    ReadOnly,
}

impl fmt::Display for FileRuleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Deny => "deny",
            Self::ReadOnly => "read-only",
        })
    }
}

/// The rule that refused an access.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("file rule {kind} `{rule}` covers {path}")]
pub struct FileRefusal {
    /// The kind of rule.
    pub kind: FileRuleKind,
    /// The rule as written.
    pub rule: String,
    /// The workspace path it covers.
    pub path: String,
}

/// One rule as written, with its glob.
#[derive(Debug, Clone)]
struct FileRule {
    text: String,
    glob: Glob,
}

impl FileRule {
    fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim().trim_start_matches("./");
        if trimmed.is_empty() {
            return Err("a file rule names a path or a glob".into());
        }
        if trimmed.starts_with('/') || trimmed.split('/').any(|part| part == "..") {
            return Err("a file rule is relative to the workspace root, without `..`".into());
        }
        let glob = GlobBuilder::new(trimmed.trim_end_matches('/'))
            .literal_separator(true)
            .build()
            .map_err(|error| error.to_string())?;
        Ok(Self {
            text: text.trim().to_owned(),
            glob,
        })
    }
}

/// Rules of one kind, matched together: the guard asks on every file
/// operation, so one automaton answers for all of them. Should the set of
/// them not compile (each one does), each rule is matched on its own.
#[derive(Debug, Clone, Default)]
struct RuleList {
    rules: Vec<FileRule>,
    set: Option<GlobSet>,
    each: Vec<GlobMatcher>,
}

impl RuleList {
    fn new(rules: Vec<FileRule>) -> Self {
        let mut builder = GlobSetBuilder::new();
        for rule in &rules {
            builder.add(rule.glob.clone());
        }
        let set = builder.build().ok();
        let each = match set {
            Some(_) => Vec::new(),
            None => rules
                .iter()
                .map(|rule| rule.glob.compile_matcher())
                .collect(),
        };
        Self { rules, set, each }
    }

    /// The first rule, in written order, matching `path` itself.
    fn first_match(&self, path: &str) -> Option<usize> {
        match &self.set {
            Some(set) if !set.is_match(path) => None,
            Some(set) => set.matches(path).into_iter().min(),
            None => self.each.iter().position(|glob| glob.is_match(path)),
        }
    }

    fn extended(&self, more: impl IntoIterator<Item = FileRule>) -> Self {
        let mut rules = self.rules.clone();
        rules.extend(more);
        Self::new(rules)
    }

    /// The first rule, in written order, covering `path`: matching it or one
    /// of its ancestors.
    fn covering(&self, path: &str) -> Option<&FileRule> {
        if path.is_empty() || self.rules.is_empty() {
            return None;
        }
        path.match_indices('/')
            .map(|(slash, _)| &path[..slash])
            .chain(std::iter::once(path))
            .filter_map(|prefix| self.first_match(prefix))
            .min()
            .map(|index| &self.rules[index])
    }
}

/// The file rules of a run: the agent's and the operator's together.
#[derive(Debug, Clone, Default)]
pub struct FileRules {
    deny: RuleList,
    read_only: RuleList,
}

/// `[files]` of a policy, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct FileRulesTable {
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    read_only: Vec<String>,
}

impl FileRulesTable {
    /// The rules, or the list and index of the first bad one (`deny[1]`),
    /// the rule and why.
    pub(crate) fn build(self) -> Result<FileRules, (String, String, String)> {
        let parse = |list: &str, texts: Vec<String>| {
            texts
                .into_iter()
                .enumerate()
                .map(|(index, text)| {
                    FileRule::parse(&text)
                        .map_err(|reason| (format!("{list}[{index}]"), text, reason))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(FileRules {
            deny: RuleList::new(parse("deny", self.deny)?),
            read_only: RuleList::new(parse("read-only", self.read_only)?),
        })
    }
}

impl FileRules {
    /// No rules: every path is as the grants have it.
    pub fn new() -> Self {
        Self::default()
    }

    /// These rules with `deny` and `read_only` added.
    pub fn with(self, deny: &[&str], read_only: &[&str]) -> Result<Self, String> {
        let parse = |texts: &[&str]| {
            texts
                .iter()
                .map(|text| FileRule::parse(text).map_err(|reason| format!("{text:?}: {reason}")))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Self {
            deny: self.deny.extended(parse(deny)?),
            read_only: self.read_only.extended(parse(read_only)?),
        })
    }

    /// These rules and `other`'s together.
    pub fn union(self, other: &FileRules) -> Self {
        Self {
            deny: self.deny.extended(other.deny.rules.iter().cloned()),
            read_only: self
                .read_only
                .extended(other.read_only.rules.iter().cloned()),
        }
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.deny.rules.is_empty() && self.read_only.rules.is_empty()
    }

    /// Whether `access` to the workspace path `path` (normalized) is allowed,
    /// or the rule that refuses it.
    pub fn check(&self, path: &str, access: FileAccess) -> Result<(), FileRefusal> {
        let refuse = |kind, rule: &FileRule| FileRefusal {
            kind,
            rule: rule.text.clone(),
            path: path.to_owned(),
        };
        if let Some(rule) = self.deny.covering(path) {
            return Err(refuse(FileRuleKind::Deny, rule));
        }
        if access == FileAccess::Write
            && let Some(rule) = self.read_only.covering(path)
        {
            return Err(refuse(FileRuleKind::ReadOnly, rule));
        }
        Ok(())
    }

    /// Whether listings leave `path` out.
    pub fn hides(&self, path: &str) -> bool {
        self.deny.covering(path).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> FileRules {
        FileRules::new()
            .with(
                &["**/.env", "**/*.pem", "secrets"],
                &["Cargo.lock", "vendor/**"],
            )
            .unwrap()
    }

    #[test]
    fn deny_rules_cover_the_path_anywhere_and_everything_beneath_a_directory() {
        let rules = rules();
        for path in [".env", "app/.env", "a/b/key.pem", "secrets", "secrets/x/y"] {
            let refusal = rules.check(path, FileAccess::Read).unwrap_err();
            assert_eq!(refusal.kind, FileRuleKind::Deny, "{path}");
            assert!(rules.hides(path), "{path}");
        }
        for path in ["src/main.rs", ".envrc", "secretsx", "pem"] {
            assert_eq!(rules.check(path, FileAccess::Write), Ok(()), "{path}");
        }
    }

    #[test]
    fn read_only_rules_refuse_changes_and_allow_reads() {
        let rules = rules();
        assert_eq!(rules.check("Cargo.lock", FileAccess::Read), Ok(()));
        let refusal = rules.check("vendor/a/b.rs", FileAccess::Write).unwrap_err();
        assert_eq!(refusal.kind, FileRuleKind::ReadOnly);
        assert_eq!(refusal.rule, "vendor/**");
        assert_eq!(
            refusal.to_string(),
            "file rule read-only `vendor/**` covers vendor/a/b.rs"
        );
        assert!(!rules.hides("Cargo.lock"));
        assert_eq!(rules.check("sub/Cargo.lock", FileAccess::Write), Ok(()));
    }

    #[test]
    fn a_star_stays_inside_one_component() {
        let rules = FileRules::new().with(&["*.key"], &[]).unwrap();
        assert!(rules.check("a.key", FileAccess::Read).is_err());
        assert!(rules.check("dir/a.key", FileAccess::Read).is_ok());
    }

    #[test]
    fn bad_rules_say_why() {
        for text in ["", "/etc/passwd", "../x", "a/../b", "[z-a]"] {
            assert!(FileRules::new().with(&[text], &[]).is_err(), "{text:?}");
        }
    }
}
