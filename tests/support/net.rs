//! HTTP servers the network tests start on an address of their own (loopback,
//! or an address of a network namespace the test made), over plain HTTP or
//! TLS with a certificate authority made for the test. Each server records
//! every request it saw, and how many connections it took. [`Rebinding`] is
//! a resolver whose answer changes from one lookup to the next.
//!
//! Paths choose the answer:
//!
//! | path | answer |
//! |---|---|
//! | `/echo` | the request's method, path, headers and body, as JSON |
//! | `/page` | a small HTML page linking to `/echo` |
//! | `/echo-gzip` | as `/echo`, labelled `content-encoding: gzip` |
//! | `/bytes/N` | `N` bytes, with a `content-length` |
//! | `/stream/N` | `N` bytes, chunked, without one |
//! | `/drip` | one byte, then nothing for a minute, chunked |
//! | `/wait/MS` | `waited` after `MS` milliseconds |
//! | `/redirect?to=URL` | 302 to `URL` |
//! | anything else | `hello from NAME` |

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A request a server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The method.
    pub method: String,
    /// The path and query.
    pub path: String,
    /// The headers, names lowercase.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Seen {
    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(own, _)| own == name)
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Default)]
struct Record {
    seen: Mutex<Vec<Seen>>,
    connections: AtomicUsize,
    active: AtomicUsize,
    peak: AtomicUsize,
}

/// A running test server.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    record: Arc<Record>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A certificate authority made for one test, and a server certificate it
/// signed for some names.
pub struct TestCa {
    /// The authority's certificate, for the client to trust.
    pub root: CertificateDer<'static>,
    chain: Vec<CertificateDer<'static>>,
    key: Vec<u8>,
}

impl TestCa {
    /// An authority, and a server certificate for `names`.
    pub fn new(names: &[&str]) -> Self {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
        let ca_key = KeyPair::generate().expect("CA key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().expect("server key");
        let leaf = CertificateParams::new(
            names
                .iter()
                .map(|name| (*name).to_owned())
                .collect::<Vec<_>>(),
        )
        .expect("server params")
        .signed_by(&key, &issuer)
        .expect("server certificate");
        Self {
            root: ca.der().clone(),
            chain: vec![leaf.der().clone()],
            key: key.serialize_der(),
        }
    }
}

impl Server {
    /// A plain HTTP server on `addr` (port 0 for any), answering as `name`.
    pub async fn start(addr: &str, name: &str) -> Self {
        Self::serve(addr, name, None).await
    }

    /// A TLS server on `addr` with `ca`'s server certificate.
    pub async fn start_tls(addr: &str, name: &str, ca: &TestCa) -> Self {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ca.key.clone()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(ca.chain.clone(), key)
            .expect("server certificate");
        Self::serve(
            addr,
            name,
            Some(tokio_rustls::TlsAcceptor::from(Arc::new(config))),
        )
        .await
    }

    async fn serve(addr: &str, name: &str, tls: Option<tokio_rustls::TlsAcceptor>) -> Self {
        let listener = TcpListener::bind(addr)
            .await
            .unwrap_or_else(|error| panic!("bind {addr}: {error}"));
        let addr = listener.local_addr().expect("local address");
        let record = Arc::new(Record::default());
        let name = name.to_owned();
        let shared = Arc::clone(&record);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                shared.connections.fetch_add(1, Ordering::SeqCst);
                let record = Arc::clone(&shared);
                let name = name.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        answer(request, name.clone(), Arc::clone(&record))
                    });
                    let http = hyper::server::conn::http1::Builder::new();
                    match tls {
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                let _ = http.serve_connection(TokioIo::new(stream), service).await;
                            }
                        }
                        None => {
                            let _ = http.serve_connection(TokioIo::new(stream), service).await;
                        }
                    }
                });
            }
        });
        Self { addr, record, task }
    }

    /// Every request seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.record.seen.lock().unwrap().clone()
    }

    /// How many connections it accepted.
    pub fn connections(&self) -> usize {
        self.record.connections.load(Ordering::SeqCst)
    }

    /// The most requests it was answering at once.
    pub fn peak(&self) -> usize {
        self.record.peak.load(Ordering::SeqCst)
    }

    /// `http://ADDR` (or `https://`) followed by `path`.
    pub fn url(&self, scheme: &str, path: &str) -> String {
        format!("{scheme}://{}{path}", self.addr)
    }
}

type Answer = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn full(status: u16, text: impl Into<Bytes>) -> Response<Answer> {
    Response::builder()
        .status(status)
        .body(Full::new(text.into()).boxed())
        .expect("response")
}

