//! `cordon mcp --http` serving many clients at once, each step commit on
//! disk before its answer (the default durability). A client is a thread
//! with a kept-alive connection sending 2026-07-28 `tools/call` requests for
//! the trivial `test_echo` one after another. Figures, each beside its
//! baseline from the same run, each on a server of its own with a fresh
//! store:
//! - throughput of 16 clients at once against one client alone, and the
//!   same 16 clients with `--durability process` (no commit waits for the
//!   disk): the ceiling the machine's cores set;
//! - p50 and p99 of one client's quick call while another client's 2 s call
//!   (`test_wait`) runs, against the same client alone.
//!
//! Run with `cargo bench -p cordon-cli --bench serve_at_once` after the test
//! command has built the fixtures (`./scripts/test.sh`).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cordon_test_artifacts::MCP_FIXTURES;

/// How long each throughput figure runs.
const RUNNING: Duration = Duration::from_secs(4);

/// Quick calls timed for each latency figure.
const QUICK_CALLS: usize = 2000;

/// Clients at once.
const CLIENTS: usize = 16;

fn main() {
    let work = tempfile::tempdir().expect("scratch folder");
    let project = work.path().join("project");
    let bundle = project.join("plugins/test");
    std::fs::create_dir_all(&bundle).expect("bundle folder");
    std::fs::write(
        bundle.join("plugin.toml"),
        "[plugin]\nname = \"test\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n",
    )
    .expect("manifest");
    std::fs::copy(MCP_FIXTURES, bundle.join("tool.wasm"))
        .expect("the MCP fixtures; run the test command first");
    std::fs::write(
        project.join("permissions.toml"),
        "default = \"deny\"\nallow = [\"test.*\"]\n",
    )
    .expect("permissions");
    println!(
        "cordon mcp --http, each commit on disk unless said; load {}",
        support::load_average()
    );
    let one = throughput(&project, 1, "disk");
    let many = throughput(&project, CLIENTS, "disk");
    let ceiling = throughput(&project, CLIENTS, "process");
    println!("  1 client            {one:8.0} calls/s");
    println!(
        "  {CLIENTS} clients at once   {many:8.0} calls/s  ({:.1}x one client)",
        many / one
    );
    println!(
        "  {CLIENTS} clients, --durability process {ceiling:8.0} calls/s  (on disk: {:.0}% of it)",
        100.0 * many / ceiling
    );
    let alone = quick_calls(&project, false);
    let beside = quick_calls(&project, true);
    for (label, samples) in [("alone", &alone), ("beside a 2 s call", &beside)] {
        println!(
            "  quick call {label:18} p50 {:6.0} us  p99 {:6.0} us",
            micros(percentile(samples, 0.5)),
            micros(percentile(samples, 0.99))
        );
    }
    println!(
        "  p99 beside a 2 s call: {:.2}x alone",
        percentile(&beside, 0.99).as_secs_f64() / percentile(&alone, 0.99).as_secs_f64()
    );
}

/// Calls a second `clients` clients make together, each calling as soon
/// as its last call was answered, each commit reaching `durability`.
fn throughput(project: &Path, clients: usize, durability: &str) -> f64 {
    let server = Server::start(project, durability);
    let start = Barrier::new(clients);
    let calls: usize = std::thread::scope(|scope| {
        let running: Vec<_> = (0..clients)
            .map(|_| {
                let (server, start) = (&server, &start);
                scope.spawn(move || {
                    let mut client = Client::connect(&server.address);
                    client.call("test_echo", "{\"n\":0}");
                    start.wait();
                    let ends = Instant::now() + RUNNING;
                    let mut calls = 0;
                    while Instant::now() < ends {
                        client.call("test_echo", &format!("{{\"n\":{calls}}}"));
                        calls += 1;
                    }
                    calls
                })
            })
            .collect();
        running
            .into_iter()
            .map(|client| client.join().unwrap())
            .sum()
    });
    #[allow(clippy::cast_precision_loss)] // far below 2^52 calls
    let rate = calls as f64 / RUNNING.as_secs_f64();
    rate
}

