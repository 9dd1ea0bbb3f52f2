//! OpenAI-compatible chat completions, streamed: OpenAI, Ollama, llama.cpp's
//! server, vLLM, OpenRouter and anything else that speaks
//! `POST {base}/chat/completions` with `stream: true`.
//!
//! Tool calls arrive in fragments keyed by `index`; the id and name come only
//! on a call's first fragment. A fragment with a known index but a new id
//! starts a new call; a fragment without an index continues the call its id
//! names, or the last one. A repeated `finish_reason` is ignored. The stream
//! ends with `data: [DONE]`; a stream that closes after its finish reason
//! without one is complete too.

use cordon_kernel::{
    Message, ModelDelta, ModelError, ModelFuture, ModelProvider, ModelRequest, ModelResponse,
    StopReason, ToolCall, Usage,
};
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ModelOptions;
use crate::http::{ApiKey, Assembly, Flow, Post, StreamError, Transport};
use crate::names::Names;
use crate::prompt::{arguments_text, attached, parse_arguments, result_text, system_text};

/// The default base URL.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// A model behind an OpenAI-compatible chat completions endpoint.
#[derive(Debug)]
pub struct OpenAiModel {
    model: String,
    base_url: String,
    key: Option<ApiKey>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    images: bool,
    transport: Transport,
}

impl OpenAiModel {
    /// `model` at `options.base_url` (default [`OPENAI_BASE_URL`]),
    /// authenticating with `key` when given.
    pub fn new(
        model: &str,
        key: Option<ApiKey>,
        options: &ModelOptions,
    ) -> Result<Self, ModelError> {
        Ok(Self {
            model: model.to_owned(),
            base_url: options.base_url_or(OPENAI_BASE_URL),
            images: options.images.unwrap_or_else(|| {
                options
                    .base_url
                    .as_deref()
                    .is_none_or(|url| url.starts_with(OPENAI_BASE_URL))
            }),
            key,
            temperature: options.temperature,
            max_tokens: options.max_tokens,
            transport: Transport::new(
                options.connect_timeout,
                options.idle_timeout,
                options.retry,
            )?,
        })
    }

    fn body(&self, request: &ModelRequest<'_>, names: &Names) -> Value {
        let mut messages = vec![json!({"role": "system", "content": system_text(request)})];
        let mut shown = Vec::new();
        for message in request.messages {
            if !matches!(message, Message::Tool { .. }) {
                flush_images(&mut messages, &mut shown);
            }
            messages.push(match message {
                Message::User { text } => json!({"role": "user", "content": text}),
                Message::Assistant { text, tool_calls } => {
                    let mut turn = json!({
                        "role": "assistant",
                        "content": if text.is_empty() { Value::Null } else { json!(text) },
                    });
                    if !tool_calls.is_empty() {
                        turn["tool_calls"] = tool_calls
                            .iter()
                            .map(|call| {
                                json!({
                                    "id": call.id,
                                    "type": "function",
                                    "function": {
                                        "name": names.wire(&call.name),
                                        "arguments": arguments_text(&call.args),
                                    },
                                })
                            })
                            .collect();
                    }
                    turn
                }
                Message::Tool {
                    call_id,
                    result,
                    blocks,
                } => {
                    let mut text = result_text(result).0;
                    let attached = attached(blocks, self.images);
                    text.push_str(&attached.text);
                    // A tool message holds text only: the images follow the
                    // step's results, in one user message.
                    if !attached.images.is_empty() {
                        shown.push(json!({"type": "text", "text": format!("The images tool call {call_id} returned:")}));
                        shown.extend(attached.images.into_iter().map(|(mime, data)| {
                            json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
                        }));
                    }
                    json!({"role": "tool", "tool_call_id": call_id, "content": text})
                }
            });
        }
        flush_images(&mut messages, &mut shown);
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": names.wire(&tool.name),
                            "description": tool.description,
                            "parameters": tool.input_schema,
                        },
                    })
                })
                .collect();
        }
        if let Some(temperature) = self.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(max_tokens) = self.max_tokens {
            body["max_tokens"] = json!(max_tokens);
        }
        body
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.key {
            headers.insert(AUTHORIZATION, key.header("Bearer ")?);
        }
        Ok(headers)
    }
}

