//! Network grants as an operator meets them: the bundled `http` plugin
//! reaches no origin until `cordon grants approve --origin` names one, and a
//! server on loopback only where the operator's config opens that range;
//! `plugins check` and `grants list` say what it reaches; an origin beyond
//! what the bundle asks, a malformed origin, range or config key is an error
//! naming the flag or the file, the field and the value; a secret the config
//! and the manifest disagree on is a warning; and a secret's value, from the
//! operator's environment, reaches its server in its header and nothing the
//! run stored.

use cordon_test_artifacts as artifacts;
use cordon_tests::net::Server;
use serde_json::Value;

use crate::support::{Project, both, text};

const AGENT: &str = r#"name = "fetcher"
instructions = "Fetch."
tools = ["http.fetch", "hostile-net.fetch"]
[permissions]
default = "deny"
allow = ["http.fetch", "hostile-net.fetch"]
"#;

/// A server on loopback, with the runtime that serves it.
fn server() -> (tokio::runtime::Runtime, Server) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(Server::start("127.0.0.1:0", "site"));
    (runtime, server)
}

/// The result of call `call` of run `run_id`.
fn result_of(project: &Project, run_id: &str, call: &str) -> Value {
    project.show(run_id)["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["tools"].as_array().cloned().unwrap_or_default())
        .find(|tool| tool["call"]["id"] == call && !tool["result"].is_null())
        .map(|tool| tool["result"].clone())
        .unwrap_or_else(|| panic!("no result for {call}"))
}

fn run(project: &Project, run_id: &str) -> std::process::Output {
    let output = project.run_scripted(run_id, &[]);
    assert!(output.status.success(), "{}", both(&output));
    output
}

#[test]
fn the_http_plugin_reaches_only_the_origin_approved_and_loopback_only_where_opened() {
    let (_runtime, server) = server();
    let origin = format!("http://{}", server.addr);
    let project = Project::new();
    project.bundled("http", artifacts::HTTP);
    project.write("agent.toml", AGENT);
    project.write(
        "script.toml",
        &format!(
            "[[turn]]\n[[turn.call]]\ntool = \"http.fetch\"\nargs = {{ url = \"{origin}/page\" }}\n\
             [[turn.call]]\ntool = \"http.fetch\"\nargs = {{ url = \"http://localhost:{}/page\" }}\n\
             [[turn]]\ntext = \"Done.\"\n",
            server.addr.port()
        ),
    );

    let unapproved = run(&project, "r1");
    assert_eq!(
        result_of(&project, "r1", "call-1-1")["error"]["kind"],
        "denied"
    );
    assert!(
        text(&unapproved.stderr).contains(&format!(
            "[http] denied network `{origin}`: the bundle is granted no network"
        )),
        "{}",
        both(&unapproved)
    );
    let checked = text(&project.cordon(&["plugins", "check", "plugins"]).stdout);
    assert!(
        checked.contains("network: reaches no origin: approve some with `cordon grants approve http --origin ORIGIN`"),
        "{checked}"
    );

    for (bad, says) in [
        ("ftp://example.com", "ftp"),
        ("https://exa mple.com", "exa mple.com"),
        ("tcp://127.0.0.1:22", "tcp://127.0.0.1:22"),
    ] {
        let refused = project.cordon(&[
            "grants",
            "approve",
            "http",
            "--plugins",
            "plugins",
            "--origin",
            bad,
            "--yes",
        ]);
        assert!(!refused.status.success(), "{bad}: {}", both(&refused));
        assert!(both(&refused).contains(says), "{bad}: {}", both(&refused));
    }
    let approved = project.cordon(&[
        "grants",
        "approve",
        "http",
        "--plugins",
        "plugins",
        "--origin",
        &origin,
        "--yes",
    ]);
    assert!(approved.status.success(), "{}", both(&approved));
    assert!(
        text(&approved.stdout).contains(&format!("reaches: {origin}")),
        "{}",
        both(&approved)
    );
    let listed = text(
        &project
            .cordon(&["grants", "list", "--plugins", "plugins"])
            .stdout,
    );
    assert!(listed.contains(&format!("reaches {origin}")), "{listed}");

    let blocked = run(&project, "r2");
    assert_eq!(
        result_of(&project, "r2", "call-1-1")["error"]["kind"],
        "denied"
    );
    assert!(
        text(&blocked.stderr).contains("loopback"),
        "{}",
        both(&blocked)
    );
    assert!(server.seen().is_empty(), "nothing reached the server yet");

    project.write(
        ".cordon/config.toml",
        "[network]\nallow-ranges = [\"127.0.0.0/8\"]\n",
    );
    let opened = run(&project, "r3");
    let page = result_of(&project, "r3", "call-1-1")["output"].clone();
    assert_eq!(page["status"], 200, "{page} {}", both(&opened));
    assert!(
        page["text"].as_str().unwrap().contains("Page of site"),
        "{page}"
    );
    assert_eq!(page["links"], serde_json::json!([format!("{origin}/echo")]));
    let other = result_of(&project, "r3", "call-1-2");
    assert_eq!(
        other["error"]["kind"], "denied",
        "localhost is another origin"
    );
    assert_eq!(server.seen().len(), 1, "only the approved request arrived");
    let checked = text(&project.cordon(&["plugins", "check", "plugins"]).stdout);
    assert!(
        checked.contains(&format!("network: reaches {origin}")),
        "{checked}"
    );
}

#[test]
fn a_malformed_network_config_is_an_error_naming_its_file_field_and_value() {
    let project = Project::new();
    project.bundled("jq", artifacts::JQ);
    for (config, says) in [
        (
            "[network]\nallow-ranges = [\"10.0.0.0/33\"]\n",
            "field `network.allow-ranges[0]` = \"10.0.0.0/33\"",
        ),
        ("[network]\nallow-range = [\"10.0.0.0/8\"]\n", "allow-range"),
        (
            "[network.resolve]\n\"db.internal\" = [\"not-an-ip\"]\n",
            "\"not-an-ip\" is not an IP address",
        ),
        ("[network]\nca-files = [\"missing.pem\"]\n", "missing.pem"),
        ("[secrets.jq]\ntoken = { vault = \"x\" }\n", "vault"),
    ] {
        project.write(".cordon/config.toml", config);
        let output = project.cordon(&[
            "tool",
            "call",
            "jq.query",
            "--args",
            "{\"filter\": \".\", \"input\": 1}",
        ]);
        assert!(!output.status.success(), "{config}: {}", both(&output));
        let said = text(&output.stderr);
        assert!(said.contains(".cordon/config.toml"), "{config}: {said}");
        assert!(said.contains(says), "{config}: {said}");
    }
    project.write(
        ".cordon/config.toml",
        "[network]\nallow-ranges = [\"10.0.0.0/8\"]\n",
    );
    let fine = project.cordon(&[
        "tool",
        "call",
        "jq.query",
        "--args",
        "{\"filter\": \".\", \"input\": 1}",
    ]);
    assert!(fine.status.success(), "{}", both(&fine));
}

const TOKEN: &str = "tok-7f3a-NEVER-SEEN";

#[test]
fn a_secret_from_the_operators_environment_reaches_its_header_and_nothing_stored() {
    let (_runtime, server) = server();
    let origin = format!("http://{}", server.addr);
    let project = Project::new();
    project.bundle(
        "hostile-net",
        &format!(
            "[plugin]\nname = \"hostile-net\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n\
             [grants]\nnetwork = [\"{origin}\"]\n\
             [secrets.api]\nheader = \"authorization\"\nprefix = \"Bearer \"\norigins = [\"{origin}\"]\n"
        ),
        artifacts::HOSTILE_NET,
    );
    project.approve("hostile-net");
    let checked = text(&project.cordon(&["plugins", "check", "plugins"]).stdout);
    assert!(checked.contains("secrets: api (not provided)"), "{checked}");
    let listed = project.cordon(&["tool", "list"]);
    assert!(
        text(&listed.stderr).contains(
            "warning: bundle `hostile-net` uses secret `api`, which the operator config does not provide"
        ),
        "{}",
        both(&listed)
    );
    project.write(
        ".cordon/config.toml",
        "[network]\nallow-ranges = [\"127.0.0.0/8\"]\n[secrets.hostile-net]\napi = { env = \"CORDON_TEST_API_TOKEN\" }\n\
         apl = { env = \"CORDON_TEST_API_TOKEN\" }\n",
    );
    let checked = text(&project.cordon(&["plugins", "check", "plugins"]).stdout);
    assert!(checked.contains("secrets: api (provided)"), "{checked}");
    let listed = project.cordon(&["tool", "list"]);
    assert!(
        text(&listed.stderr).contains(
            "the operator config provides secret `apl` of bundle `hostile-net`, which its manifest does not declare"
        ),
        "a misspelt secret is said: {}",
        both(&listed)
    );
    project.write("agent.toml", AGENT);
    project.write(
        "script.toml",
        &format!(
            "[[turn]]\n[[turn.call]]\ntool = \"hostile-net.fetch\"\n\
             args = {{ url = \"{origin}/echo\", headers = [[\"authorization\", \"Bearer {{secret:api}}\"]] }}\n\
             [[turn.call]]\ntool = \"hostile-net.fetch\"\n\
             args = {{ url = \"{origin}/echo\", headers = [[\"x-leak\", \"{{secret:api}}\"]] }}\n\
             [[turn]]\ntext = \"Done.\"\n"
        ),
    );
    let output = project
        .command(&[
            "run",
            "--agent",
            "agent.toml",
            "--model",
            "scripted:script.toml",
            "--run-id",
            "s1",
            "go",
        ])
        .env("CORDON_TEST_API_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", both(&output));

    let seen = server.seen();
    assert_eq!(
        seen.len(),
        1,
        "the placeholder in another header was refused"
    );
    let sent: Vec<&(String, String)> = seen[0]
        .headers
        .iter()
        .filter(|(name, _)| name == "authorization")
        .collect();
    assert_eq!(
        sent,
        [&("authorization".to_owned(), format!("Bearer {TOKEN}"))]
    );
    let echoed = result_of(&project, "s1", "call-1-1");
    assert_eq!(echoed["output"]["status"], 200, "{echoed}");
    assert_eq!(
        result_of(&project, "s1", "call-1-2")["error"]["kind"],
        "denied"
    );
    let shown = text(&project.cordon(&["runs", "show", "s1", "--json"]).stdout);
    assert!(!shown.contains(TOKEN), "the value is in the run: {shown}");
    assert!(!both(&output).contains(TOKEN), "the value was printed");
    for entry in std::fs::read_dir(project.path(".cordon")).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap_or_default();
        assert!(
            !bytes
                .windows(TOKEN.len())
                .any(|window| window == TOKEN.as_bytes()),
            "the value is in the store's files"
        );
    }
}
