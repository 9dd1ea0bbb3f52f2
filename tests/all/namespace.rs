//! Private and metadata addresses that really answer, tried inside a network
//! namespace this test creates, so a check that failed could only ever reach
//! a server of the test's own: the namespace's loopback device carries
//! 10.0.0.1 (private), 169.254.169.254 (cloud metadata), 100.64.0.1 (CGNAT),
//! fd00::1 (unique local) and 8.8.8.8, which stands for a public host. A
//! server listens on each. Names and literals leading to the blocked ones are
//! refused and nothing connects, while the public one and an operator's
//! explicit range are reached; a rebinding from public to private never
//! connects to the second answer; a redirect to a private address is handed
//! back, not followed, and following it is refused; a raw socket to a
//! blocked address is refused even when a `tcp://` origin names it.
//!
//! The outer test re-runs this binary's ignored test inside `unshare -n`.
//! Where namespaces are unavailable it says so loudly and skips.

use std::process::Command;
use std::sync::Arc;

use cordon_kernel::{Capability, ToolErrorKind};
use cordon_tests::net::{Rebinding, Server};
use cordon_tests::{Fixture, Loaded, artifacts, host, manifest};
use cordon_wasm::{NetworkPolicy, Resolver, Safeguards};
use serde_json::{Value, json};

/// The addresses the namespace's loopback carries, with a prefix length each.
const ADDRESSES: [&str; 5] = [
    "10.0.0.1/32",
    "169.254.169.254/32",
    "100.64.0.1/32",
    "8.8.8.8/32",
    "fd00::1/128",
];

const INSIDE: &str = "namespace::inside_a_network_namespace";

#[test]
fn private_and_metadata_servers_inside_a_network_namespace_are_never_reached() {
    if let Err(why) = Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .map_err(|error| error.to_string())
        .and_then(|status| {
            status
                .success()
                .then_some(())
                .ok_or_else(|| format!("`unshare -n true` exited with {status}"))
        })
    {
        eprintln!(
            "\n*** SKIPPED: network namespaces are unavailable here ({why}); the private and \
             metadata addresses were not tried against real servers. Run as root, or where \
             unprivileged user namespaces are allowed. ***\n"
        );
        return;
    }
    let mut setup = String::from("set -e; ip link set lo up");
    for address in ADDRESSES {
        let nodad = if address.contains(':') { " nodad" } else { "" };
        setup.push_str(&format!("; ip addr add {address} dev lo{nodad}"));
    }
    let this = std::env::current_exe().expect("this test binary");
    let output = Command::new("unshare")
        .args(["-n", "sh", "-c"])
        .arg(format!("{setup}; exec \"$0\" \"$@\""))
        .arg(this)
        .args([
            "--ignored",
            "--exact",
            INSIDE,
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("run the test inside a network namespace");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "inside the namespace:\n{stdout}\n{stderr}"
    );
}

/// The hostile network fixture granted `origins` on a host under `policy`.
async fn net(origins: &[&str], policy: NetworkPolicy) -> (Fixture, Loaded) {
    let quoted: Vec<String> = origins.iter().map(|origin| format!("{origin:?}")).collect();
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile-net",
        &manifest(
            "hostile-net",
            &format!("[grants]\nnetwork = [{}]\n", quoted.join(", ")),
        ),
        std::path::Path::new(artifacts::HOSTILE_NET),
    );
    let loaded = fixture
        .load_on(host().with_network(policy), Safeguards::default())
        .await;
    (fixture, loaded)
}

async fn fetch(loaded: &Loaded, url: &str) -> Result<Value, cordon_kernel::ToolError> {
    loaded
        .call("hostile-net.fetch", json!({ "url": url }))
        .await
        .map(|output| output.content)
}

fn last_refusal(loaded: &Loaded) -> String {
    let denials = loaded.events.denials();
    let denial = denials
        .iter()
        .rev()
        .find(|denial| denial.capability == Capability::Network)
        .expect("an audited network refusal");
    format!("{}: {}", denial.target, denial.reason)
}

