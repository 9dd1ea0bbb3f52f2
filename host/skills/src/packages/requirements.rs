//! A skill's Python requirements: its `requirements.txt`, one exact pin a
//! line (`pypdf==5.1.0`), blank lines and `#` comments allowed, and the
//! pins its SKILL.md lists under `metadata` as `python-requirements`
//! (`"pypdf==5.1.0 defusedxml==0.7.1"`, parted by spaces or commas), the
//! format's place for what it does not define. Ranges, URLs, options and
//! markers are refused with the line or field they are in, and so is a
//! package pinned at two versions: what runs is exactly what the operator
//! approved.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use yaml_rust2::Yaml;

use serde::{Deserialize, Serialize};

use super::PackageError;

/// The file in a skill's folder that names its packages.
pub const REQUIREMENTS_FILE: &str = "requirements.txt";
/// The key under a SKILL.md's `metadata` that names its packages.
pub const METADATA_KEY: &str = "python-requirements";

/// One package at one version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Requirement {
    /// The package's name, as written.
    pub name: String,
    /// Its exact version.
    pub version: String,
}

impl Requirement {
    /// `name==version`, or why it is not one.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, version) = text
            .split_once("==")
            .ok_or_else(|| format!("`{text}` is not an exact pin; write NAME==VERSION"))?;
        let (name, version) = (name.trim(), version.trim());
        let name_ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        let version_ok = !version.is_empty()
            && version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.+!".contains(c));
        if !name_ok || !version_ok {
            return Err(format!(
                "`{text}` is not an exact pin; write NAME==VERSION with a package name and one version"
            ));
        }
        Ok(Self {
            name: name.to_owned(),
            version: version.to_owned(),
        })
    }

    /// The name as the index knows it (lowercase, `-` for runs of `-_.`).
    pub fn normalized(&self) -> String {
        let mut name = String::new();
        for c in self.name.chars() {
            if "-_.".contains(c) {
                if !name.ends_with('-') {
                    name.push('-');
                }
            } else {
                name.push(c.to_ascii_lowercase());
            }
        }
        name
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=={}", self.name, self.version)
    }
}

/// Why a skill's pins cannot be read, and in which file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinsError {
    /// `requirements.txt` cannot be read.
    Unreadable {
        /// The file.
        file: PathBuf,
        /// Why.
        error: String,
    },
    /// A line of `requirements.txt` is not an exact pin.
    Line {
        /// The file.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        rule: String,
    },
    /// The SKILL.md's `metadata.python-requirements` is not a list of
    /// exact pins, or pins a package the file pins at another version.
    Metadata {
        /// The SKILL.md.
        file: PathBuf,
        /// What is wrong with the list.
        rule: String,
    },
}

impl PinsError {
    /// The file at fault.
    pub fn file(&self) -> &Path {
        match self {
            PinsError::Unreadable { file, .. }
            | PinsError::Line { file, .. }
            | PinsError::Metadata { file, .. } => file,
        }
    }

    /// What is wrong, where in the file.
    pub fn rule(&self) -> String {
        match self {
            PinsError::Unreadable { error, .. } => format!("cannot read: {error}"),
            PinsError::Line { line, rule, .. } => format!("line {line}: {rule}"),
            PinsError::Metadata { rule, .. } => format!("`metadata.{METADATA_KEY}`: {rule}"),
        }
    }
}

impl fmt::Display for PinsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PinsError::Line { file, line, rule } => write!(f, "{}:{line}: {rule}", file.display()),
            other => write!(f, "{}: {}", other.file().display(), other.rule()),
        }
    }
}

/// The requirements of the skill in `folder`, from its `requirements.txt`
/// and its SKILL.md's `metadata`: none without either.
pub fn read(folder: &Path) -> Result<Vec<Requirement>, PackageError> {
    read_with(folder, &metadata_of(folder))
        .map_err(|error| PackageError::Requirements(error.to_string()))
}

/// The requirements of the skill in `folder` whose SKILL.md's `metadata`
/// is `metadata`: its `requirements.txt` pins and those the metadata
/// lists, each package once.
pub fn read_with(
    folder: &Path,
    metadata: &BTreeMap<String, String>,
) -> Result<Vec<Requirement>, PinsError> {
    let file = folder.join(REQUIREMENTS_FILE);
    let mut pins = match std::fs::read_to_string(&file) {
        Ok(text) => parse(&text).map_err(|(line, rule)| PinsError::Line {
            file: file.clone(),
            line,
            rule,
        })?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => {
            return Err(PinsError::Unreadable {
                file,
                error: error.to_string(),
            });
        }
    };
    let skill_file = folder.join(crate::SKILL_FILE);
    let metadata_error = |rule: String| PinsError::Metadata {
        file: skill_file.clone(),
        rule,
    };
    let listed = match metadata.get(METADATA_KEY) {
        Some(listed) => {
            // Pins parted by commas or spaces, one a line to the parser.
            let lines: Vec<&str> = listed
                .split(|c: char| c == ',' || c.is_whitespace())
                .collect();
            parse(&lines.join("\n")).map_err(|(_, rule)| metadata_error(rule))?
        }
        None => Vec::new(),
    };
    for pin in listed {
        match pins
            .iter()
            .find(|known| known.normalized() == pin.normalized())
        {
            Some(known) if known.version == pin.version => {}
            Some(known) => {
                return Err(metadata_error(format!(
                    "pins {pin}, but {} pins {known}; pin each package once",
                    file.display()
                )));
            }
            None => pins.push(pin),
        }
    }
    pins.sort();
    Ok(pins)
}

