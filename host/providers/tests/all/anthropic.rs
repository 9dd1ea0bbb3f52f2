//! The Anthropic provider against a loopback server replaying streams in the
//! Messages API's event format: text and tool-use blocks, pings, error events,
//! retries and errors.

use std::time::Duration;

use crate::support::*;
use cordon_kernel::{ModelError, StopReason};
use cordon_providers::{AnthropicModel, ApiKey};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-test-s3cret-key";

fn model(server: &Server) -> AnthropicModel {
    AnthropicModel::new("claude-test", ApiKey::new(KEY), &options(&server.url)).unwrap()
}

fn event(kind: &str, value: Value) -> String {
    let mut value = value;
    value["type"] = json!(kind);
    format!("event: {kind}\ndata: {value}\n\n")
}

fn start() -> String {
    event(
        "message_start",
        json!({"message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 21, "output_tokens": 1}}}),
    )
}

fn finish(stop: &str) -> String {
    event(
        "message_delta",
        json!({"delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 9}}),
    ) + &event("message_stop", json!({}))
}

fn text_block(index: u64, parts: &[&str]) -> String {
    let mut events = event(
        "content_block_start",
        json!({"index": index, "content_block": {"type": "text", "text": ""}}),
    );
    for part in parts {
        events += &event(
            "content_block_delta",
            json!({"index": index, "delta": {"type": "text_delta", "text": part}}),
        );
    }
    events + &event("content_block_stop", json!({"index": index}))
}

fn tool_block(index: u64, id: &str, name: &str, parts: &[&str]) -> String {
    let mut events = event(
        "content_block_start",
        json!({"index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
    );
    for part in parts {
        events += &event(
            "content_block_delta",
            json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": part}}),
        );
    }
    events + &event("content_block_stop", json!({"index": index}))
}

#[tokio::test]
async fn text_and_tool_use_blocks_assemble_and_the_request_speaks_the_messages_api() {
    let stream = start()
        + &event("ping", json!({}))
        + &text_block(0, &["Let me ", "look."])
        + &tool_block(1, "toolu_1", "files_read", &["{\"pa", "th\": \"a\"}"])
        + &tool_block(2, "toolu_2", "files_read", &[])
        + &finish("tool_use");
    let server = Server::start(vec![Reply::Stream(stream)]).await;
    let (result, deltas) = step(&model(&server), &[tool("files.read")]).await;
    let response = result.unwrap();
    assert_eq!(response.text, "Let me look.");
    assert_eq!(streamed(&deltas), "Let me look.");
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(
        (response.usage.input_tokens, response.usage.output_tokens),
        (21, 9)
    );
    let calls: Vec<(String, String, Value)> = response
        .tool_calls
        .into_iter()
        .map(|call| (call.id, call.name, call.args))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("toolu_1".into(), "files.read".into(), json!({"path": "a"})),
            ("toolu_2".into(), "files.read".into(), json!({})),
        ]
    );
    let request = &server.requests()[0];
    assert!(
        request.head.starts_with("POST /v1/messages "),
        "{}",
        request.head
    );
    assert_eq!(request.header("x-api-key").as_deref(), Some(KEY));
    assert_eq!(
        request.header("anthropic-version").as_deref(),
        Some("2023-06-01")
    );
    assert_eq!(request.body["system"], "be brief");
    assert_eq!(request.body["max_tokens"], 4096);
    assert_eq!(request.body["tools"][0]["name"], "files_read");
    assert_eq!(
        request.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "go"}]}])
    );
}

