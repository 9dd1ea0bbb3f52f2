//! A skill's `requirements.txt`: one exact pin a line (`pypdf==5.1.0`),
//! blank lines and `#` comments allowed. Ranges, URLs, options and markers
//! are refused with the line they are on: what runs is exactly what the
//! operator approved.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::PackageError;

/// The file in a skill's folder that names its packages.
pub const REQUIREMENTS_FILE: &str = "requirements.txt";

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

/// The requirements of the skill in `folder`: none without the file.
pub fn read(folder: &Path) -> Result<Vec<Requirement>, PackageError> {
    let file = folder.join(REQUIREMENTS_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(PackageError::Requirements(format!(
                "{}: cannot read: {error}",
                file.display()
            )));
        }
    };
    parse(&text).map_err(|(line, rule)| {
        PackageError::Requirements(format!("{}:{line}: {rule}", file.display()))
    })
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
