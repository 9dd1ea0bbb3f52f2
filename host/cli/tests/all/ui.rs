//! `cordon ui` over HTTP, as its page and as another site's page reach it:
//! the page and the store's runs for the holder of the launch's token, a
//! decision that resumes the run as `runs resume` does, and every request
//! from elsewhere (another Host, another Origin, no token, a plain form)
//! refused without touching the run.

use cordon_test_artifacts as artifacts;
use serde_json::Value;

use crate::support::ui::Inspector;
use crate::support::{Project, text};

/// A project whose run `r1` waits for a person to approve `notes.add`.
fn waiting() -> Project {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    project.write(
        "agent.toml",
        "name = \"t\"\n[permissions]\ndefault = \"allow\"\nask = [\"notes.add\"]\n",
    );
    project.write(
        "script.toml",
        "[[turn]]\ntext = \"Saving.\"\n[[turn.call]]\ntool = \"notes.add\"\n\
         args = { title = \"Milk\", body = \"buy milk\" }\n[[turn.call]]\ntool = \"notes.list\"\n\
         \n[[turn]]\ntext = \"Done.\"\n",
    );
    let output = project.run_scripted("r1", &[]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    project
}

fn disposition(project: &Project) -> String {
    project.show("r1")["disposition"]["disposition"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn the_token_holder_sees_the_runs_and_a_decision_resumes_the_run_as_runs_resume_does() {
    let project = waiting();
    let inspector = Inspector::start(&project);

    let (status, page) = inspector.send("GET", "/", &[], "");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<script src=\"/app.js\""), "{page}");
    assert!(
        page.to_ascii_lowercase()
            .contains("content-security-policy: default-src 'none'; script-src 'self'"),
        "{page}"
    );

    let listed = inspector.get("/api/runs");
    assert_eq!(listed["runs"][0]["header"]["run_id"], "r1", "{listed}");
    assert_eq!(listed["runs"][0]["disposition"]["disposition"], "waiting");
    let run = inspector.get("/api/run?id=r1");
    assert_eq!(run["steps"], serde_json::json!([0, 1]), "{run}");
    assert_eq!(run["pending"][0]["call"]["id"], "call-1-1", "{run}");
    assert_eq!(
        run["pending"][0]["why"], "permission rule `notes.add` asks",
        "{run}"
    );
    // The allowed call beside it ran, and says when.
    let listed_call = &run["commits"][1]["tools"][1];
    assert_eq!(listed_call["call"]["name"], "notes.list", "{run}");
    assert!(
        listed_call["timing"]["started_ms"].as_u64().unwrap() > 0,
        "{run}"
    );

    let bearer = format!("Bearer {}", inspector.token);
    let own = format!("http://{}", inspector.address);
    let decision = r#"{"run": "r1", "decisions": {"call-1-1": "approve"}}"#;
    let json = ("Content-Type", "application/json");
    let decided = inspector.send(
        "POST",
        "/api/decide",
        &[("Authorization", &bearer), ("Origin", &own), json],
        decision,
    );
    assert_eq!(decided.0, 200, "{}", decided.1);
    let answer: Value = serde_json::from_str(decided.1.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(
        answer["output"]
            .as_str()
            .unwrap()
            .contains("run r1 ended (final answer)"),
        "{answer}"
    );
    let shown = project.show("r1");
    assert_eq!(shown["disposition"]["disposition"], "ended", "{shown}");
    assert_eq!(shown["state"]["notes"][0]["title"], "Milk", "{shown}");
    assert_eq!(
        shown["commits"][2]["tools"][0]["decision"]["answered"], "approve",
        "{shown}"
    );
}

/// A request from elsewhere: what it is, its headers, the status it gets.
type Refused<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);

#[test]
fn another_host_another_origin_no_token_or_a_plain_form_is_refused_and_the_run_still_waits() {
    let project = waiting();
    let inspector = Inspector::start(&project);
    let bearer = format!("Bearer {}", inspector.token);
    let own = format!("http://{}", inspector.address);
    let decision = r#"{"run": "r1", "decisions": {"call-1-1": "approve"}}"#;
    let json = ("Content-Type", "application/json");
    let rebound = format!(
        "attacker.example:{}",
        inspector.address.split(':').nth(1).unwrap()
    );
    let refused: [Refused; 6] = [
        ("no token", vec![("Origin", &own), json], 401),
        (
            "another token",
            vec![("Authorization", "Bearer 0123"), ("Origin", &own), json],
            401,
        ),
        (
            "another site's page",
            vec![
                ("Authorization", &bearer),
                ("Origin", "http://attacker.example"),
                json,
            ],
            403,
        ),
        (
            "an opaque origin",
            vec![("Authorization", &bearer), ("Origin", "null"), json],
            403,
        ),
        (
            "DNS rebinding",
            vec![("Authorization", &bearer), ("Host", &rebound), json],
            403,
        ),
        (
            "a plain form",
            vec![
                ("Authorization", &bearer),
                ("Origin", &own),
                ("Content-Type", "text/plain"),
            ],
            415,
        ),
    ];
    for (what, headers, status) in refused {
        let (got, response) = inspector.send("POST", "/api/decide", &headers, decision);
        assert_eq!(got, status, "{what}: {response}");
        assert_eq!(disposition(&project), "waiting", "{what} changed the run");
    }
    // A body past the inspector's bound is not read, with the token or not.
    let bearer_json = [
        ("Authorization", bearer.as_str()),
        ("Origin", own.as_str()),
        json,
    ];
    let padded = format!(
        r#"{{"run": "r1", "decisions": {{"call-1-1": "approve"}}, "reason": "{}"}}"#,
        "x".repeat(100 * 1024)
    );
    let (status, response) = inspector.send("POST", "/api/decide", &bearer_json, &padded);
    assert_eq!(status, 400, "{response}");
    assert!(response.contains("could not be read"), "{response}");
    assert_eq!(
        disposition(&project),
        "waiting",
        "an oversized body changed the run"
    );
    // Reads need the token too: the store holds every call's arguments.
    let (status, response) = inspector.send("GET", "/api/run?id=r1", &[], "");
    assert_eq!(status, 401, "{response}");
    assert!(!response.contains("buy milk"), "{response}");
    let (status, _) = inspector.send("GET", "/", &[("Host", &rebound)], "");
    assert_eq!(status, 403);
}

#[test]
fn the_inspector_answers_on_loopback_only() {
    let project = waiting();
    let output = project.cordon(&["ui", "--listen", "0.0.0.0:0"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("--listen 0.0.0.0:0") && stderr.contains("loopback only"),
        "{stderr}"
    );
}

/// What the browser test does in Chromium: wait for text, keep
/// screenshots, and play another site's page.
mod browser {
    use std::net::TcpListener;
    use std::time::{Duration, Instant};

    use fantoccini::{Client, Locator};

    pub(super) use crate::support::browser::Driver;

    /// The text of the element `css` matches, once it has some matching
    /// `wanted`, waiting up to 30 s.
    pub(super) async fn text_once(
        browser: &Client,
        css: &str,
        wanted: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(element) = browser.find(Locator::Css(css)).await
                && let Ok(text) = element.text().await
                && wanted(&text)
            {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "{css} never showed what was wanted"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Click the element `css` matches, once there is one.
    pub(super) async fn click(browser: &Client, css: &str) {
        browser
            .wait()
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|error| panic!("no {css}: {error}"))
            .click()
            .await
            .unwrap();
    }

    /// The timeline's bar of call `call`, and its class.
    pub(super) async fn bar(
        browser: &Client,
        call: &str,
    ) -> (fantoccini::elements::Element, String) {
        let bar = browser
            .find(Locator::Css(&format!(".bar[data-call=\"{call}\"]")))
            .await
            .unwrap_or_else(|error| panic!("no bar for {call}: {error}"));
        let class = bar.attr("class").await.unwrap().unwrap_or_default();
        (bar, class)
    }

    /// Keep a screenshot of the page as `name` in the folder
    /// `CORDON_UI_SCREENSHOTS` names (the documentation's are made so);
    /// always check it is a PNG.
    pub(super) async fn screenshot(browser: &Client, name: &str) {
        let png = browser.screenshot().await.unwrap();
        assert!(
            png.starts_with(b"\x89PNG\r\n\x1a\n"),
            "a screenshot is a PNG"
        );
        if let Some(folder) = std::env::var_os("CORDON_UI_SCREENSHOTS") {
            std::fs::write(std::path::Path::new(&folder).join(name), png).unwrap();
        }
    }

    /// A page of another site, on a port of its own, that tries to decide
    /// about run `run` through the inspector at `inspector` with `token`
    /// (as if it had leaked): a plain form post, then a JSON post with the
    /// token; its title becomes `tried` once both have been sent.
    pub(super) fn attacker(inspector: &str, token: &str, run: &str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let page = format!(
            "<!doctype html><title>attacker</title><script>\n\
             const body = JSON.stringify({{run: '{run}', decisions: {{'call-1-1': 'approve'}}}});\n\
             (async () => {{\n\
               try {{ await fetch('http://{inspector}/api/decide', {{method: 'POST', mode: 'no-cors', headers: {{'Content-Type': 'text/plain'}}, body}}); }} catch (e) {{}}\n\
               try {{ await fetch('http://{inspector}/api/decide', {{method: 'POST', headers: {{'Content-Type': 'application/json', 'Authorization': 'Bearer {token}'}}, body}}); }} catch (e) {{}}\n\
               document.title = 'tried';\n\
             }})();\n\
             </script>"
        );
        std::thread::spawn(move || {
            use std::io::{BufRead, BufReader, Write};
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 2 {
                    line.clear();
                }
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
            }
        });
        format!("http://{address}/")
    }
}

/// The demo's lead run, as `scripts/demo.sh` makes it: two sub-agents'
/// runs, an edit the reviewer is denied, and the editor's write waiting
/// for a person (`call-2-1/call-1-2`).
fn demo() -> Project {
    let project = Project::new();
    project.bundled("dir", artifacts::DIR);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    project.copy_folder(&root.join("examples/demo"), "examples/demo");
    project.copy_folder(&root.join("examples/demo/project"), "lead-project");
    let output = project.cordon(&[
        "run",
        "--agent",
        "examples/demo/lead.toml",
        "--workspace",
        "lead-project",
        "--run-id",
        "lead",
        "Make the greeting friendlier",
    ]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    project
}

fn lead(project: &Project) -> Value {
    let output = project.cordon(&[
        "runs",
        "show",
        "lead",
        "--json",
        "--workspace",
        "lead-project",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_chromium_the_demos_timeline_renders_an_approval_resumes_it_and_other_pages_are_refused()
{
    use fantoccini::Locator;

    let project = demo();
    // A model's output that is markup, waiting beside the demo's run.
    project.write(
        "hostile.toml",
        "name = \"x\"\nsandbox = \"dir\"\ntools = [\"read\"]\n[permissions]\ndefault = \"ask\"\n",
    );
    project.write(
        "hostile-script.toml",
        "[[turn]]\ntext = \"<script>document.title = 'pwned'</script>\"\n[[turn.call]]\ntool = \"read\"\n\
         args = { path = \"<img src=x onerror=\\\"document.title='pwned'\\\">\" }\n",
    );
    let output = project.cordon(&[
        "run",
        "--agent",
        "hostile.toml",
        "--model",
        "scripted:hostile-script.toml",
        "--workspace",
        "lead-project",
        "--run-id",
        "markup",
        "go",
    ]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    let inspector = Inspector::start_with(&project, &["--workspace", "lead-project"]);
    let driver = browser::Driver::start();
    let browser = driver.browser().await;
    let row = |run: &str| format!("#runs tbody tr[data-run=\"{run}\"]");

    browser.goto(&inspector.url).await.unwrap();
    browser::text_once(&browser, &row("lead"), |text| {
        text.contains("waiting on 1 call(s)")
    })
    .await;
    browser::text_once(&browser, &row("lead/call-1-1"), |text| {
        text.contains("final answer")
    })
    .await;

    // What a model wrote is shown as text: no element of it, no script run.
    browser::click(&browser, &row("markup")).await;
    let pending = browser::text_once(&browser, "#pending", |text| text.contains("onerror")).await;
    assert!(pending.contains("<img src=x"), "{pending}");
    let bar = browser::text_once(&browser, "#timeline", |text| text.contains("read")).await;
    assert!(!bar.is_empty());
    assert!(
        browser
            .find_all(Locator::Css("#run-pane img, #run-pane script"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_ne!(browser.title().await.unwrap(), "pwned");
    browser.refresh().await.unwrap();
    browser::text_once(&browser, &row("lead"), |_| true).await;
    // The runs list filtered to the demo's tree, as the book shows it.
    browser
        .find(Locator::Css("#filter-run"))
        .await
        .unwrap()
        .send_keys("lead")
        .await
        .unwrap();
    assert!(
        browser
            .find_all(Locator::Css(&row("markup")))
            .await
            .unwrap()
            .is_empty(),
        "the filter leaves out other runs"
    );
    browser::screenshot(&browser, "ui-runs.png").await;

    // The reviewer's run: its edit denied by its own rule, a grey bar.
    browser::click(&browser, &row("lead/call-1-1")).await;
    browser::text_once(&browser, "#timeline", |text| text.contains("edit")).await;
    let (denied, class) = browser::bar(&browser, "call-1-2").await;
    assert_eq!(class, "bar deny");
    denied.click().await.unwrap();
    let parent = browser::text_once(&browser, "#run-links", |text| !text.is_empty()).await;
    assert!(
        parent.contains("delegated by lead (call call-1-1)"),
        "{parent}"
    );
    let facts = browser::text_once(&browser, "#detail-facts", |text| text.contains("deny")).await;
    assert!(facts.contains("edit"), "the rule that decided: {facts}");
    browser::screenshot(&browser, "ui-call.png").await;

    // The lead's run: its steps, each sub-agent a bar with its duration,
    // and the write waiting beneath the editor's call.
    browser::click(&browser, &row("lead")).await;
    let timeline = browser::text_once(&browser, "#timeline", |text| {
        text.contains("agent.reviewer") && text.contains("agent.editor")
    })
    .await;
    assert!(
        timeline.contains("step 1") && timeline.contains("step 2"),
        "{timeline}"
    );
    let (reviewer, class) = browser::bar(&browser, "call-1-1").await;
    assert_eq!(class, "bar ok");
    assert!(
        reviewer.text().await.unwrap().ends_with(" ms"),
        "a duration"
    );
    let links = browser::text_once(&browser, "#run-links", |text| !text.is_empty()).await;
    assert!(links.contains("lead/call-2-1"), "{links}");
    browser::text_once(&browser, "#pending", |text| {
        text.contains("call-2-1/call-1-2")
    })
    .await;
    browser::screenshot(&browser, "ui-timeline.png").await;

    // Another site's page, even holding the token, decides nothing.
    let attacker = browser::attacker(&inspector.address, &inspector.token, "lead");
    browser.goto(&attacker).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while browser.title().await.unwrap() != "tried" {
        assert!(
            std::time::Instant::now() < deadline,
            "the attacker's page never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(lead(&project)["disposition"]["disposition"], "waiting");

    // Without the token the page shows no run and says why.
    browser
        .goto(&format!("http://{}/", inspector.address))
        .await
        .unwrap();
    browser
        .execute("sessionStorage.clear()", Vec::new())
        .await
        .unwrap();
    browser.refresh().await.unwrap();
    let problem = browser::text_once(&browser, "#problem", |text| !text.is_empty()).await;
    assert!(problem.contains("token"), "{problem}");
    assert!(
        browser
            .find_all(Locator::Css("#runs tbody tr"))
            .await
            .unwrap()
            .is_empty()
    );

    // Approved from the page, the run resumes as `runs resume lead
    // --approve call-2-1/call-1-2` would, and the store shows it. (The
    // address differs from the page's by its fragment alone, so it loads
    // again only when asked.)
    browser.goto(&inspector.url).await.unwrap();
    browser.refresh().await.unwrap();
    browser::text_once(&browser, &row("lead"), |_| true).await;
    browser::click(&browser, &row("lead")).await;
    browser::click(
        &browser,
        "#pending tr[data-call=\"call-2-1/call-1-2\"] input.approve",
    )
    .await;
    browser::click(&browser, "#resume").await;
    let resumed =
        browser::text_once(&browser, "#resumed", |text| text.contains("run lead ended")).await;
    assert!(resumed.contains("final answer"), "{resumed}");
    let shown = lead(&project);
    assert_eq!(shown["disposition"]["disposition"], "ended", "{shown}");
    let changelog = project
        .read("lead-project/CHANGELOG.md")
        .unwrap_or_default();
    assert!(
        changelog.contains("exclamation mark"),
        "the approved write reached the folder"
    );
    browser.close().await.unwrap();
}
