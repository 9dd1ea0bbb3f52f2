//! The bundled plugins do their jobs through the host, with only their grants.

use std::path::Path;

use cordon_kernel::{StateReader, ToolErrorKind};
use cordon_tests::{Fixture, Loaded, artifacts};
use serde_json::json;

async fn with_plugin(name: &str, component: &str) -> (Fixture, Loaded) {
    let fixture = Fixture::new();
    fixture.bundled_plugin(name, Path::new(component));
    let root = fixture.workspace.path();
    std::fs::create_dir_all(root.join("src/nested")).unwrap();
    std::fs::write(root.join("README.md"), "# Demo\nCordon runs tools.\n").unwrap();
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    )
    .unwrap();
    std::fs::write(root.join("src/nested/lib.rs"), "pub fn hello() {}\n").unwrap();
    std::fs::write(root.join("blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    let loaded = fixture.load().await;
    (fixture, loaded)
}

#[tokio::test]
async fn jq_filters_and_reports_bad_filters() {
    let (_fixture, loaded) = with_plugin("jq", artifacts::JQ).await;
    let output = loaded
        .call(
            "jq.query",
            json!({
                "filter": "[.items[] | select(.price > 10) | .name]",
                "input": {"items": [{"name": "a", "price": 5}, {"name": "b", "price": 20}]}
            }),
        )
        .await
        .unwrap();
    assert_eq!(output.content, json!([["b"]]));
    let output = loaded
        .call(
            "jq.query",
            json!({"filter": ".[] | . * 2", "input": [1, 2, 3]}),
        )
        .await
        .unwrap();
    assert_eq!(output.content, json!([2, 4, 6]));
    let error = loaded
        .call("jq.query", json!({"filter": ".[", "input": 1}))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::InvalidInput, "{error}");
}

#[tokio::test]
async fn files_reads_lists_and_searches_the_granted_workspace() {
    let (_fixture, loaded) = with_plugin("files", artifacts::FILES).await;
    let read = loaded
        .call(
            "files.read",
            json!({"path": "src/main.rs", "offset": 2, "limit": 1}),
        )
        .await
        .unwrap();
    assert_eq!(read.content["text"], "    println!(\"hello\");\n");
    assert_eq!(read.content["total_lines"], 3);

    let listed = loaded
        .call("files.list", json!({"pattern": "**/*.rs"}))
        .await
        .unwrap();
    let paths: Vec<&str> = listed.content["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/main.rs", "src/nested/lib.rs"]);

    let found = loaded
        .call("files.search", json!({"pattern": "hel+o", "glob": "*.rs"}))
        .await
        .unwrap();
    let matches = found.content["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2, "{found:?}");
    assert_eq!(matches[0]["path"], "src/main.rs");
    assert_eq!(matches[0]["line"], 2);
}

#[tokio::test]
async fn files_refuses_paths_that_leave_the_workspace() {
    let (_fixture, loaded) = with_plugin("files", artifacts::FILES).await;
    for path in ["../etc/passwd", "/etc/passwd"] {
        let error = loaded
            .call("files.read", json!({ "path": path }))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::InvalidInput, "{path}: {error}");
    }
    let error = loaded
        .call("files.read", json!({"path": "blob.bin"}))
        .await
        .unwrap_err();
    assert!(
        error.message.contains("UTF-8") || error.message.contains("binary"),
        "{error}"
    );
}

#[tokio::test]
async fn notes_are_kept_in_committed_state() {
    let (_fixture, loaded) = with_plugin("notes", artifacts::NOTES).await;
    let first = loaded
        .call(
            "notes.add",
            json!({"title": "Deploy", "body": "Run the migration first", "tags": ["ops"]}),
        )
        .await
        .unwrap();
    loaded
        .call("notes.add", json!({"title": "Lunch", "body": "Noodles"}))
        .await
        .unwrap();
    let stored = loaded.state.get("notes").unwrap().expect("notes committed");
    assert_eq!(stored.as_array().map(Vec::len), Some(2));

    let tagged = loaded
        .call("notes.list", json!({"tag": "OPS"}))
        .await
        .unwrap();
    assert_eq!(tagged.content["count"], 1);
    let found = loaded
        .call("notes.search", json!({"query": "migration"}))
        .await
        .unwrap();
    assert_eq!(found.content["notes"][0]["title"], "Deploy");

    loaded
        .call("notes.delete", json!({"id": first.content["id"]}))
        .await
        .unwrap();
    let all = loaded.call("notes.list", json!({})).await.unwrap();
    assert_eq!(all.content["count"], 1);
    assert_eq!(all.content["notes"][0]["title"], "Lunch");
}

#[tokio::test]
async fn a_rejected_note_commits_nothing() {
    let (_fixture, loaded) = with_plugin("notes", artifacts::NOTES).await;
    let error = loaded
        .call("notes.add", json!({"title": "  ", "body": "x"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::InvalidInput);
    assert!(loaded.state.snapshot().is_empty());
}
