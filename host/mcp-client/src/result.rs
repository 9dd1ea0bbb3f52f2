//! A server's tool result as the run sees it. Structured content is the
//! value the model observes; without it, the text blocks joined are. Images,
//! audio and embedded resources travel as content blocks beside the value.
//! A result marked `isError` is a `failed` tool error carrying the server's
//! text, and a result larger than the server's output limit is a `limit`
//! error: nothing of it reaches the model.

use cordon_kernel::{
    ContentBlock, ResourceBody, ToolCallOutcome, ToolError, ToolErrorKind, ToolOutput,
};
use rmcp::model::{CallToolResult, ContentBlock as Wire, ResourceContents};
use serde_json::Value;

/// The longest error text a model sees from a server.
const ERROR_TEXT_BYTES: usize = 4096;

/// The outcome of `result`, returned by server `server` under its output
/// limit of `limit` bytes.
pub(crate) fn outcome(server: &str, result: CallToolResult, limit: usize) -> ToolCallOutcome {
    let mut texts = Vec::new();
    let mut blocks = Vec::new();
    for block in result.content {
        match block {
            Wire::Text(text) => texts.push(text.text),
            Wire::Image(image) => blocks.push(ContentBlock::Image {
                mime_type: image.mime_type,
                data: image.data,
            }),
            Wire::Audio(audio) => blocks.push(ContentBlock::Audio {
                mime_type: audio.mime_type,
                data: audio.data,
            }),
            Wire::Resource(embedded) => match embedded.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => blocks.push(ContentBlock::Resource {
                    uri,
                    mime_type,
                    body: ResourceBody::Text(text),
                }),
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => blocks.push(ContentBlock::Resource {
                    uri,
                    mime_type,
                    body: ResourceBody::Blob(blob),
                }),
                _ => {}
            },
            Wire::ResourceLink(link) => {
                texts.push(format!("resource {} ({})", link.uri, link.name))
            }
            _ => {}
        }
    }
    let text = texts.join("\n");
    if result.is_error == Some(true) {
        let said = if text.is_empty() {
            "the tool reported an error".to_owned()
        } else {
            clip(&text, ERROR_TEXT_BYTES)
        };
        return ToolCallOutcome::error(ToolError::new(
            ToolErrorKind::Failed,
            format!("MCP server `{server}`: {said}"),
        ));
    }
    let content = match result.structured_content {
        Some(value) => value,
        None if !texts.is_empty() => Value::String(text),
        None => Value::String(describe(&blocks)),
    };
    let size = serde_json::to_vec(&content).map_or(usize::MAX, |bytes| bytes.len())
        + blocks.iter().map(ContentBlock::size).sum::<usize>();
    if size > limit {
        return ToolCallOutcome::error(ToolError::new(
            ToolErrorKind::Limit,
            format!(
                "MCP server `{server}` returned {size} bytes, more than its limit of {limit}; the operator raises `max-output-kib` under its `[mcp.{server}]`"
            ),
        ));
    }
    ToolCallOutcome {
        result: Ok(ToolOutput { content, blocks }),
        ..ToolCallOutcome::output(Value::Null)
    }
}

/// What a result of `blocks` alone holds, for the model.
fn describe(blocks: &[ContentBlock]) -> String {
    let kinds: Vec<&str> = blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text { .. } => "text",
            ContentBlock::Image { .. } => "image",
            ContentBlock::Audio { .. } => "audio",
            ContentBlock::Resource { .. } => "resource",
        })
        .collect();
    if kinds.is_empty() {
        "(no content)".to_owned()
    } else {
        format!("({} content)", kinds.join(", "))
    }
}

/// `text` cut to at most `bytes`, on a character boundary.
fn clip(text: &str, bytes: usize) -> String {
    if text.len() <= bytes {
        return text.to_owned();
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock as W;
    use serde_json::json;

    fn result(content: Vec<W>, structured: Option<Value>, error: bool) -> CallToolResult {
        let mut result = if error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = structured;
        result
    }

    #[test]
    fn structured_content_is_the_value_and_media_travel_as_blocks() {
        let outcome = outcome(
            "s",
            result(
                vec![W::text("{\"n\":1}"), W::image("AAAA", "image/png")],
                Some(json!({"n": 1})),
                false,
            ),
            1 << 20,
        );
        let output = outcome.result.unwrap();
        assert_eq!(output.content, json!({"n": 1}));
        assert_eq!(
            output.blocks,
            vec![ContentBlock::Image {
                mime_type: "image/png".into(),
                data: "AAAA".into()
            }]
        );
    }

    #[test]
    fn text_blocks_join_into_the_value_without_structured_content() {
        let outcome = outcome(
            "s",
            result(vec![W::text("a"), W::text("b")], None, false),
            100,
        );
        assert_eq!(outcome.result.unwrap().content, json!("a\nb"));
    }

    #[test]
    fn an_error_result_is_a_failed_tool_error_naming_the_server() {
        let outcome = outcome(
            "docs",
            result(vec![W::text("no such page")], None, true),
            100,
        );
        let error = outcome.result.unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::Failed);
        assert_eq!(error.message, "MCP server `docs`: no such page");
    }

    #[test]
    fn a_result_over_the_limit_reaches_no_one() {
        let big = "x".repeat(200);
        let text = outcome("docs", result(vec![W::text(big)], None, false), 100);
        assert_eq!(text.result.unwrap_err().kind, ToolErrorKind::Limit);
        let image = outcome(
            "docs",
            result(vec![W::image("A".repeat(200), "image/png")], None, false),
            100,
        );
        assert_eq!(image.result.unwrap_err().kind, ToolErrorKind::Limit);
    }
}
