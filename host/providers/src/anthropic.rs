//! Anthropic's Messages API, streamed (`POST {base}/v1/messages`).
//!
//! Text arrives as `text_delta`s and a tool call's input as `input_json_delta`
//! fragments of its content block; the input is parsed once, when its block
//! stops (an empty input is `{}`). `ping`s are ignored; an `error` event for an
//! overloaded or failing provider is retried, any other fails the step. The
//! stream is complete at `message_stop`.

use std::collections::BTreeMap;

use cordon_kernel::{
    Message, ModelDelta, ModelError, ModelFuture, ModelProvider, ModelRequest, ModelResponse,
    StopReason, ToolCall, Usage,
};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ModelOptions;
use crate::http::{ApiKey, Assembly, Flow, Post, StreamError, Transport};
use crate::names::Names;
use crate::prompt::{attached, parse_arguments, result_text, system_text};

/// The default base URL.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The API version this client speaks.
const API_VERSION: &str = "2023-06-01";
/// Output tokens per step when the agent does not say; the API requires a value.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A model behind Anthropic's Messages API.
#[derive(Debug)]
pub struct AnthropicModel {
    model: String,
    base_url: String,
    key: ApiKey,
    temperature: Option<f64>,
    max_tokens: u32,
    images: bool,
    transport: Transport,
}

impl AnthropicModel {
    /// `model` at `options.base_url` (default [`ANTHROPIC_BASE_URL`]).
    pub fn new(model: &str, key: ApiKey, options: &ModelOptions) -> Result<Self, ModelError> {
        Ok(Self {
            model: model.to_owned(),
            base_url: options.base_url_or(ANTHROPIC_BASE_URL),
            key,
            temperature: options.temperature,
            max_tokens: options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            images: options.images.unwrap_or(true),
            transport: Transport::new(
                options.connect_timeout,
                options.idle_timeout,
                options.retry,
            )?,
        })
    }

    fn body(&self, request: &ModelRequest<'_>, names: &Names) -> Value {
        let mut messages: Vec<Value> = Vec::new();
        for message in request.messages {
            let (role, blocks) = match message {
                Message::User { text } => ("user", vec![json!({"type": "text", "text": text})]),
                Message::Assistant { text, tool_calls } => {
                    let mut blocks = Vec::new();
                    if !text.is_empty() {
                        blocks.push(json!({"type": "text", "text": text}));
                    }
                    for call in tool_calls {
                        let input = if call.args.is_object() {
                            call.args.clone()
                        } else {
                            json!({})
                        };
                        blocks.push(json!({
                            "type": "tool_use",
                            "id": call.id,
                            "name": names.wire(&call.name),
                            "input": input,
                        }));
                    }
                    ("assistant", blocks)
                }
                Message::Tool {
                    call_id,
                    result,
                    blocks,
                } => {
                    let (mut text, is_error) = result_text(result);
                    let attached = attached(blocks, self.images);
                    text.push_str(&attached.text);
                    let content = if attached.images.is_empty() {
                        json!(text)
                    } else {
                        let mut parts = vec![json!({"type": "text", "text": text})];
                        parts.extend(attached.images.into_iter().map(|(media_type, data)| {
                            json!({
                                "type": "image",
                                "source": {"type": "base64", "media_type": media_type, "data": data},
                            })
                        }));
                        Value::Array(parts)
                    };
                    let block = json!({
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "content": content,
                        "is_error": is_error,
                    });
                    ("user", vec![block])
                }
            };
            if blocks.is_empty() {
                continue;
            }
            // The API wants roles to alternate: consecutive blocks of one role
            // (all the results of a step's calls) go in one message.
            match messages.last_mut() {
                Some(last) if last["role"] == role => {
                    if let Some(content) = last["content"].as_array_mut() {
                        content.extend(blocks);
                    }
                }
                _ => messages.push(json!({"role": role, "content": blocks})),
            }
        }
        let mut body = json!({
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": system_text(request),
            "messages": messages,
            "stream": true,
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": names.wire(&tool.name),
                        "description": tool.description,
                        "input_schema": tool.input_schema,
                    })
                })
                .collect();
        }
        if let Some(temperature) = self.temperature {
            body["temperature"] = json!(temperature);
        }
        body
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-api-key"), self.key.header("")?);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        Ok(headers)
    }
}