#[tokio::test]
async fn an_overloaded_error_event_is_retried_and_an_invalid_request_is_not() {
    let overloaded = start()
        + &text_block(0, &["Hal"])
        + &event(
            "error",
            json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}),
        );
    let good = start() + &text_block(0, &["Hello"]) + &finish("end_turn");
    let server = Server::start(vec![Reply::Stream(overloaded), Reply::Stream(good)]).await;
    let (result, deltas) = step(&model(&server), &[]).await;
    assert_eq!(result.unwrap().text, "Hello");
    assert_eq!(streamed(&deltas), "Hal|Hello");

    let invalid = start()
        + &event(
            "error",
            json!({"error": {"type": "invalid_request_error", "message": "bad tools"}}),
        );
    let server = Server::start(vec![Reply::Stream(invalid)]).await;
    let (result, _) = step(&model(&server), &[]).await;
    let error = result.unwrap_err();
    assert!(error.to_string().contains("bad tools"), "{error}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_cut_before_message_stop_is_retried_and_http_errors_name_their_status() {
    let cut = start() + &tool_block(0, "toolu_1", "files_read", &["{\"path\""]);
    let good = start() + &tool_block(0, "toolu_9", "files_read", &["{}"]) + &finish("tool_use");
    let server = Server::start(vec![
        Reply::Stream(cut),
        Reply::Status {
            code: 529,
            headers: vec![("retry-after", "0".into())],
            body: r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#.into(),
        },
        Reply::Stream(good),
    ])
    .await;
    let (result, _) = step(&model(&server), &[tool("files.read")]).await;
    assert_eq!(result.unwrap().tool_calls[0].id, "toolu_9");
    assert_eq!(server.requests().len(), 3);

    let server = Server::start(vec![Reply::Status {
        code: 400,
        headers: Vec::new(),
        body: r#"{"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too large"}}"#.into(),
    }])
    .await;
    let model = model(&server);
    let (result, _) = step(&model, &[]).await;
    assert_eq!(
        result.unwrap_err(),
        ModelError::Http {
            status: 400,
            message: "max_tokens: too large".into()
        }
    );
    assert!(!format!("{model:?}").contains(KEY));
}

#[tokio::test]
async fn an_idle_stream_times_out_and_is_retried() {
    let server = Server::start(vec![
        Reply::Stall(start()),
        Reply::Stream(start() + &text_block(0, &["ok"]) + &finish("end_turn")),
    ])
    .await;
    let started = std::time::Instant::now();
    let (result, _) = step(&model(&server), &[]).await;
    assert_eq!(result.unwrap().text, "ok");
    assert!(started.elapsed() >= Duration::from_millis(450));
}

#[tokio::test]
async fn images_a_tool_returned_travel_inside_its_tool_result() {
    let server = Server::start(vec![
        Reply::Stream(start() + &text_block(0, &["seen"]) + &finish("end_turn")),
        Reply::Stream(start() + &text_block(0, &["seen"]) + &finish("end_turn")),
    ])
    .await;
    step_after_blocks(&model(&server), media_blocks())
        .await
        .unwrap();
    let messages = server.requests()[0].body["messages"].clone();
    let results = messages[2]["content"].clone();
    assert_eq!(messages[2]["role"], "user");
    let parts = results[0]["content"].as_array().unwrap();
    assert_eq!(results[0]["tool_use_id"], "call-1-1");
    let text = parts[0]["text"].as_str().unwrap();
    assert!(text.starts_with("{\"shown\":true}"), "{text}");
    assert!(
        text.contains("[resource file:///notes.txt]\nthe notes"),
        "{text}"
    );
    assert!(text.contains("[audio (audio/wav) left out"), "{text}");
    assert_eq!(
        parts[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
    );
    assert_eq!(parts.len(), 2);
    assert_eq!(results[1]["content"], "plain");

    let blind = AnthropicModel::new(
        "claude-test",
        ApiKey::new(KEY),
        &cordon_providers::ModelOptions {
            images: Some(false),
            ..options(&server.url)
        },
    )
    .unwrap();
    step_after_blocks(&blind, media_blocks()).await.unwrap();
    let results = server.requests()[1].body["messages"][2]["content"].clone();
    let text = results[0]["content"].as_str().unwrap();
    assert!(text.contains("[image (image/png) left out"), "{text}");
}
