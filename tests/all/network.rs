//! Network grants that hold, tried by the hostile network fixture against
//! servers on loopback: a granted origin is reached and every near miss
//! (scheme, port, subdomain, suffix, trailing dot, userinfo, a Host header
//! naming another host) is denied; names that resolve to blocked addresses,
//! and blocked addresses in any spelling, are denied after resolution and
//! nothing connects; a name is resolved once per request and a rebinding
//! reaches nothing; redirects are not followed; bodies, timeouts, request
//! counts and concurrency stop at the bundle's limits whatever the component
//! asks; raw sockets reach only what a `tcp://` origin names, and no name is
//! ever looked up for a component; a secret goes only into its header on
//! its origins and its value reaches neither the component nor the trail.
//! Every refusal is a typed error and an audited event, and the host keeps
//! running. Private and metadata addresses that really accept connections
//! are tried in `namespace.rs`, inside a network namespace.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cordon_kernel::{Capability, Event, LimitKind, ToolError, ToolErrorKind};
use cordon_tests::net::{Rebinding, Server, TestCa};
use cordon_tests::{Fixture, Loaded, artifacts, host, manifest};
use cordon_wasm::{
    Lookup, NetworkPolicy, Resolve, Resolver, Safeguards, SecretValue, SecretValues,
};
use serde_json::{Value, json};

/// The hostile network fixture as bundle `hostile-net`, granted `origins`, with
/// `extra` manifest TOML, on a host connecting under `policy`.
async fn net(origins: &[String], extra: &str, policy: NetworkPolicy) -> (Fixture, Loaded) {
    let quoted: Vec<String> = origins.iter().map(|origin| format!("{origin:?}")).collect();
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile-net",
        &manifest(
            "hostile-net",
            &format!("[grants]\nnetwork = [{}]\n{extra}", quoted.join(", ")),
        ),
        std::path::Path::new(artifacts::HOSTILE_NET),
    );
    let loaded = fixture
        .load_on(host().with_network(policy), Safeguards::default())
        .await;
    (fixture, loaded)
}

/// A policy opening loopback, for servers on this machine.
fn loopback() -> NetworkPolicy {
    NetworkPolicy::default().opening(vec!["127.0.0.0/8".parse().unwrap()])
}

async fn fetch(loaded: &Loaded, args: Value) -> Result<Value, ToolError> {
    loaded
        .call("hostile-net.fetch", args)
        .await
        .map(|output| output.content)
}

/// The network refusals so far, as (target, reason).
fn refusals(loaded: &Loaded) -> Vec<(String, String)> {
    loaded
        .events
        .denials()
        .into_iter()
        .filter(|denial| denial.capability == Capability::Network && denial.bundle == "hostile-net")
        .map(|denial| (denial.target, denial.reason))
        .collect()
}

/// The network limits hit so far, by detail.
fn limits_hit(loaded: &Loaded) -> Vec<String> {
    loaded
        .events
        .snapshot()
        .into_iter()
        .filter_map(|event| match event {
            Event::LimitExceeded {
                limit: LimitKind::Network,
                detail,
                ..
            } => Some(detail),
            _ => None,
        })
        .collect()
}

fn assert_denied(result: Result<Value, ToolError>, what: &str) {
    let error = result.expect_err(what);
    assert_eq!(error.kind, ToolErrorKind::Denied, "{what}: {error}");
}

