//! The scripted model: replays turns from a file, for offline demos and tests.
//!
//! ```toml
//! [[turn]]
//! text = "Let me look."
//! [[turn.call]]
//! tool = "files.search"
//! args = { pattern = "fn main" }
//!
//! [[turn]]
//! text = "It is in src/main.rs."
//! ```
//!
//! Which turn comes next is derived from the conversation (one turn per model
//! message since its last prompt), not kept in memory, so a run resumed in a
//! new process picks up exactly where the script left off, and a run that
//! goes on with an earlier conversation starts the script from the top.

use std::path::{Path, PathBuf};

use cordon_kernel::{
    Message, ModelDelta, ModelError, ModelFuture, ModelProvider, ModelRequest, ModelResponse,
    StopReason, ToolCall, Usage,
};
use serde::Deserialize;
use serde_json::Value;

/// A model that replays a script.
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    file: PathBuf,
    turns: Vec<Turn>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    #[serde(default)]
    turn: Vec<Turn>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    #[serde(default)]
    text: String,
    #[serde(default)]
    call: Vec<ScriptedCall>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptedCall {
    tool: String,
    #[serde(default = "empty_object")]
    args: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Why a script is unusable.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file cannot be read.
    #[error("{}: cannot read model script: {source}", file.display())]
    Read {
        /// The script file.
        file: PathBuf,
        /// Why it cannot be read.
        #[source]
        source: std::io::Error,
    },
    /// The file does not parse, or a turn is malformed.
    #[error("{}: {message}", file.display())]
    Invalid {
        /// The script file.
        file: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

impl ScriptedModel {
    /// Read the script at `file`.
    pub fn load(file: &Path) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(file).map_err(|source| ScriptError::Read {
            file: file.to_owned(),
            source,
        })?;
        Self::parse(file, &text)
    }

    /// Parse script `text`, reporting errors against `file`.
    pub fn parse(file: &Path, text: &str) -> Result<Self, ScriptError> {
        let invalid = |message: String| ScriptError::Invalid {
            file: file.to_owned(),
            message,
        };
        let script: Script = toml::from_str(text)
            .map_err(|error| invalid(error.to_string().trim_end().to_owned()))?;
        if script.turn.is_empty() {
            return Err(invalid("the script has no [[turn]]".into()));
        }
        for (index, turn) in script.turn.iter().enumerate() {
            if turn.text.is_empty() && turn.call.is_empty() {
                return Err(invalid(format!(
                    "turn {} has neither text nor a call",
                    index + 1
                )));
            }
            if let Some(call) = turn.call.iter().find(|call| !call.args.is_object()) {
                return Err(invalid(format!(
                    "turn {}: the args of `{}` must be a table",
                    index + 1,
                    call.tool
                )));
            }
        }
        Ok(Self {
            file: file.to_owned(),
            turns: script.turn,
        })
    }
}

impl ModelProvider for ScriptedModel {
    fn name(&self) -> &str {
        "scripted"
    }

    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelDelta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            // The turns since the last prompt: a run that goes on with an
            // earlier conversation starts its script from the top.
            let since = request
                .messages
                .iter()
                .rposition(|message| matches!(message, Message::User { .. }))
                .map_or(0, |prompt| prompt + 1);
            let position = request.messages[since..]
                .iter()
                .filter(|message| matches!(message, Message::Assistant { .. }))
                .count();
            let turn = self.turns.get(position).ok_or_else(|| {
                ModelError::Exhausted(format!(
                    "{} has {} turn(s) and step {} asked for another",
                    self.file.display(),
                    self.turns.len(),
                    position + 1
                ))
            })?;
            for word in turn.text.split_inclusive(' ') {
                deltas(ModelDelta::Text(word.to_owned()));
            }
            let tool_calls: Vec<ToolCall> = turn
                .call
                .iter()
                .enumerate()
                .map(|(index, call)| ToolCall {
                    id: format!("call-{}-{}", position + 1, index + 1),
                    name: call.tool.clone(),
                    args: call.args.clone(),
                })
                .collect();
            let stop = if tool_calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            };
            Ok(ModelResponse {
                text: turn.text.clone(),
                tool_calls,
                usage: Usage {
                    input_tokens: 0,
                    output_tokens: turn.text.split_whitespace().count() as u64,
                },
                stop,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use super::*;

    const SCRIPT: &str = r#"
        [[turn]]
        text = "Looking."
        [[turn.call]]
        tool = "files.search"
        args = { pattern = "main" }

        [[turn]]
        text = "Found it."
    "#;

    async fn step(
        model: &ScriptedModel,
        messages: &[Message],
    ) -> Result<ModelResponse, ModelError> {
        let state = BTreeMap::new();
        let request = ModelRequest {
            instructions: "",
            messages,
            tools: &[],
            state: &state,
        };
        let streamed = Mutex::new(String::new());
        let deltas = |delta: ModelDelta| {
            if let ModelDelta::Text(text) = delta {
                streamed.lock().unwrap().push_str(&text);
            }
        };
        let response = model.complete(request, &deltas).await?;
        assert_eq!(
            *streamed.lock().unwrap(),
            response.text,
            "streamed text adds up"
        );
        Ok(response)
    }

    #[tokio::test]
    async fn turns_replay_in_order_from_the_conversation() {
        let model = ScriptedModel::parse(Path::new("s.toml"), SCRIPT).unwrap();
        let first = step(&model, &[Message::User { text: "hi".into() }])
            .await
            .unwrap();
        assert_eq!(first.tool_calls[0].name, "files.search");
        assert_eq!(first.tool_calls[0].id, "call-1-1");
        assert_eq!(first.stop, StopReason::ToolUse);
        let conversation = vec![
            Message::User { text: "hi".into() },
            Message::Assistant {
                text: first.text.clone(),
                tool_calls: first.tool_calls.clone(),
            },
        ];
        let second = step(&model, &conversation).await.unwrap();
        assert_eq!(second.text, "Found it.");
        assert!(second.tool_calls.is_empty());
    }

    #[tokio::test]
    async fn a_script_that_runs_out_says_so() {
        let model = ScriptedModel::parse(Path::new("s.toml"), "[[turn]]\ntext = \"only\"").unwrap();
        let conversation = vec![Message::Assistant {
            text: "only".into(),
            tool_calls: Vec::new(),
        }];
        let error = step(&model, &conversation).await.unwrap_err().to_string();
        assert!(error.contains("s.toml has 1 turn(s)"), "{error}");
    }

    #[test]
    fn malformed_scripts_name_the_file_and_the_problem() {
        for (text, needle) in [
            ("", "no [[turn]]"),
            ("[[turn]]\n", "turn 1 has neither"),
            (
                "[[turn]]\ntext = \"a\"\n[[turn.call]]\ntool = \"x\"\nargs = 3",
                "must be a table",
            ),
            ("[[turn]]\ntxt = \"a\"", "txt"),
            ("[[turn]\n", "s.toml"),
        ] {
            let error = ScriptedModel::parse(Path::new("s.toml"), text)
                .unwrap_err()
                .to_string();
            assert!(
                error.starts_with("s.toml") && error.contains(needle),
                "{needle}: {error}"
            );
        }
    }
}
