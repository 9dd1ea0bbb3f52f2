//! What `tools/list` offers and how a `tools/call` finds its tool: every
//! tool the run offers, under the name it travels as ([`crate::names`]), with
//! its description, input and output schemas and the annotations of its
//! contract, sorted by that name so each listing is the same. Arguments are
//! checked against the input schema here, so a call that breaks it is a
//! protocol error the client can fix, and never reaches the gate.

use std::sync::Arc;

use cordon_kernel::{ToolSpec, schema_problems};
use rmcp::ErrorData;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::names::{NameCollision, ToolNames, wire_name};

/// Why a set of tools cannot be offered.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// Two tools travel under one name.
    #[error(transparent)]
    Collision(#[from] NameCollision),
    /// A tool's input schema does not compile.
    #[error("tool `{tool}`: its input schema is not a valid JSON Schema: {reason}")]
    Schema {
        /// The tool.
        tool: String,
        /// What is wrong with the schema.
        reason: String,
    },
}

struct Entry {
    tool: Tool,
    spec: ToolSpec,
    validator: jsonschema::Validator,
    wraps: bool,
}

/// A call's tool, found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The Cordon tool to run.
    pub tool: String,
    /// Whether its output travels wrapped as `{"result": ...}`: MCP's
    /// `structuredContent` and `outputSchema` are objects, so a tool whose
    /// output schema is not one travels inside one.
    pub wraps: bool,
}

/// The tools offered to clients.
pub struct Catalog {
    entries: Vec<Entry>,
    names: ToolNames,
}

impl Catalog {
    /// The catalog of `specs`.
    pub fn new(mut specs: Vec<ToolSpec>) -> Result<Self, CatalogError> {
        let names = ToolNames::new(specs.iter().map(|spec| spec.name.as_str()))?;
        specs.sort_by_key(|spec| wire_name(&spec.name));
        let entries = specs
            .into_iter()
            .map(|spec| {
                let validator = jsonschema::validator_for(&spec.input_schema).map_err(|error| {
                    CatalogError::Schema {
                        tool: spec.name.clone(),
                        reason: error.to_string(),
                    }
                })?;
                let wraps = spec
                    .output_schema
                    .as_ref()
                    .is_some_and(|schema| schema.get("type") != Some(&Value::from("object")));
                Ok(Entry {
                    tool: offered(&spec, wraps),
                    spec,
                    validator,
                    wraps,
                })
            })
            .collect::<Result<_, CatalogError>>()?;
        Ok(Self { entries, names })
    }

    /// Every tool, as `tools/list` shows it.
    pub fn tools(&self) -> Vec<Tool> {
        self.entries
            .iter()
            .map(|entry| entry.tool.clone())
            .collect()
    }

    /// The tool `wire` names, as `tools/call` needs it.
    pub fn tool(&self, wire: &str) -> Option<Tool> {
        self.find(wire).map(|entry| entry.tool.clone())
    }

    /// The Cordon tool a call of `wire` with `args` runs, once the arguments
    /// fit its input schema; otherwise the protocol error saying what to fix.
    pub fn resolve(&self, wire: &str, args: &Value) -> Result<Resolved, ErrorData> {
        let Some(entry) = self.find(wire) else {
            let hint = self
                .names
                .nearest(wire)
                .map(|near| format!("; did you mean `{near}`?"))
                .unwrap_or_default();
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{wire}`{hint} (tools/list names every tool)"),
                None,
            ));
        };
        if let Some(problems) = schema_problems(&entry.validator, args) {
            return Err(ErrorData::invalid_params(
                format!("the arguments for `{wire}` do not fit its input schema: {problems}"),
                None,
            ));
        }
        Ok(Resolved {
            tool: entry.spec.name.clone(),
            wraps: entry.wraps,
        })
    }

    fn find(&self, wire: &str) -> Option<&Entry> {
        let tool = self.names.tool(wire)?;
        self.entries.iter().find(|entry| entry.spec.name == tool)
    }
}

/// `spec` as an MCP tool, its output schema inside `{"result": ...}` when
/// it `wraps`.
fn offered(spec: &ToolSpec, wraps: bool) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(spec.annotations.read_only)
        .destructive(spec.annotations.destructive)
        .idempotent(spec.annotations.idempotent)
        .open_world(spec.annotations.open_world);
    let mut tool = Tool::new(
        wire_name(&spec.name),
        spec.description.clone(),
        Arc::new(object(&spec.input_schema)),
    )
    .with_annotations(annotations);
    if spec.name != wire_name(&spec.name) {
        tool = tool.with_title(spec.name.clone());
    }
    if let Some(schema) = &spec.output_schema {
        let schema = if wraps {
            serde_json::json!({
                "type": "object",
                "properties": {"result": schema},
                "required": ["result"],
            })
        } else {
            (**schema).clone()
        };
        tool = tool.with_raw_output_schema(Arc::new(object(&schema)));
    }
    tool
}

/// A schema as the JSON object MCP carries; a tool whose schema is not an
/// object takes any object.
fn object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(map) => map.clone(),
        _ => {
            let mut map = JsonObject::new();
            map.insert("type".into(), Value::String("object".into()));
            map
        }
    }
}

#[cfg(test)]
mod tests {
    use cordon_kernel::ToolAnnotations as Contract;
    use serde_json::json;

    use super::*;

    fn spec(name: &str, read_only: bool) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("the {name} tool"),
            input_schema: Arc::new(json!({
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
            })),
            output_schema: Some(Arc::new(json!({"type": "object"}))),
            annotations: Contract {
                read_only,
                destructive: !read_only,
                idempotent: read_only,
                open_world: false,
            },
        }
    }

    #[test]
    fn the_listing_is_sorted_with_annotations_schemas_and_travelling_names() {
        let catalog = Catalog::new(vec![spec("notes.add", false), spec("jq.query", true)]).unwrap();
        let tools = catalog.tools();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, ["jq_query", "notes_add"]);
        let jq = &tools[0];
        assert_eq!(jq.title.as_deref(), Some("jq.query"));
        let annotations = jq.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(true));
        assert_eq!(annotations.destructive_hint, Some(false));
        assert!(jq.output_schema.is_some());
        assert_eq!(jq.input_schema["required"], json!(["q"]));
    }

    #[test]
    fn a_tool_whose_output_is_not_an_object_travels_wrapped() {
        let mut list = spec("list.all", true);
        list.output_schema = Some(Arc::new(json!({"type": "array"})));
        let catalog = Catalog::new(vec![list]).unwrap();
        assert!(
            catalog
                .resolve("list_all", &json!({"q": ""}))
                .unwrap()
                .wraps
        );
        let tool = catalog.tool("list_all").unwrap();
        let schema = tool.output_schema.unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["result"], json!({"type": "array"}));
    }

    #[test]
    fn unknown_tools_and_arguments_breaking_the_schema_are_protocol_errors() {
        let catalog = Catalog::new(vec![spec("jq.query", true)]).unwrap();
        assert_eq!(
            catalog.resolve("jq_query", &json!({"q": "."})).unwrap(),
            Resolved {
                tool: "jq.query".into(),
                wraps: false
            }
        );
        let unknown = catalog.resolve("jq_qeury", &json!({})).unwrap_err();
        assert!(
            unknown.message.contains("did you mean `jq_query`"),
            "{}",
            unknown.message
        );
        let invalid = catalog.resolve("jq_query", &json!({"q": 3})).unwrap_err();
        assert_eq!(invalid.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(invalid.message.contains("/q"), "{}", invalid.message);
    }
}