#[tokio::test]
async fn a_granted_origin_is_reached_and_every_near_miss_is_denied_and_audited() {
    let server = Server::start("127.0.0.1:0", "granted").await;
    let other = Server::start("127.0.0.1:0", "other").await;
    let port = server.addr.port();
    let names = Resolver::default()
        .pin("api.example.test", vec!["127.0.0.1".parse().unwrap()])
        .pin("x.api.example.test", vec!["127.0.0.1".parse().unwrap()])
        .pin("api.example.test.evil", vec!["127.0.0.1".parse().unwrap()])
        .pin("evil.test", vec!["127.0.0.1".parse().unwrap()]);
    let (_fixture, loaded) = net(
        &[
            format!("http://127.0.0.1:{port}"),
            format!("http://api.example.test:{port}"),
        ],
        "",
        loopback().resolving(names),
    )
    .await;

    let reached = fetch(&loaded, json!({"url": server.url("http", "/")}))
        .await
        .unwrap();
    assert_eq!(reached["status"], 200);
    assert_eq!(reached["body"], "hello from granted");
    let by_name = fetch(
        &loaded,
        json!({"url": format!("http://api.example.test:{port}/echo")}),
    )
    .await
    .unwrap();
    let echoed: Value = serde_json::from_str(by_name["body"].as_str().unwrap()).unwrap();
    assert!(
        echoed["headers"]
            .to_string()
            .contains(&format!("api.example.test:{port}")),
        "the Host header names the origin: {echoed}"
    );
    let seen_before = server.seen().len();

    for (url, headers, says) in [
        (
            format!("https://127.0.0.1:{port}/"),
            json!([]),
            "not an origin the bundle is granted",
        ),
        (
            other.url("http", "/"),
            json!([]),
            "not an origin the bundle is granted",
        ),
        (
            format!("http://x.api.example.test:{port}/"),
            json!([]),
            "not an origin the bundle is granted",
        ),
        (
            format!("http://api.example.test.evil:{port}/"),
            json!([]),
            "not an origin the bundle is granted",
        ),
        (
            format!("http://api.example.test.:{port}/"),
            json!([]),
            "not an origin the bundle is granted",
        ),
        (
            format!("http://127.0.0.1:{port}@evil.test:{port}/"),
            json!([]),
            "user name or password",
        ),
        (
            format!("http://127.0.0.1:{port}/"),
            json!([["host", "evil.test"]]),
            "Host header names \"evil.test\"",
        ),
    ] {
        let result = fetch(&loaded, json!({"url": url, "headers": headers})).await;
        assert_denied(result, &url);
        let said = refusals(&loaded);
        assert!(
            said.last().is_some_and(|(_, reason)| reason.contains(says)),
            "{url}: {said:?}"
        );
    }
    assert_eq!(
        server.seen().len(),
        seen_before,
        "no near miss reached the server"
    );
    assert_eq!(other.connections(), 0);
    let (target, _) = &refusals(&loaded)[1];
    assert_eq!(target, &format!("http://127.0.0.1:{}", other.addr.port()));
    let again = fetch(&loaded, json!({"url": server.url("http", "/")}))
        .await
        .unwrap();
    assert_eq!(again["status"], 200, "the host keeps running");
}

