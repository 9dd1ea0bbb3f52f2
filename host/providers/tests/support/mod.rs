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
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
        }),
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

/// The text deltas of `deltas`, joined, with a restart shown as `|`.
pub(crate) fn streamed(deltas: &[ModelDelta]) -> String {
    deltas
        .iter()
        .map(|delta| match delta {
            ModelDelta::Text(text) => text.as_str(),
            ModelDelta::Restart => "|",
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
