//! Outgoing HTTP from a tool (feature `http`): a small blocking client over
//! `wasi:http`. The host sends the request only when the bundle is granted
//! its origin (`grants.network`); a refusal comes back as
//! [`HttpError::Denied`], and the host's limits hold whatever timeouts a
//! request asks for.
//!
//! ```ignore
//! let response = cordon_sdk::http::get("https://api.example.com/status")?;
//! let text = response.text();
//! ```
//!
//! A secret the manifest declares (`[secrets.NAME]`) is used through its
//! placeholder, [`secret`]: put it where the manifest says (its header, after
//! its prefix) and the host puts the value there on the way out.

use std::time::Duration;

use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
};
use wasi::io::streams::StreamError;

/// A request to send.
#[derive(Debug, Clone)]
pub struct Request {
    /// The method, such as `GET`.
    pub method: String,
    /// The URL: `http://` or `https://`, a host, an optional port and path.
    pub url: String,
    /// Headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// Time to connect, at most; the host's limit holds when it is shorter.
    pub connect_timeout: Option<Duration>,
    /// Time to the response's first byte, at most.
    pub first_byte_timeout: Option<Duration>,
    /// Time between two pieces of the response body, at most.
    pub between_bytes_timeout: Option<Duration>,
    /// The most response body bytes to read; the rest is left unread.
    pub max_bytes: Option<usize>,
}

impl Request {
    /// A `GET` of `url`.
    pub fn get(url: &str) -> Self {
        Self {
            method: "GET".into(),
            url: url.into(),
            headers: Vec::new(),
            body: None,
            connect_timeout: None,
            first_byte_timeout: None,
            between_bytes_timeout: None,
            max_bytes: None,
        }
    }

    /// This request with the header `name: value` too.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// A response, its body read.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, in order, names lowercase.
    pub headers: Vec<(String, String)>,
    /// The body, up to the request's `max_bytes`.
    pub body: Vec<u8>,
    /// Whether the body went on past `max_bytes`.
    pub truncated: bool,
}

impl Response {
    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(own, _)| own.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body as text, invalid UTF-8 replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Why a request did not come back with a response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The host refused it: the origin is not granted, or the request
    /// carries a secret where it may not go.
    #[error("the host refused the request: {0}")]
    Denied(String),
    /// A limit of the bundle stopped it: its number of requests, a body's
    /// size, or a timeout.
    #[error("the request ran into a limit: {0}")]
    Limit(String),
    /// The URL or a header is not one the request can carry.
    #[error("the request is malformed: {0}")]
    Invalid(String),
    /// It failed on the way: no connection, a broken response, TLS.
    #[error("the request failed: {0}")]
    Failed(String),
}

impl From<HttpError> for crate::ToolError {
    fn from(error: HttpError) -> Self {
        match error {
            HttpError::Denied(message) => {
                Self::Denied(format!("the host refused the request: {message}"))
            }
            HttpError::Invalid(message) => Self::InvalidInput(message),
            other => Self::Failed(other.to_string()),
        }
    }
}

/// `GET` `url`.
pub fn get(url: &str) -> Result<Response, HttpError> {
    send(&Request::get(url))
}

/// The placeholder of secret `name`, when the operator provided it.
pub fn secret(name: &str) -> Option<String> {
    std::env::var(format!(
        "CORDON_SECRET_{}",
        name.to_ascii_uppercase().replace('-', "_")
    ))
    .ok()
}

/// Send `request` and read its response; a refusal names the origin refused.
pub fn send(request: &Request) -> Result<Response, HttpError> {
    exchange(request).map_err(|error| match (error, split_url(&request.url)) {
        (HttpError::Denied(why), Ok((scheme, authority, _))) => {
            let scheme = if matches!(scheme, Scheme::Https) {
                "https"
            } else {
                "http"
            };
            HttpError::Denied(format!("{scheme}://{authority}: {why}"))
        }
        (error, _) => error,
    })
}

