//! Whole agent runs through each hosted provider: the loop sends the tools,
//! runs the calls the model streams, sends the results back in the provider's
//! format, and commits; a stream that breaks is retried before its step
//! commits, so no tool runs twice; the API key never reaches the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::*;
use cordon_kernel::{
    AgentDef, CallContext, CallResult, CommitStore, EndCause, EventLog, MemoryCommitStore, Message,
    ModelProvider, PermissionPolicy, RunOutcome, Runtime, ToolCallOutcome, ToolErrorKind,
    ToolFuture, ToolOutput, ToolSet, ToolSpec, Verdict,
};
use cordon_providers::{AnthropicModel, ApiKey, OpenAiModel};
use serde_json::{Value, json};

const KEY: &str = "sk-run-test-s3cret";

/// `files.read`, answering with the path it was given and counting its calls.
#[derive(Default)]
struct Files {
    calls: AtomicUsize,
}

impl ToolSet for Files {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![tool("files.read")]
    }

    fn call<'a>(&'a self, _name: &'a str, args: Value, _context: CallContext) -> ToolFuture<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            ToolCallOutcome {
                files: Default::default(),
                skills: Vec::new(),
                events: Vec::new(),
                result: Ok(ToolOutput::new(json!({"read": args["path"]}))),
                writes: Vec::new(),
            }
        })
    }
}

async fn run(model: Arc<dyn ModelProvider>) -> (RunOutcome, Arc<Files>, Arc<MemoryCommitStore>) {
    let files = Arc::new(Files::default());
    let store = Arc::new(MemoryCommitStore::new());
    let events = Arc::new(EventLog::new());
    let runtime = Runtime::new(model, files.clone(), store.clone(), events);
    let agent = AgentDef::new(
        "t",
        "be brief",
        &["*"],
        4,
        PermissionPolicy::new(Verdict::Allow),
    )
    .unwrap();
    let outcome = runtime.start(&agent, "r", 1, "read a and b").await.unwrap();
    (outcome, files, store)
}

fn answer(outcome: &RunOutcome) -> Option<&str> {
    match outcome {
        RunOutcome::Ended {
            cause: EndCause::FinalAnswer,
            answer,
            ..
        } => answer.as_deref(),
        _ => None,
    }
}

fn openai_calls() -> String {
    let chunk = |delta: Value, finish: Option<&str>| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let chunks = [
        chunk(json!({"role": "assistant", "content": "Reading."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "files_read", "arguments": "{\"path\": \"a\"}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "files_read", "arguments": "{\"path\": "}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ];
    format!("{}data: [DONE]\n\n", data_lines(&chunks))
}

fn openai_answer() -> String {
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"content": "a was read"}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ];
    format!("{}data: [DONE]\n\n", data_lines(&chunks))
}

#[tokio::test]
async fn an_openai_run_calls_tools_answers_malformed_arguments_and_retries_before_committing() {
    let broken = data_lines(&[
        json!({"choices": [{"index": 0, "delta": {"content": "a w"}, "finish_reason": null}]}),
    ]);
    let server = Server::start(vec![
        Reply::Stream(openai_calls()),
        Reply::Broken(broken),
        Reply::Stream(openai_answer()),
    ])
    .await;
    let model =
        OpenAiModel::new("gpt-test", Some(ApiKey::new(KEY)), &options(&server.url)).unwrap();
    let (outcome, files, store) = run(Arc::new(model)).await;
    assert_eq!(answer(&outcome), Some("a was read"), "{outcome:?}");
    assert_eq!(
        files.calls.load(Ordering::SeqCst),
        1,
        "only the well-formed call ran, once"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let messages = &requests[2].body["messages"];
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["name"],
        "files_read"
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_a");
    assert_eq!(messages[3]["content"], "{\"read\":\"a\"}");
    assert_eq!(messages[4]["tool_call_id"], "call_b");
    let refused = messages[4]["content"].as_str().unwrap();
    assert!(refused.starts_with("error (invalid-input)"), "{refused}");

    let record = store.load("r").await.unwrap();
    let results: Vec<CallResult> = record
        .messages()
        .into_iter()
        .filter_map(|message| match message {
            Message::Tool { result, .. } => Some(result),
            _ => None,
        })
        .collect();
    assert!(
        matches!(&results[1], CallResult::Error(error) if error.kind == ToolErrorKind::InvalidInput)
    );
    assert_eq!(
        record.last_seq(),
        3,
        "the prompt, the calls, the answer: each committed once"
    );
    let stored = serde_json::to_string(&record.commits).unwrap();
    assert!(!stored.contains(KEY));
}

fn anthropic_event(kind: &str, mut value: Value) -> String {
    value["type"] = json!(kind);
    format!("event: {kind}\ndata: {value}\n\n")
}

#[tokio::test]
async fn an_anthropic_run_groups_tool_results_into_one_user_turn() {
    let start = anthropic_event(
        "message_start",
        json!({"message": {"usage": {"input_tokens": 3}}}),
    );
    let stop = |reason: &str| {
        anthropic_event(
            "message_delta",
            json!({"delta": {"stop_reason": reason}, "usage": {"output_tokens": 2}}),
        ) + &anthropic_event("message_stop", json!({}))
    };
    let tool = |index: u64, id: &str, path: &str| {
        anthropic_event(
            "content_block_start",
            json!({"index": index, "content_block": {"type": "tool_use", "id": id, "name": "files_read", "input": {}}}),
        ) + &anthropic_event(
            "content_block_delta",
            json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": format!("{{\"path\": \"{path}\"}}")}}),
        ) + &anthropic_event("content_block_stop", json!({"index": index}))
    };
    let calls =
        start.clone() + &tool(0, "toolu_a", "a") + &tool(1, "toolu_b", "b") + &stop("tool_use");
    let done = start
        + &anthropic_event(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "text", "text": ""}}),
        )
        + &anthropic_event(
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "text_delta", "text": "both read"}}),
        )
        + &anthropic_event("content_block_stop", json!({"index": 0}))
        + &stop("end_turn");
    let server = Server::start(vec![Reply::Stream(calls), Reply::Stream(done)]).await;
    let model =
        AnthropicModel::new("claude-test", ApiKey::new(KEY), &options(&server.url)).unwrap();
    let (outcome, files, store) = run(Arc::new(model)).await;
    assert_eq!(answer(&outcome), Some("both read"), "{outcome:?}");
    assert_eq!(files.calls.load(Ordering::SeqCst), 2);
    let messages = &server.requests()[1].body["messages"];
    assert_eq!(messages.as_array().unwrap().len(), 3, "{messages}");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    assert_eq!(messages[2]["role"], "user");
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["tool_use_id"], "toolu_a");
    assert_eq!(results[1]["content"], "{\"read\":\"b\"}");
    assert_eq!(results[1]["is_error"], false);
    let stored = serde_json::to_string(&store.load("r").await.unwrap().commits).unwrap();
    assert!(!stored.contains(KEY));
}