#[tokio::test]
async fn a_bundle_granted_nothing_reaches_nothing() {
    let server = Server::start("127.0.0.1:0", "s").await;
    let (_fixture, loaded) = net(&[], "", loopback()).await;
    assert_denied(
        fetch(&loaded, json!({"url": server.url("http", "/")})).await,
        "no grant",
    );
    assert!(refusals(&loaded)[0].1.contains("granted no network"));
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn names_and_addresses_that_lead_to_blocked_ranges_are_denied_after_resolution() {
    let server = Server::start("127.0.0.1:0", "s").await;
    let port = server.addr.port();
    let blocked = [
        ("loopback.test", "127.0.0.1", "loopback"),
        ("loopback6.test", "::1", "loopback"),
        ("mapped.test", "::ffff:127.0.0.1", "loopback"),
        ("compatible.test", "::7f00:1", "loopback"),
        ("private.test", "10.0.0.1", "a private network"),
        (
            "metadata.test",
            "169.254.169.254",
            "a cloud metadata service",
        ),
        ("unspecified.test", "0.0.0.0", "unspecified"),
        ("cgnat.test", "100.64.0.1", "shared (CGNAT)"),
        ("link-local.test", "fe80::1", "link-local"),
        ("unique-local.test", "fc00::1", "unique-local"),
        (
            "nat64.test",
            "64:ff9b::a9fe:a9fe",
            "a cloud metadata service",
        ),
    ];
    let mut names = Resolver::default();
    for (name, address, _) in blocked {
        names = names.pin(name, vec![address.parse().unwrap()]);
    }
    let (_fixture, loaded) = net(
        &[format!("http://*:{port}")],
        "",
        NetworkPolicy::default().resolving(names),
    )
    .await;
    for (name, _, class) in blocked {
        let result = fetch(&loaded, json!({"url": format!("http://{name}:{port}/")})).await;
        assert_denied(result, name);
        let (target, reason) = refusals(&loaded).pop().unwrap();
        assert_eq!(target, format!("http://{name}:{port}"));
        assert!(reason.contains(class), "{name}: {reason}");
    }
    for literal in [
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "127.1",
        "[::ffff:7f00:1]",
        "[::1]",
    ] {
        let result = fetch(&loaded, json!({"url": format!("http://{literal}:{port}/")})).await;
        assert_denied(result, literal);
        let (_, reason) = refusals(&loaded).pop().unwrap();
        assert!(reason.contains("loopback"), "{literal}: {reason}");
    }
    assert_eq!(server.connections(), 0, "nothing connected");
}

#[tokio::test]
async fn a_name_is_resolved_once_per_request_and_a_rebinding_reaches_nothing() {
    let server = Server::start("127.0.0.1:0", "public").await;
    let port = server.addr.port();
    // Loopback stands for a public address here: the policy opens it.
    // `namespace.rs` does the same with a public address that answers.
    let resolver = Arc::new(Rebinding::new(vec![
        vec!["127.0.0.1".parse().unwrap()],
        vec![
            "10.0.0.1".parse().unwrap(),
            "169.254.169.254".parse().unwrap(),
        ],
    ]));
    let (_fixture, loaded) = net(
        &[format!("http://rebind.test:{port}")],
        "",
        loopback().resolving(Resolver::new(resolver.clone())),
    )
    .await;
    let url = format!("http://rebind.test:{port}/");
    assert_eq!(
        fetch(&loaded, json!({"url": url})).await.unwrap()["status"],
        200
    );
    assert_eq!(resolver.lookups(), 1, "one lookup for one request");
    assert_denied(fetch(&loaded, json!({"url": url})).await, "rebound");
    let (_, reason) = refusals(&loaded).pop().unwrap();
    assert!(
        reason.contains("10.0.0.1 is a private network")
            && reason.contains("169.254.169.254 is a cloud metadata service"),
        "{reason}"
    );
    assert_eq!(resolver.lookups(), 2);
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn a_redirect_is_handed_back_and_following_it_is_judged_again() {
    let server = Server::start("127.0.0.1:0", "s").await;
    let (_fixture, loaded) = net(
        &[format!("http://127.0.0.1:{}", server.addr.port())],
        "",
        loopback(),
    )
    .await;
    let moved = fetch(
        &loaded,
        json!({"url": server.url("http", "/redirect?to=http://10.0.0.1:8080/admin")}),
    )
    .await
    .unwrap();
    assert_eq!(moved["status"], 302);
    assert_eq!(server.seen().len(), 1, "the host follows no redirect");
    assert_denied(
        fetch(&loaded, json!({"url": "http://10.0.0.1:8080/admin"})).await,
        "following it",
    );
}

#[tokio::test]
async fn bodies_timeouts_and_request_counts_stop_at_the_bundles_limits() {
    let server = Server::start("127.0.0.1:0", "s").await;
    let limits = "[limits]\nresponse-kib = 4\nrequest-kib = 1\nrequests = 12\n\
        first-byte-timeout-ms = 300\nbetween-bytes-timeout-ms = 300\ntimeout-ms = 20000\n";
    let (_fixture, loaded) = net(
        &[format!("http://127.0.0.1:{}", server.addr.port())],
        limits,
        loopback(),
    )
    .await;
    let within = fetch(&loaded, json!({"url": server.url("http", "/bytes/4096")}))
        .await
        .unwrap();
    assert_eq!(within["body"].as_str().unwrap().len(), 4096);
    for path in ["/bytes/4097", "/stream/100000"] {
        let error = fetch(&loaded, json!({"url": server.url("http", path)}))
            .await
            .unwrap_err();
        assert!(error.message.contains("too large"), "{path}: {error}");
    }
    assert!(
        limits_hit(&loaded)
            .iter()
            .all(|detail| detail.contains("larger than the limit of 4096 bytes"))
    );
    let big = "x".repeat(2048);
    let error = fetch(
        &loaded,
        json!({"url": server.url("http", "/echo"), "method": "POST", "body": big}),
    )
    .await
    .unwrap_err();
    assert!(error.message.contains("too large"), "{error}");
    assert!(limits_hit(&loaded).last().unwrap().contains("request body"));
    // The component asks for 600 s; the bundle's limits cut it to 300 ms.
    for path in ["/drip", "/wait/5000"] {
        let started = Instant::now();
        let error = fetch(
            &loaded,
            json!({
                "url": server.url("http", path),
                "first_byte_timeout_ms": 600_000,
                "between_bytes_timeout_ms": 600_000,
            }),
        )
        .await
        .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{path}: {:?}",
            started.elapsed()
        );
        assert!(error.message.contains("in time"), "{path}: {error}");
    }
    let many = loaded
        .call(
            "hostile-net.many",
            json!({"url": server.url("http", "/"), "count": 20}),
        )
        .await
        .unwrap()
        .content;
    assert_eq!(many["answered"], 12, "{many}");
    assert_eq!(many["refused"].as_array().unwrap().len(), 8, "{many}");
    assert!(
        limits_hit(&loaded)
            .last()
            .unwrap()
            .contains("at most 12 requests")
    );
}

#[tokio::test]
async fn concurrent_requests_wait_for_a_slot_and_the_calls_deadline_fires_during_io() {
    let server = Server::start("127.0.0.1:0", "s").await;
    let limits = "[limits]\nconcurrent-requests = 2\nrequests = 50\ntimeout-ms = 1500\n";
    let (_fixture, loaded) = net(
        &[format!("http://127.0.0.1:{}", server.addr.port())],
        limits,
        loopback(),
    )
    .await;
    let parallel = loaded
        .call(
            "hostile-net.parallel",
            json!({"authority": server.addr.to_string(), "path": "/wait/150", "count": 8}),
        )
        .await;
    let parallel = parallel.unwrap().content;
    assert_eq!(parallel["answered"], 8, "{parallel}");
    assert!(server.peak() <= 2, "at most two at once: {}", server.peak());
    let started = Instant::now();
    let error = fetch(&loaded, json!({"url": server.url("http", "/drip")}))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Timeout, "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        fetch(&loaded, json!({"url": server.url("http", "/")}))
            .await
            .unwrap()["status"],
        200
    );
}

