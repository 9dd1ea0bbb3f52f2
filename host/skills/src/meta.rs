//! The frontmatter of a SKILL.md, as the open Agent Skills format defines it,
//! checked rule by rule. Every field is checked and every problem reported,
//! not only the first:
//!
//! | field | rule |
//! |---|---|
//! | `name` | required; 1 to 64 of `a-z`, `0-9` and `-`; no leading, trailing or double `-`; the folder's name |
//! | `description` | required; 1 to 1024 characters |
//! | `license` | optional; a string |
//! | `compatibility` | optional; 1 to 500 characters |
//! | `metadata` | optional; a mapping of strings to strings |
//! | `allowed-tools` | optional; Cordon permission rules, space-separated or a list |
//!
//! Any other field is a problem too. Where other hosts load a skill anyway,
//! so does Cordon, with a warning: a description or compatibility note past
//! its length, a field the format does not define, a metadata value that is
//! not a string. A problem with the name or with `allowed-tools` (the one
//! field that shapes permissions) keeps the skill from loading.

use std::collections::BTreeMap;
use std::path::Path;

use yaml_rust2::Yaml;

use crate::allowed;
use crate::frontmatter::kind;
use crate::problem::Problem;

/// The longest name.
pub const MAX_NAME: usize = 64;
/// The longest description, in characters.
pub const MAX_DESCRIPTION: usize = 1024;
/// The longest compatibility note, in characters.
pub const MAX_COMPATIBILITY: usize = 500;

/// The fields the format defines.
const FIELDS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// A skill's frontmatter, valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillMeta {
    /// The skill's name, which is its folder's.
    pub name: String,
    /// What it does and when to use it: all the model sees before activating it.
    pub description: String,
    /// Its license.
    pub license: Option<String>,
    /// What it needs of its environment.
    pub compatibility: Option<String>,
    /// Free-form string properties.
    pub metadata: BTreeMap<String, String>,
    /// Its `allowed-tools` rules; `None` when it lists none.
    pub allowed_tools: Option<Vec<String>>,
    /// The problems it loads despite.
    pub warnings: Vec<Problem>,
}

/// Check the frontmatter `fields` of `file`, a skill in the folder named `folder`.
pub(crate) fn check(
    file: &Path,
    folder: &str,
    fields: &[(String, Yaml)],
) -> Result<SkillMeta, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut problem = |field: &str, rule: String| problems.push(Problem::field(file, field, rule));
    let mut warnings = Vec::new();
    let mut warning =
        |field: &str, rule: String| warnings.push(Problem::tolerated(file, field, rule));
    for (key, _) in fields {
        if !FIELDS.contains(&key.as_str()) {
            warning(
                key,
                format!(
                    "is not a field of the Agent Skills format, which has {}",
                    FIELDS.join(", ")
                ),
            );
        }
    }
    let get = |key: &str| {
        fields
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    };
    let mut text = |key: &str, required: bool, max: usize| -> Option<String> {
        match get(key) {
            None if required => {
                problem(key, "is required".into());
                None
            }
            None => None,
            Some(Yaml::String(value)) if value.trim().is_empty() => {
                problem(key, "must not be empty".into());
                None
            }
            Some(Yaml::String(value)) if value.chars().count() > max => {
                warning(
                    key,
                    format!(
                        "is {} characters long; the format allows {max}",
                        value.chars().count()
                    ),
                );
                Some(value.clone())
            }
            Some(Yaml::String(value)) => Some(value.clone()),
            Some(other) => {
                problem(key, format!("must be a string, not {}", kind(other)));
                None
            }
        }
    };
    let name = text("name", true, usize::MAX);
    let description = text("description", true, MAX_DESCRIPTION);
    let license = text("license", false, usize::MAX);
    let compatibility = text("compatibility", false, MAX_COMPATIBILITY);
    if let Some(name) = &name {
        for rule in name_problems(name, folder) {
            problem("name", rule);
        }
    }
    let metadata = match get("metadata") {
        None => BTreeMap::new(),
        Some(Yaml::Hash(hash)) => {
            let mut metadata = BTreeMap::new();
            for (key, value) in hash {
                match (key, value) {
                    (Yaml::String(key), Yaml::String(value)) => {
                        metadata.insert(key.clone(), value.clone());
                    }
                    (Yaml::String(key), other) => warning(
                        &format!("metadata.{key}"),
                        format!("must be a string, not {}; quote it", kind(other)),
                    ),
                    (other, _) => problem(
                        "metadata",
                        format!("a key is {}, not a string", kind(other)),
                    ),
                }
            }
            metadata
        }
        Some(other) => {
            problem(
                "metadata",
                format!("must be a mapping of strings, not {}", kind(other)),
            );
            BTreeMap::new()
        }
    };
    let allowed_tools = match get("allowed-tools") {
        None => None,
        Some(Yaml::String(list)) => Some(allowed::split(list)),
        Some(Yaml::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .filter_map(|(index, item)| match item {
                    Yaml::String(rule) => Some(rule.trim().to_owned()),
                    other => {
                        problem(
                            &format!("allowed-tools[{index}]"),
                            format!("must be a rule as a string, not {}", kind(other)),
                        );
                        None
                    }
                })
                .collect(),
        ),
        Some(other) => {
            problem(
                "allowed-tools",
                format!(
                    "must be a string of rules separated by spaces, or a list of rules, not {}",
                    kind(other)
                ),
            );
            None
        }
    };
    for (index, rule) in allowed_tools.iter().flatten().enumerate() {
        if let Err(reason) = allowed::check(rule) {
            problem(&format!("allowed-tools[{index}]"), reason);
        }
    }
    match (name, description) {
        (Some(name), Some(description)) if problems.is_empty() => Ok(SkillMeta {
            name,
            description,
            license,
            compatibility,
            metadata,
            allowed_tools,
            warnings,
        }),
        _ => {
            problems.extend(warnings);
            Err(problems)
        }
    }
}

