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
        run["pending"][0]["why"],
        "permission rule `notes.add` asks",
        "{run}"
    );
    // The allowed call beside it ran, and says when.
    let listed_call = &run["commits"][1]["tools"][1];
    assert_eq!(listed_call["call"]["name"], "notes.list", "{run}");
    assert!(listed_call["timing"]["started_ms"].as_u64().unwrap() > 0, "{run}");

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
        answer["output"].as_str().unwrap().contains("run r1 ended (final answer)"),
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

#[test]
fn another_host_another_origin_no_token_or_a_plain_form_is_refused_and_the_run_still_waits() {
    let project = waiting();
    let inspector = Inspector::start(&project);
    let bearer = format!("Bearer {}", inspector.token);
    let own = format!("http://{}", inspector.address);
    let decision = r#"{"run": "r1", "decisions": {"call-1-1": "approve"}}"#;
    let json = ("Content-Type", "application/json");
    let rebound = format!("attacker.example:{}", inspector.address.split(':').nth(1).unwrap());
    let refused: [(&str, Vec<(&str, &str)>, u16); 6] = [
        ("no token", vec![("Origin", &own), json], 401),
        ("another token", vec![("Authorization", "Bearer 0123"), ("Origin", &own), json], 401),
        ("another site's page", vec![("Authorization", &bearer), ("Origin", "http://attacker.example"), json], 403),
        ("an opaque origin", vec![("Authorization", &bearer), ("Origin", "null"), json], 403),
        ("DNS rebinding", vec![("Authorization", &bearer), ("Host", &rebound), json], 403),
        ("a plain form", vec![("Authorization", &bearer), ("Origin", &own), ("Content-Type", "text/plain")], 415),
    ];
    for (what, headers, status) in refused {
        let (got, response) = inspector.send("POST", "/api/decide", &headers, decision);
        assert_eq!(got, status, "{what}: {response}");
        assert_eq!(disposition(&project), "waiting", "{what} changed the run");
    }
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
