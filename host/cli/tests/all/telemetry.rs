//! OpenTelemetry export as an operator turns it on: the standard variables
//! point `cordon` at an OTLP receiver (here one on loopback that decodes
//! with the official protobuf definitions), and a run arrives as one trace
//! of its steps, model requests, calls, hooks, approvals and commits, with
//! the metrics derived from them; a resumed run goes on with its trace; a
//! served call joins its client's; arguments and results leave only when
//! asked; and `OTEL_SDK_DISABLED` sends nothing.

use cordon_test_artifacts as artifacts;
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric, number_data_point};
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::support::mcp::{FIXTURES_MANIFEST, HttpServer};
use crate::support::otlp::{Receiver, attribute, names, span};
use crate::support::{Project, postgres_schema, scripted_run, text};

/// Notes, jq and the hostile fixture, whose endless loop runs out of fuel.
fn project() -> Project {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    project.bundled("jq", artifacts::JQ);
    project.bundle(
        "hostile",
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n\
         [limits]\nfuel = 50000000\ntimeout-ms = 60000\n",
        artifacts::HOSTILE,
    );
    project
}

/// One step: a note (allowed), a jq query (denied by rule `jq.*`) and an
/// endless loop (stopped by its fuel); then the answer.
const SCRIPT: &str = r#"
[[turn]]
text = "Working."
[[turn.call]]
tool = "notes.add"
args = { title = "Milk", body = "buy milk" }
[[turn.call]]
tool = "jq.query"
args = { filter = ".", input = {} }
[[turn.call]]
tool = "hostile.loop"

[[turn]]
text = "Done."
"#;

const AGENT: &str = "name = \"t\"\n[permissions]\ndefault = \"allow\"\ndeny = [\"jq.*\"]\n";