impl ModelProvider for AnthropicModel {
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
                url: format!("{}/v1/messages", self.base_url),
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
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartedMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u64,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        delta: MessageDelta,
        usage: Option<DeltaUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: ErrorBody,
    },
}

#[derive(Deserialize)]
struct StartedMessage {
    usage: Option<StartUsage>,
}

#[derive(Deserialize)]
struct StartUsage {
    #[serde(default)]
    input_tokens: u64,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct DeltaUsage {
    #[serde(default)]
    output_tokens: u64,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

/// A content block being assembled.
enum Open {
    Text,
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Ignored,
}

/// One response being assembled from events.
struct Stream {
    names: Names,
    open: BTreeMap<u64, Open>,
    text: String,
    calls: Vec<ToolCall>,
    usage: Usage,
    stop: Option<String>,
    stopped: bool,
}

impl Stream {
    fn new(names: Names) -> Self {
        Self {
            names,
            open: BTreeMap::new(),
            text: String::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            stop: None,
            stopped: false,
        }
    }
}

impl Assembly for Stream {
    fn event(
        &mut self,
        _name: &str,
        data: &str,
        deltas: &(dyn Fn(ModelDelta) + Send + Sync),
    ) -> Result<Flow, StreamError> {
        let event: Event = match serde_json::from_str::<Value>(data) {
            Ok(value)
                if value
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(is_known) =>
            {
                serde_json::from_value(value).map_err(|error| {
                    StreamError::Retry(format!("an event of the stream does not parse: {error}"))
                })?
            }
            Ok(_) => return Ok(Flow::More),
            Err(error) => {
                return Err(StreamError::Retry(format!(
                    "an event of the stream is not valid JSON: {error}"
                )));
            }
        };
        match event {
            Event::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.usage.input_tokens = usage.input_tokens;
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let open = match content_block {
                    Block::Text { text } => {
                        if !text.is_empty() {
                            deltas(ModelDelta::Text(text.clone()));
                            self.text.push_str(&text);
                        }
                        Open::Text
                    }
                    Block::ToolUse { id, name } => Open::Tool {
                        id,
                        name,
                        json: String::new(),
                    },
                    Block::Other => Open::Ignored,
                };
                self.open.insert(index, open);
            }
            Event::ContentBlockDelta { index, delta } => match (self.open.get_mut(&index), delta) {
                (Some(Open::Text), BlockDelta::TextDelta { text }) => {
                    deltas(ModelDelta::Text(text.clone()));
                    self.text.push_str(&text);
                }
                (Some(Open::Tool { json, .. }), BlockDelta::InputJsonDelta { partial_json }) => {
                    json.push_str(&partial_json);
                }
                _ => {}
            },
            Event::ContentBlockStop { index } => {
                if let Some(Open::Tool { id, name, json }) = self.open.remove(&index) {
                    self.calls.push(ToolCall {
                        id,
                        name: self.names.tool(&name),
                        args: parse_arguments(&json),
                    });
                }
            }
            Event::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop = delta.stop_reason;
                }
                if let Some(usage) = usage {
                    self.usage.output_tokens = usage.output_tokens;
                }
            }
            Event::MessageStop => {
                self.stopped = true;
                return Ok(Flow::Done);
            }
            Event::Ping => {}
            Event::Error { error } => {
                let message = format!("{}: {}", error.kind, error.message);
                return Err(match error.kind.as_str() {
                    "overloaded_error" | "api_error" | "rate_limit_error" => {
                        StreamError::Retry(message)
                    }
                    _ => StreamError::Fatal(ModelError::Request(format!(
                        "the provider reported an error mid-stream: {message}"
                    ))),
                });
            }
        }
        Ok(Flow::More)
    }

    fn complete(&self) -> bool {
        self.stopped
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        let stop = match self.stop.as_deref() {
            Some("max_tokens") => StopReason::MaxTokens,
            _ if !self.calls.is_empty() => StopReason::ToolUse,
            _ => StopReason::EndTurn,
        };
        Ok(ModelResponse {
            text: self.text,
            tool_calls: self.calls,
            usage: self.usage,
            stop,
        })
    }
}

/// Whether this client knows events of `kind`; others are skipped, as the API
/// asks of clients.
fn is_known(kind: &str) -> bool {
    matches!(
        kind,
        "message_start"
            | "content_block_start"
            | "content_block_delta"
            | "content_block_stop"
            | "message_delta"
            | "message_stop"
            | "ping"
            | "error"
    )
}
