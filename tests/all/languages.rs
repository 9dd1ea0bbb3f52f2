//! Tools written in other languages, built from source by `cordon build`
//! (the test command builds them): each example does its real work through
//! the host; each hostile fixture is refused the same typed, audited way as
//! the Rust one while the host keeps serving; big guests fit the instance
//! pool and load from the cache without compiling again.

use cordon_kernel::{
    Capability, Event, LimitKind, StateReader, ToolErrorKind, ToolSet, call_committed,
};
use cordon_tests::artifacts::{EXAMPLE_TOOLS_DIR, LANGUAGE_GUESTS_DIR};
use cordon_tests::{Fixture, Loaded, built_bundle, load_bundles, manifest};
use cordon_wasm::{CacheOutcome, HostConfig, PluginHost, Safeguards};
use serde_json::{Value, json};

const TABLE: &str = "city,population\nLyon,522\nNice,342\nLyon,522\nBrest,\nNantes,320\n";

async fn example(folder: &str) -> (Loaded, tempfile::TempDir) {
    let workspace = tempfile::tempdir().expect("workspace");
    let loaded = load_bundles(
        &[built_bundle(EXAMPLE_TOOLS_DIR, folder)],
        workspace.path(),
        Safeguards::default(),
    )
    .await;
    (loaded, workspace)
}

async fn refused(loaded: &Loaded, tool: &str, args: Value) -> (ToolErrorKind, String) {
    let error = loaded
        .call(tool, args)
        .await
        .expect_err("the hostile call must fail");
    (error.kind, error.message)
}

fn denials(loaded: &Loaded, capability: Capability) -> Vec<String> {
    loaded
        .events
        .denials()
        .into_iter()
        .filter(|denial| denial.capability == capability)
        .map(|denial| denial.target)
        .collect()
}

fn limits(loaded: &Loaded) -> Vec<LimitKind> {
    loaded
        .events
        .snapshot()
        .into_iter()
        .filter_map(|event| match event {
            Event::LimitExceeded { limit, .. } => Some(limit),
            _ => None,
        })
        .collect()
}

