//! What is wrong with a skill: every problem names the file, the field and
//! the rule it breaks, so an author can fix a SKILL.md without reading
//! Cordon's source, and says whether the skill loads despite it.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Whether a skill loads despite a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A slip other hosts tolerate (an over-long description, a field the
    /// format does not define): the skill loads and the problem is shown;
    /// `cordon skills check --strict` fails on it.
    Warning,
    /// The skill does not load: it is unreadable, unnamed, misnamed, or
    /// asks for something (its `allowed-tools`) that cannot be read safely.
    Error,
}

/// One rule a skill breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file at fault: the skill's SKILL.md, or its folder.
    pub file: PathBuf,
    /// The frontmatter field at fault (`name`, `metadata.author`,
    /// `allowed-tools[1]`), or `None` for the file as a whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The rule it breaks, as a sentence.
    pub rule: String,
    /// Whether the skill loads despite it.
    pub severity: Severity,
}

impl Problem {
    /// A problem of `file` as a whole.
    pub(crate) fn file(file: &Path, rule: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            field: None,
            rule: rule.into(),
            severity: Severity::Error,
        }
    }

    /// A problem of `field` in `file` that keeps the skill from loading.
    pub(crate) fn field(file: &Path, field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            field: Some(field.into()),
            rule: rule.into(),
            severity: Severity::Error,
        }
    }

    /// A problem of `file` as a whole that the skill loads despite.
    pub(crate) fn tolerated_file(file: &Path, rule: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::file(file, rule)
        }
    }

    /// A problem of `field` in `file` the skill loads despite.
    pub(crate) fn tolerated(
        file: &Path,
        field: impl Into<String>,
        rule: impl Into<String>,
    ) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::field(file, field, rule)
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{}: field `{field}`: {}", self.file.display(), self.rule),
            None => write!(f, "{}: {}", self.file.display(), self.rule),
        }
    }
}
