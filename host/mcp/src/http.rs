//! Streamable HTTP: the same handler at `/mcp`, for clients that connect
//! rather than spawn. It binds loopback unless the operator says otherwise
//! in so many words; it answers `403` to a `Host` header that is not this
//! machine's loopback (a DNS-rebinding page) and to an `Origin` that is not
//! a loopback page, `413` to a request body past the cap, and `404` to any
//! other path.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use crate::server::CordonMcp;

/// The one path the server answers on.
pub const PATH: &str = "/mcp";

/// The largest request body accepted.
pub const MAX_BODY: usize = 4 << 20;

/// Why the server would not listen.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// The address is not loopback and the operator did not allow that.
    #[error(
        "--http {0}: not a loopback address; Cordon serves loopback only unless \
         --allow-non-loopback is given (anyone who can reach the port can then call the tools)"
    )]
    NotLoopback(SocketAddr),
    /// The address could not be bound.
    #[error("--http {address}: cannot listen: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// A bound listener, ready to serve.
pub struct Listener {
    listener: TcpListener,
    allowed_hosts: Vec<String>,
}

impl Listener {
    /// Bind `address`; one that is not loopback only with `non_loopback`.
    pub async fn bind(address: SocketAddr, non_loopback: bool) -> Result<Self, ListenError> {
        if !address.ip().is_loopback() && !non_loopback {
            return Err(ListenError::NotLoopback(address));
        }
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| ListenError::Bind { address, source })?;
        let mut allowed_hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        if !address.ip().is_loopback() {
            allowed_hosts.push(address.ip().to_string());
        }
        Ok(Self {
            listener,
            allowed_hosts,
        })
    }

    /// The address bound (with the port the system chose for port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serve `server` until the process ends.
    pub async fn serve(self, server: CordonMcp) -> std::io::Result<()> {
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(self.allowed_hosts)
            .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
            .with_max_request_body_bytes(MAX_BODY);
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        loop {
            let (stream, _) = self.listener.accept().await?;
            // An answer streamed in pieces leaves at once, not after the
            // client's delayed acknowledgement of the piece before.
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "an MCP connection keeps Nagle's delay");
            }
            let service = service.clone();
            tokio::spawn(async move {
                let handler =
                    hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                        let service = service.clone();
                        async move {
                            if request.uri().path() == PATH {
                                let ending = request.method() == hyper::Method::DELETE;
                                let mut response = service.handle(request).await;
                                // A session ended is done, not accepted for later:
                                // clients expect 200 and warn about anything else.
                                if ending && response.status() == hyper::StatusCode::ACCEPTED {
                                    *response.status_mut() = hyper::StatusCode::OK;
                                }
                                Ok::<_, Infallible>(response)
                            } else {
                                Ok(not_found())
                            }
                        }
                    });
                let served = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
                if let Err(error) = served {
                    tracing::debug!(%error, "an MCP connection ended badly");
                }
            });
        }
    }
}

fn not_found() -> hyper::Response<http_body_util::combinators::BoxBody<Bytes, Infallible>> {
    let mut response = hyper::Response::new(
        Full::new(Bytes::from_static(b"Cordon serves MCP at /mcp only\n")).boxed(),
    );
    *response.status_mut() = hyper::StatusCode::NOT_FOUND;
    response
}