/// A resolver that counts lookups and answers none.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Resolve for Counting {
    fn resolve<'a>(&'a self, _name: &'a str) -> Lookup<'a> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(io::Error::other("no lookups here")) })
    }
}

#[tokio::test]
async fn raw_sockets_reach_only_a_tcp_origin_and_no_name_is_looked_up_for_a_component() {
    let server = Server::start("127.0.0.1:0", "s").await;
    let addr = server.addr.to_string();
    let counting = Arc::new(Counting::default());
    let policy = loopback().resolving(Resolver::new(counting.clone()));
    let (_fixture, http_only) = net(
        &[format!("http://127.0.0.1:{}", server.addr.port())],
        "",
        policy.clone(),
    )
    .await;
    for (tool, target) in [
        ("hostile-net.connect", addr.clone()),
        ("hostile-net.listen", "127.0.0.1:0".to_owned()),
        ("hostile-net.udp", addr.clone()),
        ("hostile-net.lookup", "secret.attacker.test:80".to_owned()),
    ] {
        let result = http_only.call(tool, json!({"addr": target})).await;
        let error = result.expect_err(tool);
        assert_eq!(error.kind, ToolErrorKind::Failed, "{tool}: {error}");
    }
    let said = refusals(&http_only);
    assert!(
        said.iter()
            .any(|(target, reason)| target == &addr && reason.contains("no tcp:// origin")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|(_, reason)| reason.contains("listening") || reason.contains("binding")),
        "{said:?}"
    );
    assert!(
        said.iter().any(|(_, reason)| reason.contains("UDP")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|(target, reason)| target == "secret.attacker.test"
                && reason.contains("looking up a name")),
        "{said:?}"
    );
    assert_eq!(
        counting.0.load(Ordering::SeqCst),
        0,
        "no lookup left the host"
    );
    assert_eq!(server.connections(), 0);

    let (_fixture, tcp) = net(&[format!("tcp://{addr}")], "", policy).await;
    let connected = tcp
        .call("hostile-net.connect", json!({"addr": addr}))
        .await
        .unwrap();
    assert_eq!(connected.content["connected"], true);
    assert!(
        tcp.call("hostile-net.connect", json!({"addr": "127.0.0.1:1"}))
            .await
            .is_err()
    );
    let (_fixture, closed) = net(&[format!("tcp://{addr}")], "", NetworkPolicy::default()).await;
    assert!(
        closed
            .call("hostile-net.connect", json!({"addr": addr}))
            .await
            .is_err()
    );
    assert!(
        refusals(&closed)[0].1.contains("loopback"),
        "a tcp origin does not open a blocked range"
    );
}

