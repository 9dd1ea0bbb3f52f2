//! The tool a sub-agent is to the model: `agent.NAME`, with the task and
//! optional context as its arguments.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::agent::AgentDef;
use crate::tool::{ToolAnnotations, ToolSpec};

/// The prefix of every sub-agent's tool name.
pub(crate) const PREFIX: &str = "agent.";

/// The sub-agent a call of `tool` delegates to, when `agent` declares it.
pub(crate) fn sub_agent<'a>(agent: &'a AgentDef, tool: &str) -> Option<&'a str> {
    let name = tool.strip_prefix(PREFIX)?;
    agent
        .agents
        .get_key_value(name)
        .map(|(name, _)| name.as_str())
}

/// The tools `agent`'s sub-agents are, in name order.
pub(crate) fn specs(agent: &AgentDef) -> impl Iterator<Item = ToolSpec> + '_ {
    agent.agents.values().map(|sub| sub.spec.clone())
}

/// The tool the sub-agent `name`, which does what `description` says, is
/// to the model. A delegation acts only through the calls of its run, each
/// judged in turn, so it declares no effect of its own.
pub(crate) fn spec_of(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: format!("{PREFIX}{name}"),
        description: description.to_owned(),
        input_schema: Arc::new(json!({
            "type": "object",
            "properties": {
                "task": {
                    "type": "string",
                    "description": "What the sub-agent is to do, as you would ask a colleague."
                },
                "context": {
                    "type": "string",
                    "description": "What it needs to know that the task does not say."
                }
            },
            "required": ["task"],
            "additionalProperties": false
        })),
        output_schema: None,
        annotations: ToolAnnotations::default(),
    }
}

/// A delegation's arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Task {
    task: String,
    #[serde(default)]
    context: Option<String>,
}

impl Task {
    /// The arguments `args` as a task, or why they are not one.
    pub(crate) fn read(args: &Value) -> Result<Self, String> {
        let task: Self = serde_json::from_value(args.clone()).map_err(|error| {
            format!("a sub-agent takes {{\"task\": \"...\", \"context\": \"...\"}}: {error}")
        })?;
        if task.task.trim().is_empty() {
            return Err("`task` is empty: say what the sub-agent is to do".into());
        }
        Ok(task)
    }

    /// The prompt the sub-agent's run starts with.
    pub(crate) fn prompt(&self) -> String {
        match self
            .context
            .as_deref()
            .filter(|context| !context.trim().is_empty())
        {
            Some(context) => format!("{}\n\nContext:\n{context}", self.task),
            None => self.task.clone(),
        }
    }
}