// ---- The examples --------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn the_python_example_summarises_a_csv_column() {
    let (csv, _workspace) = example("csv").await;
    let summary = csv
        .call(
            "csv.summary",
            json!({"text": TABLE, "column": "population"}),
        )
        .await
        .expect("summary")
        .content;
    assert_eq!(summary["rows"], 5);
    assert_eq!(summary["empty"], 1);
    assert_eq!(summary["distinct"], 3);
    assert_eq!(summary["numeric"], true);
    assert_eq!(summary["min"], 320.0);
    assert_eq!(summary["max"], 522.0);
    assert_eq!(summary["median"], 432.0);
    assert_eq!(summary["top"][0], json!(["522", 2]));
    assert_eq!(csv.state.get("csv.summaries").unwrap(), Some(json!(1)));

    let columns = csv
        .call("csv.columns", json!({"text": TABLE}))
        .await
        .expect("columns");
    assert_eq!(columns.content, json!(["city", "population"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_examples_errors_are_typed_and_name_the_problem() {
    let (csv, _workspace) = example("csv").await;
    let (kind, message) = refused(
        &csv,
        "csv.summary",
        json!({"text": TABLE, "column": "area"}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::InvalidInput, "{message}");
    assert!(
        message.contains("'area'") && message.contains("city, population"),
        "{message}"
    );
    let (kind, message) = refused(
        &csv,
        "csv.summary",
        json!({"text": TABLE, "column": "city", "top": 99}),
    )
    .await;
    assert_eq!(
        kind,
        ToolErrorKind::InvalidInput,
        "the schema's maximum holds: {message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_examples_schema_comes_from_its_type_hints() {
    let (csv, _workspace) = example("csv").await;
    let spec = csv
        .plugins
        .specs()
        .into_iter()
        .find(|spec| spec.name == "csv.summary")
        .expect("csv.summary listed");
    let schema = &spec.input_schema;
    assert_eq!(schema["required"], json!(["text", "column"]));
    assert_eq!(schema["properties"]["top"]["maximum"], 50);
    assert_eq!(schema["properties"]["delimiter"]["default"], ",");
    assert!(
        schema["properties"]["column"]["description"]
            .as_str()
            .is_some_and(|text| text.contains("header of the column")),
        "{schema}"
    );
    let output = spec
        .output_schema
        .expect("an output schema from the return type");
    assert_eq!(
        output["properties"]["median"]["anyOf"][1],
        json!({"type": "null"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_javascript_example_turns_markdown_into_plain_text_on_starlingmonkey() {
    markdown_example("markdown").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_javascript_source_works_on_quickjs() {
    markdown_example("markdown/quickjs").await;
}

async fn markdown_example(folder: &str) {
    let (markdown, _workspace) = example(folder).await;
    let document = "# Title\n\nSome **bold** and _em_ text, [a link](https://example.org) and `code`.\n\n- one\n- [x] two\n\n```sh\n# not a heading\necho hi\n```\n\n## Next\n> quoted\n";
    let plain = markdown
        .call(
            "markdown.plain",
            json!({"markdown": document, "keepLinks": true}),
        )
        .await
        .expect("plain")
        .content;
    assert_eq!(
        plain["text"],
        "Title\n\nSome bold and em text, a link (https://example.org) and code.\n\n- one\n- two\n\n# not a heading\necho hi\n\nNext\nquoted"
    );
    assert_eq!(plain["headings"], json!(["Title", "Next"]));
    assert_eq!(plain["words"], 20);
    let outline = markdown
        .call(
            "markdown.outline",
            json!({"markdown": document, "maxLevel": 1}),
        )
        .await
        .expect("outline");
    assert_eq!(outline.content, json!([{"level": 1, "title": "Title"}]));
    let (kind, message) = refused(
        &markdown,
        "markdown.outline",
        json!({"markdown": document, "maxLevel": 9}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::InvalidInput, "{message}");
    assert!(message.contains("maxLevel must be 1 to 6"), "{message}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_c_example_counts_like_wc() {
    let (wc, _workspace) = example("wc").await;
    let counted = wc
        .call(
            "wc.count",
            json!({"text": "héllo wörld\nsecond line here\n\nlast"}),
        )
        .await
        .expect("count")
        .content;
    assert_eq!(
        counted,
        json!({"lines": 3, "words": 6, "characters": 34, "bytes": 36, "longest_line": 16})
    );
    let spec = wc.plugins.specs().pop().expect("one tool");
    assert!(spec.output_schema.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_component_exporting_more_than_its_world_loads_and_serves_its_tools() {
    let bundle = built_bundle(EXAMPLE_TOOLS_DIR, "csv");
    let exports = top_level_exports(&std::fs::read(bundle.join("csv.wasm")).unwrap());
    assert!(
        exports
            .iter()
            .any(|name| name == "cordon:plugin/tool@0.1.0")
            && exports
                .iter()
                .any(|name| !name.starts_with("cordon:plugin/")),
        "componentize-py adds an export of its own beside the tool interface: {exports:?}"
    );
    let (csv, _workspace) = example("csv").await;
    let mut names: Vec<String> = csv
        .plugins
        .specs()
        .into_iter()
        .map(|spec| spec.name)
        .collect();
    names.sort();
    assert_eq!(names, ["csv.columns", "csv.summary"]);
}

/// The names a component exports at its top level.
fn top_level_exports(bytes: &[u8]) -> Vec<String> {
    let mut depth = 0usize;
    let mut names = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        match payload.expect("a valid component") {
            wasmparser::Payload::Version { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth -= 1,
            wasmparser::Payload::ComponentExportSection(reader) if depth == 1 => {
                names.extend(
                    reader
                        .into_iter()
                        .map(|export| export.unwrap().name.name.to_owned()),
                );
            }
            _ => {}
        }
    }
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn the_go_example_takes_urls_apart_and_resolves_links() {
    let (urls, _workspace) = example("urls").await;
    let parts = urls
        .call(
            "urls.parse",
            json!({"url": "https://ada@example.org:8443/a/b?x=1&x=2&y=z#top"}),
        )
        .await
        .expect("parse")
        .content;
    assert_eq!(
        parts,
        json!({
            "scheme": "https", "user": "ada", "host": "example.org", "port": "8443",
            "path": "/a/b", "query": {"x": ["1", "2"], "y": ["z"]}, "keys": ["x", "y"],
            "fragment": "top"
        })
    );
    let resolved = urls
        .call(
            "urls.resolve",
            json!({"base": "https://example.org/docs/a/", "links": ["../b", "/c?d=1", "https://other.org/"]}),
        )
        .await
        .expect("resolve");
    assert_eq!(
        resolved.content,
        json!([
            "https://example.org/docs/b",
            "https://example.org/c?d=1",
            "https://other.org/"
        ])
    );
    let (kind, message) = refused(
        &urls,
        "urls.resolve",
        json!({"base": "relative/x", "links": []}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::InvalidInput, "{message}");
    assert!(
        message.contains("base must be an absolute URL"),
        "{message}"
    );
}

// ---- The instance pool and the cache -------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_python_instance_fits_one_slot_of_the_pool() {
    let (csv, _workspace) = example("csv").await;
    let footprint = csv.plugins.bundles()[0].footprint;
    assert!(footprint.core_instances > 8, "{footprint}");
    assert_eq!(footprint.slots(), 1, "{footprint}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sixty_four_python_calls_at_once_all_succeed_on_the_default_pool() {
    let (csv, _workspace) = example("csv").await;
    let calls: Vec<_> = (0..64)
        .map(|_| {
            let plugins = csv.plugins.clone();
            let state = csv.state.clone();
            tokio::spawn(async move {
                call_committed(&plugins, state, "csv.columns", json!({"text": TABLE})).await
            })
        })
        .collect();
    for call in calls {
        let output = call.await.expect("join").expect("every call succeeds");
        assert_eq!(output.content, json!(["city", "population"]));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cached_python_component_loads_without_compiling_again() {
    let cache = tempfile::tempdir().expect("cache");
    let workspace = tempfile::tempdir().expect("workspace");
    let bundle = built_bundle(EXAMPLE_TOOLS_DIR, "csv");
    let load = || async {
        let host = PluginHost::new(HostConfig {
            cache: Some(cordon_tests::cache_in(cache.path())),
            ..HostConfig::default()
        })
        .expect("host");
        host.load_bundle(&bundle, workspace.path())
            .await
            .expect("load")
    };
    let first = load().await;
    let second = load().await;
    assert_eq!(first.cache, CacheOutcome::Compiled);
    assert_eq!(second.cache, CacheOutcome::Hit);
    assert!(
        second.load_time * 5 < first.load_time,
        "cached {:?} vs compiled {:?}",
        second.load_time,
        first.load_time
    );
}

// ---- Hostile Python ------------------------------------------------------

const DATA_RO: &str = "[[grants.dirs]]\nhost = \"inner\"\nguest = \"/data\"\nmode = \"ro\"\n";
const GRANTS: &str = "[grants]\ntools = [\"hostile-py.echo\"]\n[grants.state]\nread = [\"mine\"]\nwrite = [\"mine\"]\n[limits]\nmemory-mib = 96\ntimeout-ms = 3000\nfuel = 2000000000\nlog-kib = 16\n";

/// The hostile fixture `folder` (its built component, as its manifest names
/// it) under bundle name `name`, with `extra` manifest TOML, over a workspace
/// holding `inner/ok.txt` and a `secret.txt` beside it.
async fn hostile(folder: &str, name: &str, extra: &str) -> (Fixture, Loaded) {
    let fixture = Fixture::new();
    let root = fixture.workspace.path();
    std::fs::create_dir_all(root.join("inner")).unwrap();
    std::fs::write(root.join("inner/ok.txt"), "granted content").unwrap();
    std::fs::write(root.join("secret.txt"), "top secret").unwrap();
    let dir = built_bundle(LANGUAGE_GUESTS_DIR, folder);
    fixture.bundle(
        name,
        &manifest(name, extra),
        &dir.join(format!("{name}.wasm")),
    );
    let loaded = fixture.load().await;
    (fixture, loaded)
}

async fn still_serves(loaded: &Loaded, tool: &str) {
    let output = loaded
        .call(tool, json!({"text": "alive"}))
        .await
        .expect("a benign call after a refused one");
    assert_eq!(output.content, json!("alive"));
}

#[tokio::test(flavor = "multi_thread")]
async fn python_reads_only_inside_its_grant_and_escapes_are_audited() {
    let (fixture, py) = hostile("hostile-py", "hostile-py", &format!("{DATA_RO}{GRANTS}")).await;
    let output = py
        .call("hostile-py.read-file", json!({"path": "/data/ok.txt"}))
        .await
        .expect("the granted file is readable");
    assert_eq!(output.content, json!("granted content"));
    for path in ["/data/../secret.txt", "/secret.txt", "/etc/passwd"] {
        let (kind, message) = refused(&py, "hostile-py.read-file", json!({ "path": path })).await;
        assert_eq!(kind, ToolErrorKind::Failed, "{path}");
        assert!(
            !message.contains("top secret") && !message.contains("root:"),
            "{message}"
        );
    }
    let (kind, _) = refused(
        &py,
        "hostile-py.write-file",
        json!({"path": "/data/ok.txt", "content": "changed"}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Failed);
    assert_eq!(
        std::fs::read_to_string(fixture.workspace.path().join("inner/ok.txt")).unwrap(),
        "granted content"
    );
    let targets = denials(&py, Capability::Filesystem);
    assert!(targets.contains(&"../secret.txt".to_owned()), "{targets:?}");
    assert!(targets.contains(&"ok.txt".to_owned()), "{targets:?}");
    still_serves(&py, "hostile-py.echo").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sees_no_environment_and_opens_no_socket() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // SAFETY: a test-only variable no other test reads or writes.
    unsafe { std::env::set_var("CORDON_TEST_PY_SECRET", "hunter2") };
    let (_fixture, py) = hostile("hostile-py", "hostile-py", GRANTS).await;
    let output = py
        .call("hostile-py.env", json!({"name": "CORDON_TEST_PY_SECRET"}))
        .await
        .expect("env");
    assert_eq!(output.content, json!({"value": null, "all": []}));
    let (kind, _) = refused(
        &py,
        "hostile-py.connect",
        json!({"host": "127.0.0.1", "port": port}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Failed);
    assert_eq!(
        denials(&py, Capability::Network),
        [format!("127.0.0.1:{port}")]
    );
    assert_eq!(
        listener.accept().map_err(|error| error.kind()).err(),
        Some(std::io::ErrorKind::WouldBlock),
        "no connection may reach the listener"
    );
    still_serves(&py, "hostile-py.echo").await;
}

/// The state and tool-call refusals every language gets: typed `denied`,
/// audited, nothing committed; the declared key and tool work.
async fn undeclared_state_and_tools_are_refused(loaded: &Loaded, bundle: &str) {
    let tool = |name: &str| format!("{bundle}.{name}");
    let (kind, _) = refused(
        loaded,
        &tool("state-write"),
        json!({"key": "other", "value": 1}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Denied);
    assert_eq!(denials(loaded, Capability::StateWrite), ["other"]);
    assert!(loaded.state.get("other").unwrap().is_none());
    loaded
        .call(&tool("state-write"), json!({"key": "mine", "value": 7}))
        .await
        .expect("a declared key is writable");
    assert_eq!(loaded.state.get("mine").unwrap(), Some(json!(7)));

    let (kind, _) = refused(
        loaded,
        &tool("call-tool"),
        json!({"name": tool("loop"), "args": {}}),
    )
    .await;
    assert_eq!(kind, ToolErrorKind::Denied);
    assert_eq!(denials(loaded, Capability::ToolCall), [tool("loop")]);
    let output = loaded
        .call(
            &tool("call-tool"),
            json!({"name": tool("echo"), "args": {"text": "via the host"}}),
        )
        .await
        .expect("the declared tool is callable");
    assert_eq!(output.content, json!("via the host"));
}

/// The limits every language gets: a loop and an allocation without end
/// each stop as a typed, audited `limit`, and so does a print without end
/// where the runtime can print (QuickJS has no `console`).
async fn runaway_calls_stop_at_their_limits(loaded: &Loaded, bundle: &str, prints: bool) {
    let tool = |name: &str| format!("{bundle}.{name}");
    if !prints {
        let (kind, message) = refused(loaded, &tool("print"), json!({})).await;
        assert_eq!(kind, ToolErrorKind::Failed, "{message}");
        assert!(message.contains("console is not defined"), "{message}");
    }
    let printing = prints.then_some(("print", &[LimitKind::Log][..]));
    for (name, expected) in [
        ("loop", &[LimitKind::Fuel, LimitKind::Timeout][..]),
        ("alloc", &[LimitKind::Memory][..]),
    ]
    .into_iter()
    .chain(printing)
    {
        let before = limits(loaded).len();
        let (kind, message) = refused(loaded, &tool(name), json!({})).await;
        assert_eq!(kind, ToolErrorKind::Limit, "{name}: {message}");
        let hit = limits(loaded);
        assert_eq!(hit.len(), before + 1, "{name}: {hit:?}");
        assert!(expected.contains(&hit[before]), "{name}: {hit:?}");
        still_serves(loaded, &tool("echo")).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn python_gets_no_undeclared_state_or_tool() {
    let (_fixture, py) = hostile("hostile-py", "hostile-py", GRANTS).await;
    undeclared_state_and_tools_are_refused(&py, "hostile-py").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_that_loops_allocates_or_prints_without_end_stops_at_its_limits() {
    let (_fixture, py) = hostile("hostile-py", "hostile-py", GRANTS).await;
    runaway_calls_stop_at_their_limits(&py, "hostile-py", true).await;
}

// ---- Hostile JavaScript --------------------------------------------------

fn js_grants() -> String {
    GRANTS.replace("hostile-py", "hostile-js")
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_gets_no_undeclared_state_or_tool() {
    let (_fixture, js) = hostile("hostile-js", "hostile-js", &js_grants()).await;
    undeclared_state_and_tools_are_refused(&js, "hostile-js").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_that_loops_allocates_or_prints_without_end_stops_at_its_limits() {
    let (_fixture, js) = hostile("hostile-js", "hostile-js", &js_grants()).await;
    runaway_calls_stop_at_their_limits(&js, "hostile-js", true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_on_quickjs_gets_no_undeclared_state_or_tool() {
    let (_fixture, js) = hostile("hostile-js/quickjs", "hostile-js", &js_grants()).await;
    undeclared_state_and_tools_are_refused(&js, "hostile-js").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_on_quickjs_that_loops_or_allocates_without_end_stops_at_its_limits() {
    let (_fixture, js) = hostile("hostile-js/quickjs", "hostile-js", &js_grants()).await;
    runaway_calls_stop_at_their_limits(&js, "hostile-js", false).await;
}