const SECRET_VALUE: &str = "s3cr3t-VALUE-4242";

#[tokio::test]
async fn a_secret_goes_only_into_its_header_on_its_origins_and_never_reaches_the_component() {
    let server = Server::start("127.0.0.1:0", "s").await;
    let other = Server::start("127.0.0.1:0", "other").await;
    let mut secrets = SecretValues::default();
    secrets.provide("hostile-net", "token", SecretValue::new(SECRET_VALUE));
    let origin = format!("http://127.0.0.1:{}", server.addr.port());
    let extra = format!(
        "[secrets.token]\nheader = \"authorization\"\nprefix = \"Bearer \"\norigins = [\"{origin}\"]\n"
    );
    let (_fixture, loaded) = net(
        &[
            origin.clone(),
            format!("http://127.0.0.1:{}", other.addr.port()),
        ],
        &extra,
        loopback().with_secrets(secrets),
    )
    .await;
    let seen = loaded
        .call("hostile-net.placeholder", json!({"name": "token"}))
        .await
        .unwrap()
        .content;
    let placeholder = seen["placeholder"].as_str().unwrap().to_owned();
    assert!(placeholder.starts_with("cordon-secret-token-"), "{seen}");
    assert!(!seen.to_string().contains(SECRET_VALUE), "{seen}");

    let echoed = fetch(
        &loaded,
        json!({"url": server.url("http", "/echo"), "headers": [["authorization", "Bearer {secret:token}"]]}),
    )
    .await
    .unwrap();
    assert_eq!(
        server.seen().last().unwrap().header("authorization"),
        Some(format!("Bearer {SECRET_VALUE}").as_str()),
        "the server got the value"
    );
    let shown = echoed.to_string();
    assert!(
        !shown.contains(SECRET_VALUE),
        "the echo comes back without it: {shown}"
    );
    assert!(shown.contains("Bearer cordon-secret-token-"), "{shown}");
    assert_eq!(
        server.seen().last().unwrap().header("accept-encoding"),
        Some("identity"),
        "a request carrying a secret asks for a plain response"
    );
    let encoded = fetch(
        &loaded,
        json!({"url": server.url("http", "/echo-gzip"),
               "headers": [["authorization", "Bearer {secret:token}"], ["accept-encoding", "gzip"]]}),
    )
    .await;
    assert_denied(encoded, "an encoded response to a request with a secret");
    let (_, reason) = refusals(&loaded).pop().unwrap();
    assert!(reason.contains("is encoded (gzip)"), "{reason}");

    for (args, says) in [
        (
            json!({"url": other.url("http", "/echo"), "headers": [["authorization", "Bearer {secret:token}"]]}),
            "does not go to this origin",
        ),
        (
            json!({"url": server.url("http", "/echo?key={secret:token}")}),
            "in the URL",
        ),
        (
            json!({"url": server.url("http", "/echo"), "headers": [["x-token", "{secret:token}"]]}),
            "in the header `x-token`",
        ),
        (
            json!({"url": server.url("http", "/echo"), "headers": [["authorization", "Bearer {secret:token} and more"]]}),
            "holds more than",
        ),
        (
            json!({"url": server.url("http", "/echo"), "method": "POST", "body": "token={secret:token}"}),
            "in the request body",
        ),
    ] {
        let before = server.seen().len() + other.seen().len();
        assert_denied(fetch(&loaded, args.clone()).await, &args.to_string());
        let (_, reason) = refusals(&loaded).pop().unwrap();
        assert!(reason.contains(says), "{args}: {reason}");
        let leaked = server
            .seen()
            .iter()
            .chain(other.seen().iter())
            .skip(before)
            .any(|seen| {
                String::from_utf8_lossy(&seen.body).contains(SECRET_VALUE)
                    || seen
                        .headers
                        .iter()
                        .any(|(_, value)| value.contains(SECRET_VALUE))
            });
        assert!(!leaked, "{args}");
    }
    let trail = serde_json::to_string(&loaded.events.snapshot()).unwrap();
    assert!(
        !trail.contains(SECRET_VALUE),
        "the trail names the secret, never its value"
    );
    assert!(trail.contains("secret `token`"));
}