/// How long each of one client's quick calls took, alone or while another
/// client's 2 s calls run one after another.
fn quick_calls(project: &Path, beside_long: bool) -> Vec<Duration> {
    let server = Server::start(project, "disk");
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        if beside_long {
            let (server, stop) = (&server, &stop);
            scope.spawn(move || {
                let mut client = Client::connect(&server.address);
                while !stop.load(Ordering::Relaxed) {
                    client.call("test_wait", "{\"ms\":2000}");
                }
            });
            std::thread::sleep(Duration::from_millis(300));
        }
        let mut client = Client::connect(&server.address);
        for n in 0..50 {
            client.call("test_echo", &format!("{{\"n\":{n}}}"));
        }
        let samples = (0..QUICK_CALLS)
            .map(|n| {
                let started = Instant::now();
                client.call("test_echo", &format!("{{\"n\":{n}}}"));
                started.elapsed()
            })
            .collect();
        stop.store(true, Ordering::Relaxed);
        samples
    })
}

/// A `cordon mcp --http` of the project, with a fresh run store.
struct Server {
    child: Child,
    address: String,
}

impl Server {
    fn start(project: &Path, durability: &str) -> Self {
        let _ = std::fs::remove_dir_all(project.join(".cordon"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
            .args([
                "mcp",
                "--permissions",
                "permissions.toml",
                "--http",
                "127.0.0.1:0",
                "--durability",
                durability,
            ])
            .current_dir(project)
            .env_remove("CORDON_PLUGINS")
            .env_remove("CORDON_STORE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn cordon mcp");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let address = loop {
            let line = lines
                .next()
                .expect("the server said where it listens")
                .expect("stderr");
            if let Some(rest) = line.split("http://").nth(1) {
                break rest.split('/').next().expect("address").to_owned();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Self { child, address }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One MCP client on a kept-alive connection.
struct Client {
    address: String,
    reader: BufReader<TcpStream>,
}

impl Client {
    fn connect(address: &str) -> Self {
        let stream = TcpStream::connect(address).expect("connect");
        stream.set_nodelay(true).expect("no delay");
        Self {
            address: address.to_owned(),
            reader: BufReader::new(stream),
        }
    }

    /// Call `tool` with `arguments` (JSON) and read the whole answer, which
    /// must not be an error.
    fn call(&mut self, tool: &str, arguments: &str) {
        let body = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"{tool}\",\"arguments\":{arguments},\"_meta\":{{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{{}},\"io.modelcontextprotocol/clientInfo\":{{\"name\":\"bench\",\"version\":\"0\"}}}}}}}}"
        );
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}\r\n\r\n{body}",
            self.address,
            body.len()
        );
        self.reader
            .get_mut()
            .write_all(request.as_bytes())
            .expect("send");
        let answer = self.read_response();
        assert!(
            answer.contains("\"isError\":false"),
            "{tool} failed: {answer}"
        );
    }

    /// One HTTP/1.1 response's body, sized or chunked.
    fn read_response(&mut self) -> String {
        let mut length = None;
        let mut chunked = false;
        loop {
            let line = self.line();
            if line.is_empty() {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse::<usize>().ok();
            } else if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let size = usize::from_str_radix(self.line().trim(), 16).expect("chunk size");
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).expect("chunk");
                body.extend_from_slice(&chunk[..size]);
                if size == 0 {
                    break;
                }
            }
        } else {
            let mut sized = vec![0; length.expect("a sized or chunked body")];
            self.reader.read_exact(&mut sized).expect("body");
            body = sized;
        }
        String::from_utf8_lossy(&body).into_owned()
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("response line");
        line.trim_end_matches(['\r', '\n']).to_owned()
    }
}

fn percentile(samples: &[Duration], fraction: f64) -> Duration {
    let mut ordered = samples.to_vec();
    ordered.sort();
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let index = ((ordered.len() as f64) * fraction) as usize;
    ordered[index.min(ordered.len() - 1)]
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
