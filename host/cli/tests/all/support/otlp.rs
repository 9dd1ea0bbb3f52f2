//! An OTLP/HTTP receiver on loopback for the tests that export: it accepts
//! what the exporter posts to `/v1/traces` and `/v1/metrics` and decodes it
//! with the official protobuf definitions (`opentelemetry-proto`), keeping
//! every request's raw bytes too, so a test can say what never left.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::Metric;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// What the receiver was sent.
#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    metrics: Vec<Metric>,
    raw: Vec<Vec<u8>>,
}

/// A receiver listening on a port of its own until dropped with the test.
pub(crate) struct Receiver {
    /// `http://127.0.0.1:PORT`, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub(crate) endpoint: String,
    received: Arc<Mutex<Received>>,
}

impl Receiver {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Received::default()));
        let shared = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Self { endpoint, received }
    }

    /// Every span received so far.
    pub(crate) fn spans(&self) -> Vec<Span> {
        self.received.lock().unwrap().spans.clone()
    }

    /// Every metric received so far, in the order they came.
    pub(crate) fn metrics(&self) -> Vec<Metric> {
        self.received.lock().unwrap().metrics.clone()
    }

    /// How many export requests came.
    pub(crate) fn requests(&self) -> usize {
        self.received.lock().unwrap().raw.len()
    }

    /// Whether `needle` appears in the bytes of any request.
    pub(crate) fn ever_sent(&self, needle: &str) -> bool {
        self.received.lock().unwrap().raw.iter().any(|raw| {
            raw.windows(needle.len())
                .any(|window| window == needle.as_bytes())
        })
    }

    /// The spans once one named `name` has come, waiting up to a minute.
    pub(crate) fn spans_once(&self, name: &str) -> Vec<Span> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let spans = self.spans();
            if spans.iter().any(|span| span.name == name) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "no span {name:?} came: {:?}",
                names(&spans)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Answer each request on `stream` (the exporter keeps its connection).
fn serve(stream: TcpStream, received: &Mutex<Received>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("")
            .to_owned();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap();
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
            assert_ne!(
                name, "transfer-encoding",
                "the receiver reads sized bodies only"
            );
            assert!(
                name != "content-encoding",
                "the exporter compresses only when asked"
            );
            if name == "content-length" {
                length = value.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        {
            let mut received = received.lock().unwrap();
            match path.as_str() {
                "/v1/traces" => {
                    let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
                    received.spans.extend(
                        request
                            .resource_spans
                            .into_iter()
                            .flat_map(|resource| resource.scope_spans)
                            .flat_map(|scope| scope.spans),
                    );
                }
                "/v1/metrics" => {
                    let request = ExportMetricsServiceRequest::decode(body.as_slice()).unwrap();
                    received.metrics.extend(
                        request
                            .resource_metrics
                            .into_iter()
                            .flat_map(|resource| resource.scope_metrics)
                            .flat_map(|scope| scope.metrics),
                    );
                }
                other => panic!("an export to an unknown path {other:?}"),
            }
            received.raw.push(body);
        }
        let answer =
            "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        if stream.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// The names of `spans`, for a failing assertion's message.
pub(crate) fn names(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|span| span.name.as_str()).collect()
}

/// The attribute `key` of `attributes`, as text (numbers and booleans
/// written out).
pub(crate) fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    let value = attributes.iter().find(|kv| kv.key == key)?.value.as_ref()?;
    text(value)
}

fn text(value: &AnyValue) -> Option<String> {
    Some(match value.value.as_ref()? {
        any_value::Value::StringValue(text) => text.clone(),
        any_value::Value::IntValue(number) => number.to_string(),
        any_value::Value::DoubleValue(number) => number.to_string(),
        any_value::Value::BoolValue(flag) => flag.to_string(),
        _ => return None,
    })
}

/// The span of `spans` named `name`; panics naming those there are.
pub(crate) fn span<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    spans
        .iter()
        .find(|span| span.name == name)
        .unwrap_or_else(|| panic!("no span {name:?} among {:?}", names(spans)))
}