#[tokio::test]
async fn https_speaks_tls_to_the_requests_own_host_name() {
    let ca = TestCa::new(&["api.example.test"]);
    let server = Server::start_tls("127.0.0.1:0", "tls", &ca).await;
    let port = server.addr.port();
    let names = Resolver::default()
        .pin("api.example.test", vec!["127.0.0.1".parse().unwrap()])
        .pin("other.example.test", vec!["127.0.0.1".parse().unwrap()]);
    let origins = [format!("https://*.example.test:{port}")];
    let policy = loopback()
        .resolving(names.clone())
        .trusting(vec![ca.root.clone()]);
    let (_fixture, loaded) = net(&origins, "", policy).await;
    let reached = fetch(
        &loaded,
        json!({"url": format!("https://api.example.test:{port}/")}),
    )
    .await
    .unwrap();
    assert_eq!(reached["body"], "hello from tls");
    let wrong_name = fetch(
        &loaded,
        json!({"url": format!("https://other.example.test:{port}/")}),
    )
    .await;
    assert!(
        wrong_name.is_err(),
        "a certificate for another name is refused"
    );
    assert!(
        refusals(&loaded)
            .pop()
            .unwrap()
            .1
            .contains("TLS with other.example.test failed")
    );
    let (_fixture, untrusting) = net(&origins, "", loopback().resolving(names)).await;
    assert!(
        fetch(
            &untrusting,
            json!({"url": format!("https://api.example.test:{port}/")})
        )
        .await
        .is_err()
    );
    assert_eq!(
        server.seen().len(),
        1,
        "only the trusted, matching handshake got a request through"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_javascript_tool_reaches_its_granted_origin_with_fetch_and_nothing_else() {
    let server = Server::start("127.0.0.1:0", "granted").await;
    let other = Server::start("127.0.0.1:0", "other").await;
    let built = cordon_tests::built_bundle(artifacts::LANGUAGE_GUESTS_DIR, "fetch-js");
    let fixture = Fixture::new();
    fixture.bundle(
        "fetch-js",
        &manifest(
            "fetch-js",
            &format!(
                "[grants]\nnetwork = [\"http://127.0.0.1:{}\"]\n\
                 [limits]\nmemory-mib = 96\ntimeout-ms = 5000\nfuel = 2000000000\n",
                server.addr.port()
            ),
        ),
        &built.join("fetch-js.wasm"),
    );
    let loaded = fixture
        .load_on(host().with_network(loopback()), Safeguards::default())
        .await;

    let reached = loaded
        .call("fetch-js.get", json!({"url": server.url("http", "/")}))
        .await
        .expect("fetch the granted origin")
        .content;
    assert_eq!(reached["status"], 200);
    assert_eq!(reached["body"], "hello from granted");
    assert_eq!(reached["length"], "18");

    // The host answers the request `HTTP-request-denied`; StarlingMonkey's
    // fetch turns every network error into one TypeError, which the SDK
    // reports as `failed`. The denial itself is the audited event.
    let refused = loaded
        .call("fetch-js.get", json!({"url": other.url("http", "/")}))
        .await
        .expect_err("another port is not granted");
    assert_eq!(refused.kind, ToolErrorKind::Failed, "{refused}");
    assert_eq!(
        other.connections(),
        0,
        "the refused request never connected"
    );
    let denied: Vec<String> = loaded
        .events
        .denials()
        .into_iter()
        .filter(|denial| denial.capability == Capability::Network && denial.bundle == "fetch-js")
        .map(|denial| denial.target)
        .collect();
    assert_eq!(denied, [format!("http://127.0.0.1:{}", other.addr.port())]);

    let again = loaded
        .call("fetch-js.get", json!({"url": server.url("http", "/")}))
        .await
        .expect("the host keeps serving");
    assert_eq!(again.content["status"], 200);
}
