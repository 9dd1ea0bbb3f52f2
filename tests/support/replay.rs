//! A model provider's server on loopback, for tests of providers and of runs
//! against them: it answers each request with the next scripted reply
//! (recorded streams in the providers' real wire formats, error statuses,
//! streams that break or stall) and records what it was sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response with this status, extra headers and body.
    Status {
        /// The HTTP status code.
        code: u16,
        /// Extra headers, each a name and a value.
        headers: Vec<(&'static str, String)>,
        /// The response body.
        body: String,
    },

    /// 200 with this event stream; the connection closes after it, so a stream
    /// without its terminator ends early.
    Stream(String),
    /// 200 with this much of a chunked event stream, then the connection drops
    /// in the middle of the body.
    Broken(String),
    /// 200 with this much of an event stream, then silence.
    Stall(String),
}

/// What a request looked like.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The request line and headers, as sent.
    pub head: String,
    /// The JSON body.
    pub body: Value,
}

impl Recorded {
    /// The value of header `name` (case-insensitive), if sent.
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }
}

/// The server.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    /// Listen on a free loopback port and answer with `replies`, in order.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let recorded = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let recorded = Arc::clone(&recorded);
                let replies = Arc::clone(&replies);
                tokio::spawn(async move {
                    serve(socket, &recorded, &replies).await;
                });
            }
        });
        Self { url, requests }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    recorded: &Mutex<Vec<Recorded>>,
    replies: &Mutex<VecDeque<Reply>>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    recorded.lock().unwrap().push(request);
    let reply = replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(Reply::Status {
            code: 500,
            headers: Vec::new(),
            body: r#"{"error": {"message": "no reply scripted"}}"#.into(),
        });
    let stream_head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n";
    match reply {
        Reply::Status {
            code,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {code} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            let _ = socket
                .write_all(format!("{head}\r\n{body}").as_bytes())
                .await;
        }
        Reply::Stream(events) => {
            let _ = socket
                .write_all(format!("{stream_head}\r\n").as_bytes())
                .await;
            for line in events.split_inclusive('\n') {
                let _ = socket.write_all(line.as_bytes()).await;
                let _ = socket.flush().await;
            }
        }
        Reply::Broken(events) => {
            let chunk = format!("{:x}\r\n{events}\r\n", events.len());
            let _ = socket
                .write_all(
                    format!("{stream_head}transfer-encoding: chunked\r\n\r\n{chunk}").as_bytes(),
                )
                .await;
            let _ = socket.write_all(b"ff\r\npartial").await;
            let _ = socket.flush().await;
        }
        Reply::Stall(events) => {
            let _ = socket
                .write_all(format!("{stream_head}\r\n{events}").as_bytes())
                .await;
            let _ = socket.flush().await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    }
    let _ = socket.shutdown().await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 8192];
    let head_end = loop {
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        bytes.extend_from_slice(&buffer[..read]);
        if let Some(at) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
            break at;
        }
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = bytes[head_end + 4..].to_vec();
    while body.len() < length {
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            break;
        }
        body.extend_from_slice(&buffer[..read]);
    }
    Some(Recorded {
        head,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}