/// Every rule `name` breaks, for a skill in the folder named `folder`.
pub fn name_problems(name: &str, folder: &str) -> Vec<String> {
    let mut rules = Vec::new();
    if name.len() > MAX_NAME {
        rules.push(format!(
            "is {} characters long; at most {MAX_NAME} are allowed",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        rules.push(format!(
            "{name:?} holds {bad:?}; a name uses only lowercase letters a-z, digits and `-`"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        rules.push(format!("{name:?} starts or ends with `-`"));
    }
    if name.contains("--") {
        rules.push(format!("{name:?} holds `--`; hyphens come one at a time"));
    }
    if name != folder {
        rules.push(format!(
            "{name:?} must equal the skill's folder name {folder:?}"
        ));
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontmatter::mapping;

    fn checked(yaml: &str, folder: &str) -> Result<SkillMeta, Vec<String>> {
        let fields = mapping(yaml).unwrap();
        check(Path::new("x/SKILL.md"), folder, &fields).map_err(|problems| {
            problems
                .into_iter()
                .map(|problem| problem.to_string())
                .collect()
        })
    }

    fn problems(yaml: &str, folder: &str) -> Vec<String> {
        checked(yaml, folder).expect_err("should be refused")
    }

    #[test]
    fn a_complete_frontmatter_is_read_whole() {
        let meta = checked(
            "name: pdf-tools\ndescription: Fill PDF forms.\nlicense: MIT\ncompatibility: needs python3\nmetadata:\n  author: ada\n  version: \"1.0\"\nallowed-tools: read bash(command=python3 scripts/*)\n",
            "pdf-tools",
        )
        .unwrap();
        assert_eq!(meta.name, "pdf-tools");
        assert_eq!(meta.license.as_deref(), Some("MIT"));
        assert_eq!(meta.metadata["version"], "1.0");
        assert_eq!(
            meta.allowed_tools.unwrap(),
            ["read", "bash(command=python3 scripts/*)"]
        );
        let listed = checked(
            "name: a\ndescription: b\nallowed-tools:\n  - read\n  - grep\n",
            "a",
        )
        .unwrap();
        assert_eq!(listed.allowed_tools.unwrap(), ["read", "grep"]);
    }

    #[test]
    fn each_name_rule_is_reported_with_the_field() {
        for (name, folder, needle) in [
            ("PDF-Processing", "PDF-Processing", "lowercase"),
            ("-pdf", "-pdf", "starts or ends"),
            ("pdf-", "pdf-", "starts or ends"),
            ("pdf--x", "pdf--x", "`--`"),
            ("pdf_x", "pdf_x", "lowercase"),
            ("other", "pdf", "folder name"),
        ] {
            let found = problems(&format!("name: {name}\ndescription: d\n"), folder);
            assert!(
                found
                    .iter()
                    .any(|p| p.contains("field `name`") && p.contains(needle)),
                "{name}: {found:?}"
            );
        }
        let long = "a".repeat(65);
        let found = problems(&format!("name: {long}\ndescription: d\n"), &long);
        assert!(found[0].contains("65 characters"), "{found:?}");
    }

    /// Every problem of a frontmatter, refused or tolerated.
    fn all_problems(yaml: &str, folder: &str) -> Vec<String> {
        match checked(yaml, folder) {
            Ok(meta) => meta.warnings.iter().map(ToString::to_string).collect(),
            Err(problems) => problems,
        }
    }

    #[test]
    fn descriptions_compatibility_metadata_and_unknown_fields_are_checked() {
        let cases = [
            ("name: a\n", "`description`: is required"),
            ("name: a\ndescription: \"  \"\n", "must not be empty"),
            (
                &*format!("name: a\ndescription: {}\n", "d".repeat(1025)),
                "1025 characters",
            ),
            (
                &*format!(
                    "name: a\ndescription: d\ncompatibility: {}\n",
                    "c".repeat(501)
                ),
                "`compatibility`: is 501",
            ),
            (
                "name: a\ndescription: d\nmetadata:\n  version: 1.0\n",
                "`metadata.version`: must be a string, not a number",
            ),
            (
                "name: a\ndescription: d\nmetadata: [x]\n",
                "`metadata`: must be a mapping",
            ),
            (
                "name: a\ndescription: d\nlicense: 3\n",
                "`license`: must be a string",
            ),
            (
                "name: a\ndescription: d\nmodel: opus\n",
                "`model`: is not a field",
            ),
            (
                "name: a\ndescription: d\nallowed-tools: Bash(git:*)\n",
                "`allowed-tools[0]`",
            ),
            (
                "name: a\ndescription: d\nallowed-tools: 3\n",
                "`allowed-tools`: must be a string",
            ),
            ("description: d\n", "`name`: is required"),
        ];
        for (yaml, needle) in cases {
            let found = all_problems(yaml, "a");
            assert!(
                found.iter().any(|p| p.contains(needle)),
                "{needle}: {found:?}"
            );
        }
        let many = problems("name: B\nmodel: x\n", "a");
        assert!(many.len() >= 3, "every problem is reported: {many:?}");
    }

    #[test]
    fn what_other_hosts_tolerate_loads_with_a_warning_and_what_shapes_permissions_does_not() {
        let long = "d".repeat(1068);
        let meta = checked(
            &format!("name: a\ndescription: {long}\nversion: 2\nmetadata:\n  stars: 5\n"),
            "a",
        )
        .expect("an over-long description and an unknown field load");
        assert_eq!(meta.description, long, "the description is kept whole");
        assert!(meta.metadata.is_empty(), "a non-string value is left out");
        let warnings: Vec<String> = meta.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(
            warnings[0].contains("`version`: is not a field"),
            "{warnings:?}"
        );
        assert!(
            warnings[1].contains("`description`: is 1068 characters long; the format allows 1024"),
            "{warnings:?}"
        );
        assert!(
            meta.warnings
                .iter()
                .all(|warning| warning.severity == crate::Severity::Warning)
        );
        for refused in [
            format!("name: a\ndescription: {long}\nallowed-tools: Bash(rm:*)\n"),
            "name: b\ndescription: d\n".to_owned(),
        ] {
            let problems = checked(&refused, "a").expect_err("still refused");
            assert!(
                problems.iter().any(|p| p.contains("1068 characters")) || !refused.contains(&long),
                "a refused skill lists its warnings too: {problems:?}"
            );
        }
    }
}
