//! Helpers for the provider tests: the loopback server of `cordon-tests`, fast
//! retry options, and one model step with its deltas.

#![allow(dead_code)]

use std::sync::Mutex;
use std::time::Duration;

use cordon_kernel::{
    ModelDelta, ModelError, ModelProvider, ModelRequest, ModelResponse, ToolAnnotations, ToolSpec,
};
use cordon_providers::{ModelOptions, RetryPolicy};
use serde_json::Value;

pub(crate) use cordon_tests::replay::{Reply, Server};

/// Options for a provider at `url` that retries quickly.
pub(crate) fn options(url: &str) -> ModelOptions {
    ModelOptions {
        base_url: Some(url.to_owned()),
        idle_timeout: Duration::from_millis(500),
        retry: RetryPolicy {
            attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(5),
        },
        ..ModelOptions::default()
    }
}

/// A tool spec named `name` taking a `path` string.
pub(crate) fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("the {name} tool"),
        input_schema: std::sync::Arc::new(serde_json::json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
        })),
        output_schema: None,
        annotations: ToolAnnotations::default(),
    }
}

/// One step against `model` with the user saying `text` and `tools` offered,
/// returning the response and the deltas it streamed.
pub(crate) async fn step(
    model: &dyn ModelProvider,
    tools: &[ToolSpec],
) -> (Result<ModelResponse, ModelError>, Vec<ModelDelta>) {
    let messages = vec![cordon_kernel::Message::User { text: "go".into() }];
    let state = std::collections::BTreeMap::new();
    let request = ModelRequest {
        instructions: "be brief",
        messages: &messages,
        tools,
        state: &state,
    };
    let seen = Mutex::new(Vec::new());
    let deltas = |delta: ModelDelta| seen.lock().unwrap().push(delta);
    let result = model.complete(request, &deltas).await;
    (result, seen.into_inner().unwrap())
}

/// One step against `model` whose conversation holds a call that returned
/// `blocks` beside its output `{"shown": true}`, and a call that returned
/// none; the request the server received is what the test looks at.
pub(crate) async fn step_after_blocks(
    model: &dyn ModelProvider,
    blocks: Vec<cordon_kernel::ContentBlock>,
) -> Result<ModelResponse, ModelError> {
    use cordon_kernel::{CallResult, Message, ToolCall};
    let call = |id: &str| ToolCall {
        id: id.into(),
        name: "chart.draw".into(),
        args: serde_json::json!({}),
    };
    let messages = vec![
        Message::User { text: "go".into() },
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("call-1-1"), call("call-1-2")],
        },
        Message::Tool {
            call_id: "call-1-1".into(),
            result: CallResult::Output(serde_json::json!({"shown": true})),
            blocks,
        },
        Message::Tool {
            call_id: "call-1-2".into(),
            result: CallResult::Output(serde_json::json!("plain")),
            blocks: Vec::new(),
        },
    ];
    let state = std::collections::BTreeMap::new();
    let tools = [tool("chart.draw")];
    let request = ModelRequest {
        instructions: "be brief",
        messages: &messages,
        tools: &tools,
        state: &state,
    };
    model.complete(request, &|_| {}).await
}

/// An image, audio and a text resource, as a tool attaches them.
pub(crate) fn media_blocks() -> Vec<cordon_kernel::ContentBlock> {
    use cordon_kernel::{ContentBlock, ResourceBody};
    vec![
        ContentBlock::Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        },
        ContentBlock::Audio {
            mime_type: "audio/wav".into(),
            data: "UklGRg==".into(),
        },
        ContentBlock::Resource {
            uri: "file:///notes.txt".into(),
            mime_type: Some("text/plain".into()),
            body: ResourceBody::Text("the notes".into()),
        },
    ]
}

/// The text deltas of `deltas`, joined, with a restart shown as `|`.
pub(crate) fn streamed(deltas: &[ModelDelta]) -> String {
    deltas
        .iter()
        .map(|delta| match delta {
            ModelDelta::Text(text) => text.as_str(),
            ModelDelta::Restart => "|",
            ModelDelta::Retrying(_) => "",
        })
        .collect()
}

/// SSE `data:` lines for each JSON value, as OpenAI-compatible servers send them.
pub(crate) fn data_lines(chunks: &[Value]) -> String {
    chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect()
}