async fn answer(
    request: Request<Incoming>,
    name: String,
    record: Arc<Record>,
) -> Result<Response<Answer>, Infallible> {
    let active = record.active.fetch_add(1, Ordering::SeqCst) + 1;
    record.peak.fetch_max(active, Ordering::SeqCst);
    let method = request.method().to_string();
    let path = request
        .uri()
        .path_and_query()
        .map_or("/".to_owned(), |path| path.to_string());
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = request
        .into_body()
        .collect()
        .await
        .map(|body| body.to_bytes().to_vec())
        .unwrap_or_default();
    record.seen.lock().unwrap().push(Seen {
        method: method.clone(),
        path: path.clone(),
        headers: headers.clone(),
        body: body.clone(),
    });
    let response = if path == "/echo" || path == "/echo-gzip" {
        let echoed = json!({
            "method": method,
            "path": path,
            "headers": headers,
            "body": String::from_utf8_lossy(&body),
        });
        let mut response = full(200, echoed.to_string());
        // The server echoes the request's headers in its own, too.
        for (header, value) in &headers {
            if let (Ok(name), Ok(value)) = (
                http::HeaderName::from_bytes(format!("x-echo-{header}").as_bytes()),
                http::HeaderValue::from_str(value),
            ) {
                response.headers_mut().insert(name, value);
            }
        }
        if path == "/echo-gzip" {
            response.headers_mut().insert(
                http::header::CONTENT_ENCODING,
                http::HeaderValue::from_static("gzip"),
            );
        }
        response
    } else if path == "/page" {
        let mut response = full(
            200,
            format!(
                "<html><head><title>{name}</title></head><body><h1>Page of {name}</h1>\
                 <p>See <a href=\"/echo\">the echo</a>.</p></body></html>"
            ),
        );
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/html; charset=utf-8"),
        );
        response
    } else if let Some(count) = path.strip_prefix("/bytes/") {
        full(200, "x".repeat(count.parse().unwrap_or(0)))
    } else if let Some(count) = path.strip_prefix("/stream/") {
        Response::new(
            Drip {
                left: count.parse().unwrap_or(0),
                chunk: 4096,
                pause: None,
                sleep: None,
            }
            .boxed(),
        )
    } else if path == "/drip" {
        Response::new(
            Drip {
                left: 1000,
                chunk: 1,
                pause: Some(Duration::from_secs(60)),
                sleep: None,
            }
            .boxed(),
        )
    } else if let Some(ms) = path.strip_prefix("/wait/") {
        tokio::time::sleep(Duration::from_millis(ms.parse().unwrap_or(0))).await;
        full(200, "waited")
    } else if let Some(to) = path.strip_prefix("/redirect?to=") {
        let mut response = full(302, "moved");
        if let Ok(location) = http::HeaderValue::from_str(to) {
            response
                .headers_mut()
                .insert(http::header::LOCATION, location);
        }
        response
    } else {
        full(200, format!("hello from {name}"))
    };
    record.active.fetch_sub(1, Ordering::SeqCst);
    Ok(response)
}

/// A chunked body of `left` bytes, `chunk` at a time, pausing after each.
struct Drip {
    left: usize,
    chunk: usize,
    pause: Option<Duration>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Body for Drip {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if let Some(sleep) = this.sleep.as_mut() {
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.sleep = None;
        }
        if this.left == 0 {
            return Poll::Ready(None);
        }
        let size = this.chunk.min(this.left);
        this.left -= size;
        if let Some(pause) = this.pause {
            this.sleep = Some(Box::pin(tokio::time::sleep(pause)));
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(vec![b'x'; size])))))
    }
}

/// A resolver that answers each lookup with the next of its answers (the
/// last one again once they run out), and counts the lookups: a name that
/// rebinds between lookups.
pub struct Rebinding {
    answers: Mutex<Vec<Vec<std::net::IpAddr>>>,
    lookups: AtomicUsize,
}

impl Rebinding {
    /// A resolver giving `answers` in turn.
    pub fn new(answers: Vec<Vec<std::net::IpAddr>>) -> Self {
        assert!(!answers.is_empty(), "a rebinding name needs an answer");
        Self {
            answers: Mutex::new(answers),
            lookups: AtomicUsize::new(0),
        }
    }

    /// How many lookups it answered.
    pub fn lookups(&self) -> usize {
        self.lookups.load(Ordering::SeqCst)
    }
}

impl cordon_wasm::Resolve for Rebinding {
    fn resolve<'a>(&'a self, _name: &'a str) -> cordon_wasm::Lookup<'a> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        let mut answers = self.answers.lock().unwrap();
        let answer = if answers.len() > 1 {
            answers.remove(0)
        } else {
            answers[0].clone()
        };
        Box::pin(async move { Ok::<_, std::io::Error>(answer) })
    }
}
