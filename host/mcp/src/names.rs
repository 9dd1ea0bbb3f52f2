//! The names tools travel under. MCP clients accept far less than Cordon's
//! dotted names: Claude Desktop only `^[A-Za-z0-9_-]{1,64}$`, Cursor no dots,
//! VS Code warns on them. So `jq.query` travels as `jq_query`, every other
//! character outside that set becomes `_`, and a name is cut to 64
//! characters. Two tools that would travel under one name are a load error
//! naming both, never a silent shadow; the reverse map turns a requested name
//! back into the tool it stands for.

use std::collections::BTreeMap;

/// The longest name a client is sure to accept.
pub const MAX_NAME: usize = 64;

/// Two tools whose names travel as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tools `{first}` and `{second}` would both be offered to MCP clients as `{wire}`; \
     rename one of them or leave its bundle out"
)]
pub struct NameCollision {
    /// The tool that claimed the name first.
    pub first: String,
    /// The tool that also maps to it.
    pub second: String,
    /// The name both map to.
    pub wire: String,
}

/// The name `tool` travels under.
pub fn wire_name(tool: &str) -> String {
    let mapped: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut cut = mapped;
    cut.truncate(MAX_NAME);
    if cut.is_empty() { "_".to_owned() } else { cut }
}

/// Both directions of the mapping for one set of tools.
#[derive(Debug, Clone, Default)]
pub struct ToolNames {
    to_tool: BTreeMap<String, String>,
}

impl ToolNames {
    /// The mapping for `tools`, or the first collision among them.
    pub fn new<'a>(tools: impl IntoIterator<Item = &'a str>) -> Result<Self, NameCollision> {
        let mut to_tool: BTreeMap<String, String> = BTreeMap::new();
        for tool in tools {
            let wire = wire_name(tool);
            if let Some(first) = to_tool.get(&wire) {
                return Err(NameCollision {
                    first: first.clone(),
                    second: tool.to_owned(),
                    wire,
                });
            }
            to_tool.insert(wire, tool.to_owned());
        }
        Ok(Self { to_tool })
    }

    /// The tool a client's `wire` name stands for.
    pub fn tool(&self, wire: &str) -> Option<&str> {
        self.to_tool.get(wire).map(String::as_str)
    }

    /// The offered name nearest to `wire`, for an unknown tool's error.
    pub fn nearest(&self, wire: &str) -> Option<&str> {
        cordon_kernel::nearest_name(wire, self.to_tool.keys().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_and_odd_names_travel_in_the_accepted_set() {
        assert_eq!(wire_name("jq.query"), "jq_query");
        assert_eq!(wire_name("files.read-all"), "files_read-all");
        assert_eq!(wire_name("ünï.côde"), "_n__c_de");
        let long = "a".repeat(100);
        assert_eq!(wire_name(&long).len(), MAX_NAME);
        assert_eq!(wire_name(""), "_");
    }

    #[test]
    fn a_collision_names_both_tools_and_the_shared_name() {
        let collision = ToolNames::new(["jq.query", "jq_query"]).unwrap_err();
        assert_eq!(collision.first, "jq.query");
        assert_eq!(collision.second, "jq_query");
        assert_eq!(collision.wire, "jq_query");
        assert!(collision.to_string().contains("`jq_query`"));
    }

    #[test]
    fn the_reverse_map_and_the_nearest_name() {
        let names = ToolNames::new(["jq.query", "notes.add", "read"]).unwrap();
        assert_eq!(names.tool("jq_query"), Some("jq.query"));
        assert_eq!(
            names.tool("jq.query"),
            None,
            "only the travelling name is known"
        );
        assert_eq!(names.nearest("jq_qurey"), Some("jq_query"));
        assert_eq!(names.nearest("completely-different"), None);
    }
}
