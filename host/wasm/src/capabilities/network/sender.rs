//! Sending a request the policy allowed: resolve its host once, drop every
//! address that may not be reached, connect only to the addresses that
//! passed (never looking the name up again), speak TLS with the request's
//! own host name for SNI and certificate checks, and send over HTTP/1.1,
//! each step within the call's network limits. The host follows no
//! redirect: a redirect reaches the component, whose next request is judged
//! again. A request carrying a secret takes only a plain response, in which
//! the value can be found and replaced; an encoded one is refused.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http::{Request, Response};
use http_body_util::BodyExt;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, WasiBody};

use super::body::{Incoming, Redaction, Trail, redact_headers};
use super::origin::{Host, Scheme};
use super::policy::NetworkPolicy;
use crate::limits::NetworkLimits;

/// Where a request goes, once judged.
pub(crate) struct Target {
    pub(crate) scheme: Scheme,
    pub(crate) host: Host,
    pub(crate) port: u16,
}

/// What the connection stage came to.
pub(crate) type Sent = (
    Response<WasiBody>,
    Box<dyn Future<Output = Result<(), Error>> + Send>,
);

/// The addresses of `target`'s host that `policy` lets a connection reach,
/// each refusal in `trail`; none is `DestinationIpProhibited`.
async fn vetted(
    target: &Target,
    policy: &NetworkPolicy,
    trail: &Trail,
) -> Result<Vec<SocketAddr>, Error> {
    let found: Vec<IpAddr> = match &target.host {
        Host::Ip(ip) => vec![*ip],
        Host::Name(name) => policy.resolver.resolve(name).await.map_err(|error| {
            trail.deny(&format!("{name} does not resolve: {error}"));
            Error::DnsError {
                rcode: Some("NXDOMAIN".into()),
                info_code: None,
            }
        })?,
    };
    let mut passed = Vec::new();
    let mut refused = Vec::new();
    for ip in found {
        match policy.addresses.refusal(ip) {
            None => passed.push(SocketAddr::new(ip, target.port)),
            Some(class) => refused.push(format!("{ip} is {class}")),
        }
    }
    if passed.is_empty() {
        trail.deny(&format!(
            "{} leads only where no connection goes: {}",
            target.host,
            refused.join(", ")
        ));
        return Err(Error::DestinationIpProhibited);
    }
    Ok(passed)
}

/// Send `request` to `target` under `policy` and `limits`, holding `slot`
/// among the call's concurrent requests until its response body is done.
pub(crate) async fn send(
    mut request: Request<WasiBody>,
    target: Target,
    policy: Arc<NetworkPolicy>,
    limits: NetworkLimits,
    redactions: Vec<Redaction>,
    trail: Trail,
    slot: OwnedSemaphorePermit,
) -> Result<Sent, Error> {
    let addresses = vetted(&target, &policy, &trail).await?;
    let connect = async {
        let stream = TcpStream::connect(&addresses[..])
            .await
            .map_err(Error::Connect)?;
        let _ = stream.set_nodelay(true);
        Ok::<_, Error>(stream)
    };
    let stream = tokio::time::timeout(limits.connect_timeout, connect)
        .await
        .map_err(|_| {
            trail.exceeded(format!(
                "no connection within {} ms",
                limits.connect_timeout.as_millis()
            ));
            Error::ConnectionTimeout
        })??;
    let io: Box<dyn Stream> = match target.scheme {
        Scheme::Https => {
            let name = match &target.host {
                Host::Name(name) => {
                    ServerName::try_from(name.clone()).map_err(|_| Error::HttpRequestUriInvalid)?
                }
                Host::Ip(ip) => ServerName::from(*ip),
            };
            let tls =
                tokio::time::timeout(limits.connect_timeout, policy.tls.connect(name, stream))
                    .await
                    .map_err(|_| Error::ConnectionTimeout)?
                    .map_err(|error| {
                        trail.deny(&format!("TLS with {} failed: {error}", target.host));
                        Error::Tls(error)
                    })?;
            Box::new(tls)
        }
        Scheme::Http | Scheme::Tcp => Box::new(stream),
    };
    let (mut sender, connection) = tokio::time::timeout(
        limits.connect_timeout,
        hyper::client::conn::http1::Builder::new().handshake(TokioIo::new(io)),
    )
    .await
    .map_err(|_| Error::ConnectionTimeout)??;
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |path| path.as_str())
        .to_owned();
    *request.uri_mut() = http::Uri::builder()
        .path_and_query(path)
        .build()
        .map_err(|_| Error::HttpRequestUriInvalid)?;
    let connection = tokio::spawn(connection);
    let response = tokio::time::timeout(limits.first_byte_timeout, sender.send_request(request))
        .await
        .map_err(|_| {
            trail.exceeded(format!(
                "no response within {} ms",
                limits.first_byte_timeout.as_millis()
            ));
            Error::ConnectionReadTimeout
        })??;
    let declared = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limits.response_bytes) {
        trail.exceeded(format!(
            "the response body is larger than the limit of {} bytes",
            limits.response_bytes
        ));
        return Err(Error::HttpResponseBodySize(declared));
    }
    if !redactions.is_empty()
        && let Some(coding) = encoded(response.headers())
    {
        trail.deny(&format!(
            "the response to a request carrying a secret is encoded ({coding}), so the value \
             could not be kept out of it; such a request takes only plain responses"
        ));
        return Err(Error::HttpResponseContentCoding(Some(coding)));
    }
    let (mut parts, incoming) = response.into_parts();
    redact_headers(&mut parts.headers, &redactions);
    let body = Incoming::new(
        incoming,
        limits.response_bytes,
        limits.between_bytes_timeout,
        redactions,
        trail,
        slot,
    );
    let finished = async move {
        match connection.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(Error::from(error)),
            Err(_) => Err(Error::ConnectionTerminated),
        }
    };
    Ok((
        Response::from_parts(parts, body.boxed_unsync()),
        Box::new(finished),
    ))
}

/// The content coding of a response, unless it is plain (`identity`).
fn encoded(headers: &http::HeaderMap) -> Option<String> {
    let codings: Vec<String> = headers
        .get_all(http::header::CONTENT_ENCODING)
        .iter()
        .flat_map(|value| {
            String::from_utf8_lossy(value.as_bytes())
                .split(',')
                .map(|coding| coding.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .filter(|coding| !coding.is_empty() && coding != "identity")
        .collect();
    (!codings.is_empty()).then(|| codings.join(", "))
}

/// A connection, plain or over TLS.
trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}

impl<T> Stream for T where T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
