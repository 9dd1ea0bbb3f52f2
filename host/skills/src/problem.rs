//! What is wrong with a skill: every problem names the file, the field and
//! the rule it breaks, so an author can fix a SKILL.md without reading
//! Cordon's source.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

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
}

impl Problem {
    /// A problem of `file` as a whole.
    pub(crate) fn file(file: &Path, rule: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            field: None,
            rule: rule.into(),
        }
    }

    /// A problem of `field` in `file`.
    pub(crate) fn field(file: &Path, field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            field: Some(field.into()),
            rule: rule.into(),
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
