//! A SKILL.md as the format lays it out: YAML frontmatter between two `---`
//! lines at the very top, then the Markdown body. The frontmatter is parsed
//! as YAML 1.2 into a mapping; aliases are never expanded, so a document
//! cannot grow on parsing.

use yaml_rust2::{Yaml, YamlLoader};

/// The two parts of a SKILL.md.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Split<'a> {
    /// The YAML between the fences.
    pub(crate) yaml: &'a str,
    /// Everything after the closing fence.
    pub(crate) body: &'a str,
}

/// Split `text` into frontmatter and body, or say why it has no frontmatter.
pub(crate) fn split(text: &str) -> Result<Split<'_>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Err("must start with a `---` line opening the YAML frontmatter".into());
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare == "..." {
            let body = &rest[offset + line.len()..];
            return Ok(Split {
                yaml: &rest[..offset],
                body: body
                    .strip_prefix('\n')
                    .or_else(|| body.strip_prefix("\r\n"))
                    .unwrap_or(body),
            });
        }
        offset += line.len();
    }
    Err("the YAML frontmatter has no closing `---` line".into())
}

/// The frontmatter's top-level mapping, or why it is not one.
pub(crate) fn mapping(yaml: &str) -> Result<Vec<(String, Yaml)>, String> {
    let documents = YamlLoader::load_from_str(yaml)
        .map_err(|error| format!("the frontmatter is not YAML: {error}"))?;
    let document = match documents.as_slice() {
        [] => {
            return Err(
                "the frontmatter is empty; it needs at least `name` and `description`".into(),
            );
        }
        [one] => one,
        _ => return Err("the frontmatter holds more than one YAML document".into()),
    };
    let Yaml::Hash(hash) = document else {
        return Err(format!(
            "the frontmatter is {}, not a mapping of fields",
            kind(document)
        ));
    };
    hash.iter()
        .map(|(key, value)| match key {
            Yaml::String(key) => Ok((key.clone(), value.clone())),
            other => Err(format!("a frontmatter key is {}, not a name", kind(other))),
        })
        .collect()
}

/// How a problem names the kind of a YAML value.
pub(crate) fn kind(value: &Yaml) -> &'static str {
    match value {
        Yaml::Real(_) => "a number",
        Yaml::Integer(_) => "an integer",
        Yaml::String(_) => "a string",
        Yaml::Boolean(_) => "a boolean",
        Yaml::Array(_) => "a list",
        Yaml::Hash(_) => "a mapping",
        Yaml::Alias(_) => "an alias",
        Yaml::Null => "empty",
        Yaml::BadValue => "unreadable",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_and_body_split_at_the_fences() {
        let parts = split("---\nname: a\n---\n# Body\ntext\n").unwrap();
        assert_eq!(parts.yaml, "name: a\n");
        assert_eq!(parts.body, "# Body\ntext\n");
        let crlf = split("\u{feff}---\r\nname: a\r\n---\r\nbody").unwrap();
        assert_eq!(crlf.yaml, "name: a\r\n");
        assert_eq!(crlf.body, "body");
        assert!(split("# no frontmatter").unwrap_err().contains("`---`"));
        assert!(split("---\nname: a\n").unwrap_err().contains("closing"));
    }

    #[test]
    fn the_frontmatter_must_be_one_mapping_with_names_for_keys() {
        assert_eq!(mapping("name: a\ndescription: b\n").unwrap().len(), 2);
        assert!(mapping("- a\n- b\n").unwrap_err().contains("a list"));
        assert!(mapping("").unwrap_err().contains("empty"));
        assert!(
            mapping("name: [unclosed\n")
                .unwrap_err()
                .contains("not YAML")
        );
        assert!(mapping("1: a\n").unwrap_err().contains("an integer"));
    }
}
