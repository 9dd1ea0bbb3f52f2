//! What a granted request costs: a component's GET to a loopback server
//! through the host (the origin check, the lookup, the address check, the
//! vetted connect, the limits, the body streams) against a direct hyper GET
//! on a fresh connection to the same server, in the same run. The per-request
//! figure is the difference between a call that sends `N` requests and the
//! same call sending none, over `N`, so the call's own cost drops out.
//!
//! Run with `cargo bench -p cordon-tests --bench network`.

use std::time::{Duration, Instant};

use bytes::Bytes;
use cordon_tests::net::Server;
use cordon_tests::{Fixture, artifacts, host, manifest};
use cordon_wasm::{NetworkPolicy, Safeguards};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use serde_json::json;

const REQUESTS: u32 = 60;
const ROUNDS: usize = 9;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(requests());
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn us(time: Duration) -> f64 {
    time.as_secs_f64() * 1e6
}

/// One GET on a fresh connection, as the host's sender makes one.
async fn direct(addr: std::net::SocketAddr, path: &str) {
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(connection);
    let request = http::Request::get(path)
        .header(http::header::HOST, addr.to_string())
        .body(Empty::<Bytes>::new())
        .expect("request");
    let response = sender.send_request(request).await.expect("response");
    let body = response.into_body().collect().await.expect("body");
    assert_eq!(body.to_bytes().len(), 1024);
}

async fn requests() {
    let server = Server::start("127.0.0.1:0", "bench").await;
    let fixture = Fixture::new();
    fixture.bundle(
        "hostile-net",
        &manifest(
            "hostile-net",
            &format!(
                "[grants]\nnetwork = [\"http://127.0.0.1:{}\"]\n[limits]\nrequests = {REQUESTS}\n",
                server.addr.port()
            ),
        ),
        std::path::Path::new(artifacts::HOSTILE_NET),
    );
    let policy = NetworkPolicy::default().opening(vec!["127.0.0.0/8".parse().unwrap()]);
    let loaded = fixture
        .load_on(host().with_network(policy), Safeguards::default())
        .await;
    let url = server.url("http", "/bytes/1024");
    let call = |count: u32| {
        let loaded = &loaded;
        let url = url.clone();
        async move {
            let start = Instant::now();
            let output = loaded
                .call("hostile-net.many", json!({"url": url, "count": count}))
                .await
                .expect("requests");
            assert_eq!(output.content["answered"], count, "{}", output.content);
            start.elapsed()
        }
    };
    call(REQUESTS).await;
    for _ in 0..REQUESTS {
        direct(server.addr, "/bytes/1024").await;
    }

    let (mut through, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let none = call(0).await;
        let many = call(REQUESTS).await;
        through.push(many.saturating_sub(none) / REQUESTS);
        let start = Instant::now();
        for _ in 0..REQUESTS {
            direct(server.addr, "/bytes/1024").await;
        }
        bare.push(start.elapsed() / REQUESTS);
    }
    let (through, bare) = (median(&mut through), median(&mut bare));
    println!(
        "GET of 1 KiB on loopback, per request, median of {ROUNDS} rounds of {REQUESTS}:\n  \
         component through the host  {:8.1} us\n  \
         direct hyper, fresh connection {:6.1} us\n  \
         ratio {:.2}x, overhead {:.1} us per request",
        us(through),
        us(bare),
        through.as_secs_f64() / bare.as_secs_f64(),
        us(through.saturating_sub(bare)),
    );
}