/// The string values under the `metadata` of the SKILL.md in `folder`, as
/// loading the skill reads them; none when it cannot be read (loading the
/// skill says why).
fn metadata_of(folder: &Path) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(folder.join(crate::SKILL_FILE)) else {
        return BTreeMap::new();
    };
    let Ok(split) = crate::frontmatter::split(&text) else {
        return BTreeMap::new();
    };
    let Ok(fields) = crate::frontmatter::mapping(split.yaml) else {
        return BTreeMap::new();
    };
    match fields.into_iter().find(|(key, _)| key == "metadata") {
        Some((_, Yaml::Hash(hash))) => hash
            .into_iter()
            .filter_map(|(key, value)| match (key, value) {
                (Yaml::String(key), Yaml::String(value)) => Some((key, value)),
                _ => None,
            })
            .collect(),
        _ => BTreeMap::new(),
    }
}

/// The pins of a requirements text, or the first bad line and why.
pub fn parse(text: &str) -> Result<Vec<Requirement>, (usize, String)> {
    let mut pins: Vec<Requirement> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = match line
            .find(" #")
            .or_else(|| line.starts_with('#').then_some(0))
        {
            Some(at) => &line[..at],
            None => line,
        }
        .trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('-') || line.contains("://") || line.contains(';') {
            return Err((
                index + 1,
                format!(
                    "`{line}`: options, URLs and markers are not taken; pin each package as NAME==VERSION"
                ),
            ));
        }
        let pin = Requirement::parse(line).map_err(|rule| (index + 1, rule))?;
        if pins
            .iter()
            .any(|known| known.normalized() == pin.normalized())
        {
            return Err((index + 1, format!("`{}` is pinned twice", pin.name)));
        }
        pins.push(pin);
    }
    pins.sort();
    Ok(pins)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_md_lists_pins_under_metadata_beside_or_instead_of_the_file() {
        let folder = tempfile::tempdir().unwrap();
        let skill = |metadata: &str| {
            std::fs::write(
                folder.path().join("SKILL.md"),
                format!("---\nname: x\ndescription: d\nmetadata:\n{metadata}---\n"),
            )
            .unwrap();
        };
        skill("  python-requirements: \"pypdf==5.1.0 defusedxml==0.7.1\"\n");
        let shown =
            |pins: Vec<Requirement>| pins.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(
            shown(read(folder.path()).unwrap()),
            ["defusedxml==0.7.1", "pypdf==5.1.0"]
        );
        std::fs::write(
            folder.path().join(REQUIREMENTS_FILE),
            "pypdf==5.1.0\nPyYAML==6.0.3\n",
        )
        .unwrap();
        assert_eq!(
            shown(read(folder.path()).unwrap()),
            ["PyYAML==6.0.3", "defusedxml==0.7.1", "pypdf==5.1.0"]
        );
        for (metadata, needle) in [
            (
                "  python-requirements: \"pypdf==4.0.0\"\n",
                "pins pypdf==4.0.0, but",
            ),
            (
                "  python-requirements: \"pypdf>=5\"\n",
                "`pypdf>=5` is not an exact pin",
            ),
            (
                "  python-requirements: \"--index-url x\"\n",
                "options, URLs and markers are not taken",
            ),
        ] {
            skill(metadata);
            let error = read(folder.path()).unwrap_err().to_string();
            assert!(
                error.contains("SKILL.md: `metadata.python-requirements`")
                    && error.contains(needle),
                "{metadata}: {error}"
            );
        }
    }

    #[test]
    fn exact_pins_are_read_and_everything_else_is_refused_with_its_line() {
        let pins =
            parse("# for the PDF scripts\npypdf==5.1.0\n\ndefusedxml == 0.7.1  # Office files\n")
                .unwrap();
        assert_eq!(
            pins.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["defusedxml==0.7.1", "pypdf==5.1.0"]
        );
        for (text, line, needle) in [
            ("pypdf>=5\n", 1, "not an exact pin"),
            ("ok==1\n-e ./local\n", 2, "options, URLs and markers"),
            ("pkg @ https://x/pkg.whl\n", 1, "options, URLs and markers"),
            ("lxml==5.3.0; python_version > '3'\n", 1, "markers"),
            ("Py_YAML==6.0.2\npy-yaml==6.0.2\n", 2, "pinned twice"),
            ("pypdf==\n", 1, "not an exact pin"),
        ] {
            let (at, rule) = parse(text).expect_err(text);
            assert_eq!(at, line, "{text}");
            assert!(rule.contains(needle), "{text}: {rule}");
        }
    }

    #[test]
    fn names_are_normalized_as_the_index_does() {
        let pin = Requirement::parse("Foo__Bar.baz==1").unwrap();
        assert_eq!(pin.normalized(), "foo-bar-baz");
    }
}