#[tokio::test]
#[ignore = "runs inside the network namespace the test above creates"]
async fn inside_a_network_namespace() {
    let private = Server::start("10.0.0.1:80", "private").await;
    let metadata = Server::start("169.254.169.254:80", "metadata").await;
    let cgnat = Server::start("100.64.0.1:80", "cgnat").await;
    let unique_local = Server::start("[fd00::1]:80", "unique-local").await;
    let public = Server::start("8.8.8.8:80", "public").await;
    let blocked = [
        ("private.test", "10.0.0.1", "private network", &private),
        (
            "metadata.test",
            "169.254.169.254",
            "cloud metadata",
            &metadata,
        ),
        ("cgnat.test", "100.64.0.1", "CGNAT", &cgnat),
        ("ula.test", "fd00::1", "unique-local", &unique_local),
    ];
    let mut names = Resolver::default().pin("public.test", vec!["8.8.8.8".parse().unwrap()]);
    for (name, address, _, _) in blocked {
        names = names.pin(name, vec![address.parse().unwrap()]);
    }
    let (_fixture, loaded) = net(&["http://*:80"], NetworkPolicy::default().resolving(names)).await;

    // The control: the public server answers, so a refusal below is the check's.
    let reached = fetch(&loaded, "http://public.test/").await.unwrap();
    assert_eq!(reached["body"], "hello from public");
    let reached = fetch(&loaded, "http://8.8.8.8/").await.unwrap();
    assert_eq!(reached["body"], "hello from public");

    for (name, address, class, server) in blocked {
        let literal = if address.contains(':') {
            format!("http://[{address}]/")
        } else {
            format!("http://{address}/")
        };
        for url in [format!("http://{name}/"), literal] {
            let error = fetch(&loaded, &url).await.expect_err(&url);
            assert_eq!(error.kind, ToolErrorKind::Denied, "{url}: {error}");
            let said = last_refusal(&loaded);
            assert!(said.contains(class), "{url}: {said}");
        }
        assert_eq!(server.connections(), 0, "{name} was never connected");
    }

    // The metadata address in the spellings an attacker reaches for.
    for url in [
        "http://2852039166/",
        "http://0251.0376.0251.0376/",
        "http://0xa9.0xfe.0xa9.0xfe/",
        "http://[::ffff:169.254.169.254]/",
        "http://[64:ff9b::a9fe:a9fe]/",
    ] {
        let error = fetch(&loaded, url).await.expect_err(url);
        assert_eq!(error.kind, ToolErrorKind::Denied, "{url}: {error}");
    }
    assert_eq!(metadata.connections(), 0);

    // A redirect to a private address is handed back, and following it is refused.
    let moved = fetch(
        &loaded,
        "http://public.test/redirect?to=http://10.0.0.1/admin",
    )
    .await
    .unwrap();
    assert_eq!(moved["status"], 302);
    let error = fetch(&loaded, "http://10.0.0.1/admin")
        .await
        .expect_err("following the redirect");
    assert_eq!(error.kind, ToolErrorKind::Denied);
    assert_eq!(private.connections(), 0, "the redirect reached nothing");

    // Rebinding: public on the first lookup, private on the second.
    let rebinding = Arc::new(Rebinding::new(vec![
        vec!["8.8.8.8".parse().unwrap()],
        vec!["10.0.0.1".parse().unwrap()],
    ]));
    let (_fixture, rebound) = net(
        &["http://rebind.test"],
        NetworkPolicy::default().resolving(Resolver::new(rebinding.clone())),
    )
    .await;
    let public_before = public.connections();
    assert_eq!(
        fetch(&rebound, "http://rebind.test/").await.unwrap()["body"],
        "hello from public"
    );
    let error = fetch(&rebound, "http://rebind.test/")
        .await
        .expect_err("rebound to private");
    assert_eq!(error.kind, ToolErrorKind::Denied);
    assert_eq!(rebinding.lookups(), 2);
    assert_eq!(public.connections(), public_before + 1);
    assert_eq!(
        private.connections(),
        0,
        "the second answer was never connected"
    );

    // A raw socket to a blocked address is refused even when a tcp origin names it.
    let (_fixture, raw) = net(&["tcp://169.254.169.254:80"], NetworkPolicy::default()).await;
    let error = raw
        .call("hostile-net.connect", json!({"addr": "169.254.169.254:80"}))
        .await
        .expect_err("raw socket to the metadata address");
    assert_eq!(error.kind, ToolErrorKind::Failed, "{error}");
    assert!(
        last_refusal(&raw).contains("cloud metadata"),
        "{}",
        last_refusal(&raw)
    );
    assert_eq!(metadata.connections(), 0);

    // The operator's explicit range opens exactly that range.
    let (_fixture, opened) = net(
        &["http://10.0.0.1", "http://169.254.169.254"],
        NetworkPolicy::default().opening(vec!["10.0.0.0/8".parse().unwrap()]),
    )
    .await;
    assert_eq!(
        fetch(&opened, "http://10.0.0.1/").await.unwrap()["body"],
        "hello from private"
    );
    assert_eq!(private.connections(), 1);
    assert_eq!(
        fetch(&opened, "http://169.254.169.254/")
            .await
            .expect_err("metadata stays closed")
            .kind,
        ToolErrorKind::Denied
    );
    assert_eq!(metadata.connections(), 0);
}
