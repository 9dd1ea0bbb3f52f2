//! The OpenAI-compatible provider against a loopback server replaying streams
//! in the chat completions wire format: assembly of text and tool calls, the
//! stream's edge cases, retries, errors, and a whole agent run.

use std::time::{Duration, Instant};

use crate::support::*;
use cordon_kernel::{ModelDelta, ModelError, Retry, StopReason};
use cordon_providers::{ApiKey, ModelOptions, OpenAiModel};
use serde_json::{Value, json};

const KEY: &str = "sk-test-0penai-s3cret-key";

fn model(server: &Server) -> OpenAiModel {
    OpenAiModel::new("gpt-test", Some(ApiKey::new(KEY)), &options(&server.url)).unwrap()
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

fn usage() -> Value {
    json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}})
}

fn text_stream(words: &[&str]) -> String {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    chunks.extend(
        words
            .iter()
            .map(|word| chunk(json!({"content": word}), None)),
    );
    chunks.push(chunk(json!({}), Some("stop")));
    chunks.push(usage());
    format!("{}data: [DONE]\n\n", data_lines(&chunks))
}

fn call_fragment(
    index: Option<u64>,
    id: Option<&str>,
    name: Option<&str>,
    arguments: &str,
) -> Value {
    let mut fragment = json!({"function": {"arguments": arguments}});
    if let Some(index) = index {
        fragment["index"] = json!(index);
    }
    if let Some(id) = id {
        fragment["id"] = json!(id);
        fragment["type"] = json!("function");
    }
    if let Some(name) = name {
        fragment["function"]["name"] = json!(name);
    }
    chunk(json!({"tool_calls": [fragment]}), None)
}

fn calls_stream(fragments: Vec<Value>, finishes: usize) -> String {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": null}), None)];
    chunks.extend(fragments);
    for _ in 0..finishes {
        chunks.push(chunk(json!({}), Some("tool_calls")));
    }
    chunks.push(usage());
    format!("{}data: [DONE]\n\n", data_lines(&chunks))
}

#[tokio::test]
async fn text_streams_as_it_arrives_and_the_request_carries_tools_and_the_key() {
    let server = Server::start(vec![Reply::Stream(text_stream(&["Hel", "lo", " world"]))]).await;
    let (result, deltas) = step(&model(&server), &[tool("files.read")]).await;
    let response = result.unwrap();
    assert_eq!(response.text, "Hello world");
    assert_eq!(streamed(&deltas), "Hello world");
    assert_eq!(deltas.len(), 3, "one delta per chunk: {deltas:?}");
    assert_eq!(response.stop, StopReason::EndTurn);
    assert_eq!(
        (response.usage.input_tokens, response.usage.output_tokens),
        (12, 5)
    );
    let request = &server.requests()[0];
    assert!(
        request.head.starts_with("POST /chat/completions "),
        "{}",
        request.head
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}"))
    );
    assert_eq!(request.body["model"], "gpt-test");
    assert_eq!(request.body["stream"], true);
    assert_eq!(request.body["messages"][0]["role"], "system");
    assert_eq!(
        request.body["messages"][1],
        json!({"role": "user", "content": "go"})
    );
    let function = &request.body["tools"][0]["function"];
    assert_eq!(function["name"], "files_read");
    assert_eq!(
        function["parameters"]["properties"]["path"]["type"],
        "string"
    );
}

#[tokio::test]
async fn tool_calls_assemble_by_index_with_id_and_name_on_the_first_fragment_only() {
    let stream = calls_stream(
        vec![
            call_fragment(Some(0), Some("call_a"), Some("files_read"), ""),
            call_fragment(Some(0), None, None, "{\"pa"),
            call_fragment(Some(1), Some("call_b"), Some("files_read"), ""),
            call_fragment(Some(0), None, None, "th\": \"a\"}"),
            call_fragment(Some(1), None, None, "{\"path\": \"b\"}"),
        ],
        1,
    );
    let server = Server::start(vec![Reply::Stream(stream)]).await;
    let (result, _) = step(&model(&server), &[tool("files.read")]).await;
    let response = result.unwrap();
    assert_eq!(response.stop, StopReason::ToolUse);
    let calls: Vec<(String, String, Value)> = response
        .tool_calls
        .into_iter()
        .map(|call| (call.id, call.name, call.args))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_a".into(), "files.read".into(), json!({"path": "a"})),
            ("call_b".into(), "files.read".into(), json!({"path": "b"})),
        ]
    );
}

#[tokio::test]
async fn a_reused_index_with_a_new_id_is_a_new_call_a_missing_index_continues_the_last_and_a_repeated_finish_is_ignored()
 {
    let stream = calls_stream(
        vec![
            call_fragment(Some(0), Some("call_a"), Some("files_read"), "{\"path\""),
            call_fragment(None, None, None, ": \"a\"}"),
            call_fragment(Some(0), Some("call_b"), Some("files_read"), "{}"),
        ],
        2,
    );
    let server = Server::start(vec![Reply::Stream(stream)]).await;
    let (result, _) = step(&model(&server), &[tool("files.read")]).await;
    let response = result.unwrap();
    assert_eq!(response.stop, StopReason::ToolUse);
    let calls = response.tool_calls;
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(
        (calls[0].id.as_str(), &calls[0].args),
        ("call_a", &json!({"path": "a"}))
    );
    assert_eq!(
        (calls[1].id.as_str(), &calls[1].args),
        ("call_b", &json!({}))
    );
}