/// `cordon args` exporting to `receiver`, with `env` set too.
fn exported(
    project: &Project,
    receiver: &Receiver,
    env: &[(&str, &str)],
    args: &[&str],
) -> std::process::Output {
    project
        .command(args)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// Assert that `run`, opened by `who`, continues the trace `started` began:
/// in the same trace, its child, and linked to it.
fn continues(run: &Span, started: &Span, who: &str) {
    assert_eq!(
        run.trace_id, started.trace_id,
        "{who} joins the run's trace"
    );
    assert_eq!(
        run.parent_span_id, started.span_id,
        "{who}'s span is its child"
    );
    assert!(
        run.links
            .iter()
            .any(|link| link.span_id == started.span_id && link.trace_id == started.trace_id),
        "{who}'s span links the run's first: {run:?}"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn attr(span: &Span, key: &str) -> Option<String> {
    attribute(&span.attributes, key)
}

/// The metric named `name`, last received.
fn metric<'a>(metrics: &'a [Metric], name: &str) -> &'a Metric {
    metrics
        .iter()
        .rev()
        .find(|metric| metric.name == name)
        .unwrap_or_else(|| {
            let known: Vec<&str> = metrics.iter().map(|metric| metric.name.as_str()).collect();
            panic!("no metric {name:?} among {known:?}")
        })
}

/// The sum of counter `metric`'s points whose attribute `key` is `value`.
fn counted(metric: &Metric, key: &str, value: &str) -> i64 {
    let Some(metric::Data::Sum(sum)) = &metric.data else {
        panic!("{} is not a counter", metric.name);
    };
    sum.data_points
        .iter()
        .filter(|point| attribute(&point.attributes, key).as_deref() == Some(value))
        .map(|point| match point.value {
            Some(number_data_point::Value::AsInt(count)) => count,
            _ => 0,
        })
        .sum()
}

#[test]
fn a_run_is_one_trace_of_its_steps_calls_and_commits_with_metrics_and_no_arguments() {
    let project = project();
    project.write("agent.toml", AGENT);
    project.write("script.toml", SCRIPT);
    let receiver = Receiver::start();
    let output = exported(&project, &receiver, &[], &scripted_run("r1", &[]));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let spans = receiver.spans();

    let run = span(&spans, "invoke_agent t");
    assert!(run.parent_span_id.is_empty(), "the run's span is the root");
    assert_eq!(attr(run, "cordon.run.id").as_deref(), Some("r1"));
    assert!(
        spans.iter().all(|each| each.trace_id == run.trace_id),
        "one trace: {:?}",
        names(&spans)
    );
    let step = span(&spans, "step 1");
    assert_eq!(step.parent_span_id, run.span_id);
    let chat = span(&spans, "chat scripted");
    assert_eq!(chat.parent_span_id, step.span_id);
    assert_eq!(
        attr(chat, "gen_ai.request.model").as_deref(),
        Some("scripted")
    );
    assert!(
        attr(chat, "gen_ai.usage.input_tokens").is_some(),
        "{chat:?}"
    );
    assert_eq!(
        attr(chat, "gen_ai.response.tool_calls").as_deref(),
        Some("3")
    );

    let note = span(&spans, "execute_tool notes.add");
    assert_eq!(note.parent_span_id, step.span_id);
    let digest = hex(&Sha256::digest(std::fs::read(artifacts::NOTES).unwrap()));
    for (key, value) in [
        ("cordon.bundle", "notes"),
        ("cordon.component.digest", digest.as_str()),
        ("cordon.verdict", "allow"),
        ("cordon.outcome", "ok"),
        ("gen_ai.tool.call.id", "call-1-1"),
    ] {
        assert_eq!(attr(note, key).as_deref(), Some(value), "{key} of {note:?}");
    }

    let denied = span(&spans, "execute_tool jq.query");
    assert_eq!(attr(denied, "cordon.verdict").as_deref(), Some("deny"));
    assert_eq!(attr(denied, "cordon.rule").as_deref(), Some("jq.*"));
    assert_eq!(attr(denied, "cordon.outcome").as_deref(), Some("denied"));
    assert!(
        denied.events.iter().any(|event| event.name == "denied"),
        "{denied:?}"
    );

    let looped = span(&spans, "execute_tool hostile.loop");
    assert_eq!(attr(looped, "cordon.outcome").as_deref(), Some("limit"));
    assert_eq!(attr(looped, "cordon.limit").as_deref(), Some("fuel"));
    let limit = looped
        .events
        .iter()
        .find(|event| event.name == "limit-exceeded")
        .unwrap_or_else(|| panic!("no limit-exceeded event: {looped:?}"));
    assert_eq!(
        attribute(&limit.attributes, "cordon.limit").as_deref(),
        Some("fuel")
    );

    let commits: Vec<&Span> = spans.iter().filter(|each| each.name == "commit").collect();
    assert_eq!(commits.len(), 3, "the prompt, step 1 and step 2 commit");
    assert!(
        commits
            .iter()
            .all(|commit| attr(commit, "cordon.durability").as_deref() == Some("disk"))
    );

    // Arguments and results stay home unless the operator asks.
    assert!(
        spans
            .iter()
            .all(|each| attr(each, "gen_ai.tool.call.arguments").is_none())
    );
    assert!(!receiver.ever_sent("buy milk"));

    let metrics = receiver.metrics();
    let calls = metric(&metrics, "cordon.tool.calls");
    assert_eq!(counted(calls, "cordon.verdict", "allow"), 2);
    assert_eq!(counted(calls, "cordon.verdict", "deny"), 1);
    assert_eq!(counted(calls, "cordon.outcome", "limit"), 1);
    assert_eq!(
        counted(
            metric(&metrics, "cordon.denials"),
            "cordon.capability",
            "tool-call"
        ),
        1
    );
    assert_eq!(
        counted(metric(&metrics, "cordon.limits"), "cordon.limit", "fuel"),
        1
    );
    let Some(metric::Data::Histogram(histogram)) = &metric(&metrics, "cordon.commit.duration").data
    else {
        panic!("commit latency is a histogram");
    };
    assert_eq!(
        histogram
            .data_points
            .iter()
            .map(|point| point.count)
            .sum::<u64>(),
        3
    );
    let Some(metric::Data::Gauge(pool)) = &metric(&metrics, "cordon.pool.slots.limit").data else {
        panic!("the pool's size is a gauge");
    };
    assert!(
        pool.data_points.iter().any(
            |point| matches!(point.value, Some(number_data_point::Value::AsInt(size)) if size > 0)
        ),
        "{pool:?}"
    );
}

#[test]
fn a_resumed_run_goes_on_with_its_trace_and_carries_content_only_when_asked() {
    let project = project();
    project.write(
        "agent.toml",
        "name = \"t\"\n[permissions]\ndefault = \"allow\"\nask = [\"notes.add\"]\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\ntext = \"Saving.\"\n[[turn.call]]\ntool = \"notes.add\"\n\
         args = { title = \"Milk\", body = \"buy milk\" }\n\n[[turn]]\ntext = \"Done.\"\n",
    );
    let first = Receiver::start();
    let output = exported(&project, &first, &[], &scripted_run("r1", &[]));
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    let waited = first.spans();
    let started = span(&waited, "invoke_agent t");
    let approval = span(&waited, "approval");
    assert_eq!(
        attr(approval, "cordon.approval.answered").as_deref(),
        Some("false")
    );

    let second = Receiver::start();
    let output = exported(
        &project,
        &second,
        &[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")],
        &["runs", "resume", "r1", "--approve-all"],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let resumed = second.spans();
    let run = span(&resumed, "invoke_agent t");
    continues(run, started, "the resumption");
    // The step the run waited in goes on under its own number.
    let step = span(&resumed, "step 1");
    assert_eq!(step.parent_span_id, run.span_id);
    let note = span(&resumed, "execute_tool notes.add");
    assert_eq!(note.parent_span_id, step.span_id);
    assert_eq!(attr(note, "cordon.verdict").as_deref(), Some("allow"));
    let arguments = attr(note, "gen_ai.tool.call.arguments").unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&arguments).unwrap(),
        json!({"title": "Milk", "body": "buy milk"})
    );
    assert!(attr(note, "gen_ai.tool.call.result").is_some(), "{note:?}");
    assert!(
        !first.ever_sent("buy milk"),
        "the first drive was not asked to"
    );
}

#[test]
fn a_run_a_worker_drives_joins_the_trace_its_submission_began() {
    let Some(url) = postgres_schema("a worker's trace", "traced") else {
        return;
    };
    let project = project();
    project.write(
        "agent.toml",
        "name = \"t\"\n[permissions]\ndefault = \"allow\"\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"notes.add\"\nargs = { title = \"Milk\", body = \"buy milk\" }\n\
         [[turn]]\ntext = \"Done.\"\n",
    );
    let submitter = Receiver::start();
    let submit = scripted_run("r1", &["--detach", "--store", url.as_str()]);
    let output = exported(&project, &submitter, &[], &submit);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let submitted = submitter.spans();
    let started = span(&submitted, "invoke_agent t");

    let driver = Receiver::start();
    let output = exported(
        &project,
        &driver,
        &[],
        &[
            "worker",
            "--store",
            &url,
            "--name",
            "w1",
            "--poll-ms",
            "50",
            "--until-idle",
        ],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let driven = driver.spans();
    let run = span(&driven, "invoke_agent t");
    continues(run, started, "the worker");
    let note = span(&driven, "execute_tool notes.add");
    assert_eq!(note.trace_id, started.trace_id);
}

#[test]
fn content_asked_for_is_what_the_store_keeps_after_the_hooks_redact_it() {
    let project = project();
    project.bundled("redactor", artifacts::REDACTOR);
    project.write(
        "agent.toml",
        "name = \"t\"\n[permissions]\ndefault = \"allow\"\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"hostile.secret\"\nargs = {}\n[[turn]]\ntext = \"Done.\"\n",
    );
    let receiver = Receiver::start();
    let output = exported(
        &project,
        &receiver,
        &[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")],
        &scripted_run("r1", &[]),
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let spans = receiver.spans();
    let call = span(&spans, "execute_tool hostile.secret");
    let result = attr(call, "gen_ai.tool.call.result").unwrap_or_default();
    assert!(result.contains("[REDACTED:aws-access-key]"), "{result}");
    assert!(!receiver.ever_sent("AKIAIOSFODNN7EXAMPLE"));
    let hook = span(&spans, "hook after-tool-call redactor");
    assert_eq!(
        hook.parent_span_id, call.span_id,
        "the hook ran on the call"
    );
    assert_eq!(
        attr(hook, "cordon.hook.bundle").as_deref(),
        Some("redactor")
    );
}

#[test]
fn a_skills_activation_is_an_event_on_the_call_that_activated_it() {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    project.write(
        "skills/tidy/SKILL.md",
        "---\nname: tidy\ndescription: Tidy the notes. Use when asked to tidy.\n---\n# Tidy\nKeep it short.\n",
    );
    project.write(
        "agent.toml",
        "name = \"t\"\nskills = [\"skills\"]\n[permissions]\ndefault = \"allow\"\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\n[[turn.call]]\ntool = \"skill\"\nargs = { name = \"tidy\" }\n[[turn]]\ntext = \"Done.\"\n",
    );
    let receiver = Receiver::start();
    let output = project
        .command(&scripted_run("r1", &[]))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint)
        .env("HOME", project.home())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let spans = receiver.spans();
    let call = span(&spans, "execute_tool skill");
    let activated = call
        .events
        .iter()
        .find(|event| event.name == "skill-activated")
        .unwrap_or_else(|| panic!("no activation event: {call:?}"));
    assert_eq!(
        attribute(&activated.attributes, "cordon.skill").as_deref(),
        Some("tidy")
    );
}

#[test]
fn the_sdk_switch_sends_nothing_and_a_protocol_cordon_cannot_speak_is_refused() {
    let project = project();
    project.write("agent.toml", AGENT);
    project.write("script.toml", "[[turn]]\ntext = \"Done.\"\n");
    let receiver = Receiver::start();
    let run = scripted_run("r1", &[]);
    let output = exported(&project, &receiver, &[("OTEL_SDK_DISABLED", "true")], &run);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(receiver.requests(), 0);

    let output = exported(
        &project,
        &receiver,
        &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
        &run,
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL = \"grpc\"")
            && stderr.contains("http/protobuf"),
        "{stderr}"
    );
    assert_eq!(receiver.requests(), 0);
}

#[test]
fn a_served_call_is_a_span_under_the_trace_its_client_sends() {
    let project = Project::new();
    project.bundle("test", FIXTURES_MANIFEST, artifacts::MCP_FIXTURES);
    project.write(
        "permissions.toml",
        "default = \"deny\"\nallow = [\"test.*\"]\n",
    );
    let receiver = Receiver::start();
    let server = HttpServer::start_with_env(
        &project,
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "50"),
        ],
    );
    let (trace, parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let traceparent = format!("00-{trace}-{parent}-01");
    let answered = server.stateless_with(
        "tools/call",
        json!({"name": "test_echo", "arguments": {"text": "hi"}}),
        json!({}),
        &[("traceparent", traceparent.as_str())],
    );
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    // A stdio client can carry it only in the request's `_meta`.
    let (meta_trace, meta_parent) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let answered = server.stateless(
        "tools/call",
        json!({
            "name": "test_echo",
            "arguments": {"text": "hi"},
            "_meta": {"traceparent": format!("00-{meta_trace}-{meta_parent}-01")},
        }),
        json!({}),
    );
    assert_eq!(answered["result"]["isError"], false, "{answered}");

    let wanted = |spans: &[Span]| {
        spans
            .iter()
            .filter(|each| each.name == "tools/call test_echo")
            .count()
            == 2
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let spans = loop {
        let spans = receiver.spans_once("tools/call test_echo");
        if wanted(&spans) || std::time::Instant::now() > deadline {
            break spans;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    server.kill();
    for (trace, parent) in [(trace, parent), (meta_trace, meta_parent)] {
        let served = spans
            .iter()
            .find(|each| each.name == "tools/call test_echo" && hex(&each.trace_id) == trace)
            .unwrap_or_else(|| panic!("no served span in trace {trace}: {:?}", names(&spans)));
        assert_eq!(hex(&served.parent_span_id), parent);
        let call = spans
            .iter()
            .find(|each| {
                each.name == "execute_tool test.echo" && each.parent_span_id == served.span_id
            })
            .unwrap_or_else(|| panic!("no call under the served span: {:?}", names(&spans)));
        assert_eq!(attr(call, "cordon.bundle").as_deref(), Some("test"));
    }
}
