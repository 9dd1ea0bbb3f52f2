//! Tool names on the wire. Cordon's tool names may contain `.`; hosted APIs
//! accept only `[A-Za-z0-9_-]`, at most 64 characters. Each request maps every
//! tool name to a unique wire name and back.

use std::collections::BTreeMap;

use cordon_kernel::ToolSpec;

/// The longest function name the hosted APIs accept.
const MAX_LEN: usize = 64;

/// Both directions of one request's name mapping.
#[derive(Debug, Default, Clone)]
pub(crate) struct Names {
    to_wire: BTreeMap<String, String>,
    from_wire: BTreeMap<String, String>,
}

impl Names {
    /// Wire names for `tools`, unique even when two names sanitize alike.
    pub(crate) fn new(tools: &[ToolSpec]) -> Self {
        let mut names = Self::default();
        for tool in tools {
            let base = sanitize(&tool.name);
            let mut wire = base.clone();
            let mut counter = 2;
            while names.from_wire.contains_key(&wire) {
                let suffix = format!("_{counter}");
                let keep = MAX_LEN.saturating_sub(suffix.len()).min(base.len());
                wire = format!("{}{suffix}", &base[..keep]);
                counter += 1;
            }
            names.to_wire.insert(tool.name.clone(), wire.clone());
            names.from_wire.insert(wire, tool.name.clone());
        }
        names
    }

    /// The wire name of tool `name`; names of tools not offered this step (in
    /// earlier turns of the conversation) are sanitized the same way.
    pub(crate) fn wire(&self, name: &str) -> String {
        self.to_wire
            .get(name)
            .cloned()
            .unwrap_or_else(|| sanitize(name))
    }

    /// The tool name a wire name stands for; an unknown wire name stays as it is,
    /// so the loop reports it as a tool that does not exist.
    pub(crate) fn tool(&self, wire: &str) -> String {
        self.from_wire
            .get(wire)
            .cloned()
            .unwrap_or_else(|| wire.to_owned())
    }
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_LEN)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_kernel::ToolAnnotations;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: std::sync::Arc::new(serde_json::json!({})),
            output_schema: None,
            annotations: ToolAnnotations::default(),
        }
    }

    #[test]
    fn dotted_names_round_trip_and_collisions_stay_distinct() {
        let names = Names::new(&[spec("files.read"), spec("files_read")]);
        assert_eq!(names.wire("files.read"), "files_read");
        assert_eq!(names.wire("files_read"), "files_read_2");
        assert_eq!(names.tool("files_read"), "files.read");
        assert_eq!(names.tool("files_read_2"), "files_read");
        assert_eq!(names.tool("unknown"), "unknown");
    }
}