impl ModelProvider for OpenAiModel {
    fn name(&self) -> &str {
        self.model.as_str()
    }

    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelDelta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            let names = Names::new(request.tools);
            let body = self.body(&request, &names);
            let post = Post {
                url: format!("{}/chat/completions", self.base_url),
                headers: self.headers()?,
                body: &body,
            };
            self.transport
                .stream(&post, || Stream::new(names.clone()), deltas)
                .await
        })
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<ChunkUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<CallFragment>,
}

#[derive(Deserialize)]
struct CallFragment {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// A call being assembled.
#[derive(Debug, Default)]
struct Partial {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// One response being assembled from chunks.
struct Stream {
    names: Names,
    text: String,
    calls: Vec<Partial>,
    usage: Usage,
    finish: Option<String>,
}

impl Stream {
    fn new(names: Names) -> Self {
        Self {
            names,
            text: String::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            finish: None,
        }
    }

    /// The call `fragment` belongs to, started if it is new.
    fn slot(&mut self, fragment: &CallFragment) -> usize {
        let id = fragment.id.as_deref().filter(|id| !id.is_empty());
        let found = match (fragment.index, id) {
            (Some(index), Some(id)) => self
                .calls
                .iter()
                .rposition(|call| call.index == Some(index))
                .filter(|&at| self.calls[at].id.is_empty() || self.calls[at].id == id),
            (Some(index), None) => self
                .calls
                .iter()
                .rposition(|call| call.index == Some(index)),
            (None, Some(id)) => self.calls.iter().position(|call| call.id == id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        found.unwrap_or_else(|| {
            self.calls.push(Partial {
                index: fragment.index,
                ..Partial::default()
            });
            self.calls.len() - 1
        })
    }
}

impl Assembly for Stream {
    fn event(
        &mut self,
        _name: &str,
        data: &str,
        deltas: &(dyn Fn(ModelDelta) + Send + Sync),
    ) -> Result<Flow, StreamError> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        if data.is_empty() {
            return Ok(Flow::More);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|error| {
            StreamError::Retry(format!("a chunk of the stream is not valid JSON: {error}"))
        })?;
        if let Some(error) = chunk.error {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(StreamError::Fatal(ModelError::Request(format!(
                "the provider reported an error mid-stream: {message}"
            ))));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            };
        }
        for choice in chunk.choices {
            if let Some(text) = choice.delta.content.filter(|text| !text.is_empty()) {
                deltas(ModelDelta::Text(text.clone()));
                self.text.push_str(&text);
            }
            for fragment in &choice.delta.tool_calls {
                let slot = self.slot(fragment);
                let call = &mut self.calls[slot];
                if call.id.is_empty()
                    && let Some(id) = &fragment.id
                {
                    call.id.clone_from(id);
                }
                if let Some(function) = &fragment.function {
                    if call.name.is_empty()
                        && let Some(name) = &function.name
                    {
                        call.name.clone_from(name);
                    }
                    if let Some(arguments) = &function.arguments {
                        call.arguments.push_str(arguments);
                    }
                }
            }
            if self.finish.is_none() {
                self.finish = choice.finish_reason;
            }
        }
        Ok(Flow::More)
    }

    fn complete(&self) -> bool {
        self.finish.is_some()
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .filter(|call| !call.name.is_empty())
            .enumerate()
            .map(|(position, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call-{}", position + 1)
                } else {
                    call.id
                },
                name: self.names.tool(&call.name),
                args: parse_arguments(&call.arguments),
            })
            .collect();
        let stop = match self.finish.as_deref() {
            Some("length") => StopReason::MaxTokens,
            _ if !tool_calls.is_empty() => StopReason::ToolUse,
            _ => StopReason::EndTurn,
        };
        Ok(ModelResponse {
            text: self.text,
            tool_calls,
            usage: self.usage,
            stop,
        })
    }
}

/// The images a step's results returned (`shown`), as the user message that
/// follows those results; nothing when there are none.
fn flush_images(messages: &mut Vec<Value>, shown: &mut Vec<Value>) {
    if !shown.is_empty() {
        messages.push(json!({"role": "user", "content": std::mem::take(shown)}));
    }
}