#[tokio::test]
async fn malformed_tool_json_is_kept_raw_for_the_loop_to_answer() {
    let stream = calls_stream(
        vec![call_fragment(
            Some(0),
            Some("call_a"),
            Some("files_read"),
            "{\"path\": ",
        )],
        1,
    );
    let server = Server::start(vec![Reply::Stream(stream)]).await;
    let (result, _) = step(&model(&server), &[tool("files.read")]).await;
    assert_eq!(result.unwrap().tool_calls[0].args, json!("{\"path\": "));
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_wait_the_server_asks_for() {
    let server = Server::start(vec![
        Reply::Status {
            code: 429,
            headers: vec![("retry-after", "1".into())],
            body: r#"{"error": {"message": "slow down"}}"#.into(),
        },
        Reply::Stream(text_stream(&["ok"])),
    ])
    .await;
    let started = Instant::now();
    let (result, deltas) = step(&model(&server), &[]).await;
    assert_eq!(result.unwrap().text, "ok");
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
    // The wait is told as it begins, with why and how long.
    assert_eq!(
        deltas[0],
        ModelDelta::Retrying(Retry {
            reason: "HTTP 429: slow down".into(),
            attempt: 2,
            attempts: 3,
            after_ms: 1000,
        })
    );
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff_until_the_attempts_run_out() {
    let unavailable = || Reply::Status {
        code: 503,
        headers: Vec::new(),
        body: r#"{"error": {"message": "overloaded"}}"#.into(),
    };
    let server = Server::start(vec![unavailable(), Reply::Stream(text_stream(&["ok"]))]).await;
    let (result, _) = step(&model(&server), &[]).await;
    assert_eq!(result.unwrap().text, "ok");

    let server = Server::start(vec![unavailable(), unavailable(), unavailable()]).await;
    let (result, _) = step(&model(&server), &[]).await;
    let error = result.unwrap_err();
    assert!(
        matches!(&error, ModelError::Request(message) if message.contains("3 attempt(s)") && message.contains("HTTP 503: overloaded")),
        "{error}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_client_error_surfaces_at_once_with_status_and_message_and_no_key() {
    let server = Server::start(vec![Reply::Status {
        code: 401,
        headers: Vec::new(),
        body: r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}"#.into(),
    }])
    .await;
    let model = model(&server);
    let (result, _) = step(&model, &[]).await;
    let error = result.unwrap_err();
    assert_eq!(
        error,
        ModelError::Http {
            status: 401,
            message: "Incorrect API key provided".into()
        }
    );
    assert_eq!(server.requests().len(), 1, "client errors are not retried");
    assert!(!error.to_string().contains(KEY));
    assert!(!format!("{model:?}").contains(KEY));
}

#[tokio::test]
async fn a_stream_that_breaks_or_stalls_is_retried_from_the_start() {
    let partial = data_lines(&[chunk(json!({"content": "Hal"}), None)]);
    for broken in [
        Reply::Stream(partial.clone()),
        Reply::Broken(partial.clone()),
        Reply::Stall(partial.clone()),
    ] {
        let server =
            Server::start(vec![broken.clone(), Reply::Stream(text_stream(&["Hello"]))]).await;
        let (result, deltas) = step(&model(&server), &[]).await;
        assert_eq!(result.unwrap().text, "Hello", "{broken:?}");
        assert_eq!(streamed(&deltas), "Hal|Hello", "{broken:?}");
        assert_eq!(deltas[1], ModelDelta::Restart);
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn a_stream_ending_after_its_finish_reason_without_done_is_complete() {
    let stream = data_lines(&[
        chunk(json!({"content": "ok"}), None),
        chunk(json!({}), Some("stop")),
    ]);
    let server = Server::start(vec![Reply::Stream(stream)]).await;
    let (result, _) = step(&model(&server), &[]).await;
    assert_eq!(result.unwrap().text, "ok");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_endpoint_nobody_listens_on_is_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let model = OpenAiModel::new("gpt-test", Some(ApiKey::new(KEY)), &options(&url)).unwrap();
    let (result, _) = step(&model, &[]).await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("gave up after 3 attempt(s)")
            && error.contains("cannot reach")
            && error.contains("Connection refused"),
        "the cause is named: {error}"
    );
    assert!(!error.contains(KEY));
}

#[tokio::test]
async fn images_a_tool_returned_follow_the_steps_results_when_the_model_takes_them() {
    let server = Server::start(vec![
        Reply::Stream(text_stream(&["seen"])),
        Reply::Stream(text_stream(&["seen"])),
    ])
    .await;
    let seeing = OpenAiModel::new(
        "gpt-test",
        Some(ApiKey::new(KEY)),
        &ModelOptions {
            images: Some(true),
            ..options(&server.url)
        },
    )
    .unwrap();
    step_after_blocks(&seeing, media_blocks()).await.unwrap();
    let messages = server.requests()[0].body["messages"].clone();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    // Tool messages follow their assistant turn unbroken; the image after.
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "tool", "user"]
    );
    let first = messages[3]["content"].as_str().unwrap();
    assert!(first.starts_with("{\"shown\":true}"), "{first}");
    assert!(
        first.contains("[resource file:///notes.txt]\nthe notes"),
        "{first}"
    );
    assert!(first.contains("[audio (audio/wav) left out"), "{first}");
    assert_eq!(messages[4]["content"], "plain");
    assert_eq!(
        messages[5]["content"],
        json!([
            {"type": "text", "text": "The images tool call call-1-1 returned:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ])
    );

    // An endpoint of another provider is sent no images unless the agent
    // says it takes them; the result says what was left out.
    step_after_blocks(&model(&server), media_blocks())
        .await
        .unwrap();
    let messages = server.requests()[1].body["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 5, "{messages}");
    let first = messages[3]["content"].as_str().unwrap();
    assert!(
        first.contains(
            "[image (image/png) left out: this model is not sent images; `images = true`"
        ),
        "{first}"
    );
}