/// Send `request` and read its response, as the host answers.
fn exchange(request: &Request) -> Result<Response, HttpError> {
    let (scheme, authority, path) = split_url(&request.url)?;
    let fields: Vec<(String, Vec<u8>)> = request
        .headers
        .iter()
        .map(|(name, value)| (name.clone(), value.as_bytes().to_vec()))
        .collect();
    let headers = Fields::from_list(&fields)
        .map_err(|error| HttpError::Invalid(format!("a header is refused: {error:?}")))?;
    let outgoing = OutgoingRequest::new(headers);
    let method = match request.method.to_ascii_uppercase().as_str() {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "PATCH" => Method::Patch,
        "OPTIONS" => Method::Options,
        other => Method::Other(other.to_owned()),
    };
    let invalid = |what: &str| HttpError::Invalid(format!("{what} is not accepted"));
    outgoing
        .set_method(&method)
        .map_err(|()| invalid("the method"))?;
    outgoing
        .set_scheme(Some(&scheme))
        .map_err(|()| invalid("the scheme"))?;
    outgoing
        .set_authority(Some(authority))
        .map_err(|()| invalid("the host"))?;
    outgoing
        .set_path_with_query(Some(path))
        .map_err(|()| invalid("the path"))?;
    let body = outgoing
        .body()
        .map_err(|()| HttpError::Failed("the request body is unavailable".into()))?;
    let options = RequestOptions::new();
    let nanos = |time: Option<Duration>| time.map(|time| time.as_nanos() as u64);
    let _ = options.set_connect_timeout(nanos(request.connect_timeout));
    let _ = options.set_first_byte_timeout(nanos(request.first_byte_timeout));
    let _ = options.set_between_bytes_timeout(nanos(request.between_bytes_timeout));
    let future = outgoing_handler::handle(outgoing, Some(options)).map_err(error)?;
    // A request the host refuses stops taking its body; the refusal itself
    // comes with the response, so a failed write is said only without one.
    let mut written = true;
    if let Some(bytes) = &request.body {
        let stream = body
            .write()
            .map_err(|()| HttpError::Failed("the request body is unavailable".into()))?;
        written = bytes
            .chunks(4096)
            .all(|chunk| stream.blocking_write_and_flush(chunk).is_ok());
        drop(stream);
    }
    let finished = OutgoingBody::finish(body, None);
    future.subscribe().block();
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(error(code)),
        Some(Err(())) | None => return Err(HttpError::Failed("no response".into())),
    };
    if !written {
        return Err(HttpError::Failed("writing the request body failed".into()));
    }
    finished.map_err(error)?;
    let status = response.status();
    let headers = response
        .headers()
        .entries()
        .into_iter()
        .map(|(name, value)| (name, String::from_utf8_lossy(&value).into_owned()))
        .collect();
    let incoming = response
        .consume()
        .map_err(|()| HttpError::Failed("the response body is unavailable".into()))?;
    let (body, truncated) = read_body(&incoming, request.max_bytes)?;
    drop(IncomingBody::finish(incoming));
    Ok(Response {
        status,
        headers,
        body,
        truncated,
    })
}

/// Read `incoming` to its end, or to `max` bytes.
fn read_body(incoming: &IncomingBody, max: Option<usize>) -> Result<(Vec<u8>, bool), HttpError> {
    let stream = incoming
        .stream()
        .map_err(|()| HttpError::Failed("the response body is unavailable".into()))?;
    let mut body = Vec::new();
    let truncated = loop {
        if max.is_some_and(|max| body.len() >= max) {
            break true;
        }
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => body.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break false,
            Err(StreamError::LastOperationFailed(failure)) => {
                return Err(match wasi::http::types::http_error_code(&failure) {
                    Some(code) => error(code),
                    None => body_failure(&failure.to_debug_string()),
                });
            }
        }
    };
    if let Some(max) = max {
        body.truncate(max);
    }
    Ok((body, truncated))
}

/// What a failed read of a response body means, from its description: a
/// host may report a body's failure without its error code.
fn body_failure(description: &str) -> HttpError {
    let lower = description.to_ascii_lowercase();
    if lower.contains("body size exceeds limit") {
        HttpError::Limit("the response body is too large".into())
    } else if lower.contains("timeout") || lower.contains("timed out") {
        HttpError::Limit("no response in time".into())
    } else {
        HttpError::Failed(description.to_owned())
    }
}

/// Split `url` into its scheme, authority and path with query.
fn split_url(url: &str) -> Result<(Scheme, &str, &str), HttpError> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| HttpError::Invalid(format!("{url:?} is not an http:// or https:// URL")))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "https" => Scheme::Https,
        "http" => Scheme::Http,
        other => {
            return Err(HttpError::Invalid(format!(
                "the scheme {other:?} is not http or https"
            )));
        }
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.is_empty() {
        return Err(HttpError::Invalid(format!("{url:?} names no host")));
    }
    Ok((scheme, authority, if path.is_empty() { "/" } else { path }))
}

/// What the host's error code means for the tool.
fn error(code: ErrorCode) -> HttpError {
    match code {
        ErrorCode::HttpRequestDenied => HttpError::Denied(
            "the origin is not granted, or the request breaks a rule of the grant".into(),
        ),
        ErrorCode::DestinationIpProhibited => {
            HttpError::Denied("the host name leads to an address no connection goes to".into())
        }
        ErrorCode::HttpResponseContentCoding(_) => HttpError::Denied(
            "the response is encoded, and a request carrying a secret takes only plain responses"
                .into(),
        ),
        ErrorCode::ConnectionLimitReached => {
            HttpError::Limit("too many requests for one call".into())
        }
        ErrorCode::HttpRequestBodySize(_) => {
            HttpError::Limit("the request body is too large".into())
        }
        ErrorCode::HttpResponseBodySize(_) => {
            HttpError::Limit("the response body is too large".into())
        }
        ErrorCode::ConnectionTimeout => HttpError::Limit("no connection in time".into()),
        ErrorCode::ConnectionReadTimeout | ErrorCode::HttpResponseTimeout => {
            HttpError::Limit("no response in time".into())
        }
        other => HttpError::Failed(format!("{other:?}")),
    }
}
