//! A scripted model for runs over real components: it answers each request
//! with the next turn and keeps every request it was sent.

use std::collections::VecDeque;
use std::sync::Mutex;

use cordon_kernel::{
    ModelDelta, ModelError, ModelFuture, ModelProvider, ModelRequest, ModelResponse, StopReason,
    ToolCall, Usage,
};
use serde_json::Value;

/// Replays turns and keeps every request it was sent, as JSON text.
pub struct Script {
    turns: Mutex<VecDeque<ModelResponse>>,
    requests: Mutex<Vec<String>>,
}

impl Script {
    /// A model that answers with `turns`, in order.
    pub fn new(turns: Vec<ModelResponse>) -> Self {
        Self {
            turns: Mutex::new(turns.into()),
            requests: Mutex::default(),
        }
    }

    /// Every request so far: the instructions, then the messages as JSON.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl ModelProvider for Script {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
        _deltas: &'a (dyn Fn(ModelDelta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            self.requests.lock().unwrap().push(format!(
                "{}\n{}",
                request.instructions,
                serde_json::to_string(request.messages).unwrap()
            ));
            self.turns
                .lock()
                .unwrap()
                .pop_front()
                .ok_or_else(|| ModelError::Exhausted("no turn left".into()))
        })
    }
}

/// A turn that makes `calls`, each an id, a tool and its arguments, in order.
pub fn calls(calls: &[(&str, &str, Value)]) -> ModelResponse {
    ModelResponse {
        text: String::new(),
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: (*id).into(),
                name: (*name).into(),
                args: args.clone(),
            })
            .collect(),
        usage: Usage::default(),
        stop: StopReason::ToolUse,
    }
}

/// A turn that answers and ends the run.
pub fn answer() -> ModelResponse {
    ModelResponse {
        text: "done".into(),
        tool_calls: Vec::new(),
        usage: Usage::default(),
        stop: StopReason::EndTurn,
    }
}
