//! Outgoing HTTP (`wasi:http/outgoing-handler`) as one call may use it.
//! Every request is judged before anything is sent: its scheme, host and
//! port must fall inside the bundle's allowlist (a URL with userinfo, or a
//! `Host` header naming another host, is refused outright), a secret's
//! placeholder may appear only where that secret may go, and the call may
//! not have made more requests than its limit. A refusal is an error the
//! component sees (`HTTP-request-denied`) and a `denied` event naming the
//! bundle and the origin; a limit hit is a `limit-exceeded` event. What
//! passes goes to the [`sender`](super::sender), within the call's limits,
//! whatever timeouts the component asked for.

use std::sync::Arc;

use http::header::{ACCEPT_ENCODING, HOST};
use http::{HeaderName, HeaderValue, Request};
use http_body_util::{BodyExt, Full};
use tokio::sync::Semaphore;
use wasmtime_wasi_http::{
    DEFAULT_FORBIDDEN_HEADERS, Error, ForbiddenHeaderFilter, RequestOptions, WasiBody,
    WasiHttpHooks,
};

use super::body::{Outgoing, Redaction, Trail};
use super::grant::Allowlist;
use super::origin::{Host, Scheme};
use super::policy::NetworkPolicy;
use super::secrets::CallSecrets;
use super::sender::{self, Target};
use crate::audit::Audit;
use crate::limits::NetworkLimits;

/// One call's outgoing HTTP.
pub(crate) struct HttpAccess {
    allowlist: Arc<Allowlist>,
    policy: Arc<NetworkPolicy>,
    limits: NetworkLimits,
    secrets: Arc<CallSecrets>,
    audit: Audit,
    label: String,
    made: u32,
    /// Room for its concurrent requests, made at the first one.
    slots: Option<Arc<Semaphore>>,
}

/// A request that passed, ready to send.
struct Judged {
    target: Target,
    trail: Trail,
    redactions: Vec<Redaction>,
    limits: NetworkLimits,
}

impl HttpAccess {
    pub(crate) fn new(
        allowlist: Arc<Allowlist>,
        policy: Arc<NetworkPolicy>,
        limits: NetworkLimits,
        secrets: Arc<CallSecrets>,
        audit: Audit,
        label: &str,
    ) -> Self {
        Self {
            allowlist,
            policy,
            limits,
            secrets,
            audit,
            label: label.to_owned(),
            made: 0,
            slots: None,
        }
    }

    fn trail(&self, target: String) -> Trail {
        Trail {
            audit: self.audit.clone(),
            label: self.label.clone(),
            target,
        }
    }

    /// Judge `request`, rewriting its `Host` header and putting in the
    /// secrets it may carry.
    fn judge(
        &mut self,
        request: &mut Request<WasiBody>,
        options: Option<RequestOptions>,
    ) -> Result<Judged, Error> {
        let uri = request.uri().clone();
        let shown = uri.to_string();
        self.made += 1;
        if self.made > self.limits.requests {
            self.trail(shown).exceeded(format!(
                "a call makes at most {} requests",
                self.limits.requests
            ));
            return Err(Error::ConnectionLimitReached);
        }
        let scheme = match uri.scheme_str() {
            Some("https") => Scheme::Https,
            Some("http") => Scheme::Http,
            other => {
                self.trail(shown).deny(&format!(
                    "the scheme {} is not http or https",
                    other.unwrap_or("(none)")
                ));
                return Err(Error::HttpRequestDenied);
            }
        };
        let Some(authority) = uri.authority() else {
            self.trail(shown).deny("the request names no host");
            return Err(Error::HttpRequestUriInvalid);
        };
        if authority.as_str().contains('@') {
            self.trail(shown)
                .deny("a URL with a user name or password (`@`) names no host to trust");
            return Err(Error::HttpRequestDenied);
        }
        let host = match Host::parse(authority.host()) {
            Ok(host) => host,
            Err(reason) => {
                self.trail(shown)
                    .deny(&format!("the request's host {reason}"));
                return Err(Error::HttpRequestDenied);
            }
        };
        let port = authority
            .port_u16()
            .or(scheme.default_port())
            .unwrap_or_default();
        let origin = format!("{scheme}://{host}:{port}");
        let trail = self.trail(origin.clone());
        let named = request.headers().get_all(HOST).iter().find(|value| {
            !value
                .as_bytes()
                .eq_ignore_ascii_case(authority.as_str().as_bytes())
        });
        if let Some(other) = named {
            trail.deny(&format!(
                "its Host header names {:?}, not the host it goes to",
                String::from_utf8_lossy(other.as_bytes())
            ));
            return Err(Error::HttpRequestDenied);
        }
        if !self.allowlist.allows(scheme, &host, port) {
            trail.deny(&if self.allowlist.is_empty() {
                "the bundle is granted no network".to_owned()
            } else {
                format!(
                    "is not an origin the bundle is granted ({})",
                    self.allowlist
                        .granted()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
            return Err(Error::HttpRequestDenied);
        }
        let redactions = self.place_secrets(request, &shown, scheme, &host, port, &trail)?;
        let host_header =
            HeaderValue::from_str(authority.as_str()).map_err(|_| Error::HttpRequestUriInvalid)?;
        request.headers_mut().insert(HOST, host_header);
        Ok(Judged {
            target: Target { scheme, host, port },
            trail,
            redactions,
            limits: clamp(self.limits, options),
        })
    }

    /// Refuse a placeholder where its secret may not go, and put each
    /// secret's value where it may; the values to keep from the response.
    fn place_secrets(
        &self,
        request: &mut Request<WasiBody>,
        shown: &str,
        scheme: Scheme,
        host: &Host,
        port: u16,
        trail: &Trail,
    ) -> Result<Vec<Redaction>, Error> {
        if self.secrets.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(secret) = self.secrets.placeholder_in(shown.as_bytes()) {
            trail.deny(&format!(
                "the placeholder of secret `{}` is in the URL; it goes only in its `{}` header",
                secret.name, secret.header
            ));
            return Err(Error::HttpRequestDenied);
        }
        let mut redactions = Vec::new();
        let mut placed: Vec<(HeaderName, HeaderValue)> = Vec::new();
        for (name, value) in request.headers() {
            let Some(secret) = self.secrets.placeholder_in(value.as_bytes()) else {
                continue;
            };
            let expected = format!("{}{}", secret.prefix, secret.placeholder);
            let reason = if *name != secret.header {
                Some(format!(
                    "the placeholder of secret `{}` is in the header `{name}`; it goes only in `{}`",
                    secret.name, secret.header
                ))
            } else if value.as_bytes() != expected.as_bytes() {
                Some(format!(
                    "the header `{name}` holds more than secret `{}` after {:?}",
                    secret.name, secret.prefix
                ))
            } else if !secret.may_go_to(scheme, host, port) {
                Some(format!(
                    "secret `{}` does not go to this origin",
                    secret.name
                ))
            } else {
                None
            };
            if let Some(reason) = reason {
                trail.deny(&reason);
                return Err(Error::HttpRequestDenied);
            }
            let mut filled =
                HeaderValue::from_str(&format!("{}{}", secret.prefix, secret.value.expose()))
                    .map_err(|_| {
                        Error::InternalError(Some("a secret is no header value".into()))
                    })?;
            filled.set_sensitive(true);
            placed.push((name.clone(), filled));
            redactions.push(Redaction {
                value: secret.value.expose().as_bytes().to_vec(),
                placeholder: secret.placeholder.as_bytes().to_vec(),
            });
        }
        for (name, value) in placed {
            request.headers_mut().insert(name, value);
        }
        if !redactions.is_empty() {
            // The value is kept out of the response by finding it there; an
            // encoded (compressed) response would carry it past the search.
            request
                .headers_mut()
                .insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        }
        Ok(redactions)
    }
}

/// The call's limits, with each timeout the component asked for cut to them.
fn clamp(limits: NetworkLimits, options: Option<RequestOptions>) -> NetworkLimits {
    let Some(options) = options else {
        return limits;
    };
    let cut =
        |asked: Option<std::time::Duration>, limit| asked.map_or(limit, |asked| asked.min(limit));
    NetworkLimits {
        connect_timeout: cut(options.connect_timeout, limits.connect_timeout),
        first_byte_timeout: cut(options.first_byte_timeout, limits.first_byte_timeout),
        between_bytes_timeout: cut(options.between_bytes_timeout, limits.between_bytes_timeout),
        ..limits
    }
}

/// The headers a component may not set: wasi:http's own list, but for
/// `Host`, which the host checks against the request's host instead.
fn forbidden(name: &HeaderName) -> bool {
    *name != HOST && DEFAULT_FORBIDDEN_HEADERS.contains(name)
}

impl WasiHttpHooks for HttpAccess {
    fn is_forbidden_header(&mut self, name: &HeaderName) -> bool {
        forbidden(name)
    }

    fn forbidden_header_filter(&mut self) -> ForbiddenHeaderFilter {
        Arc::new(forbidden)
    }

    fn set_host_header(&mut self) -> bool {
        false
    }

    fn send_request(
        &mut self,
        mut request: Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Result<sender::Sent, Error>> + Send> {
        drop(fut);
        let judged = self.judge(&mut request, options);
        let policy = Arc::clone(&self.policy);
        let secrets = Arc::clone(&self.secrets);
        let concurrent = self.limits.concurrent.max(1) as usize;
        let slots = Arc::clone(
            self.slots
                .get_or_insert_with(|| Arc::new(Semaphore::new(concurrent))),
        );
        Box::new(async move {
            let judged = judged?;
            let slot = slots
                .acquire_owned()
                .await
                .map_err(|_| Error::ConnectionLimitReached)?;
            let (parts, body) = request.into_parts();
            // The body is read whole, within its limit, before anything is
            // sent: a placeholder in it or a body too large refuses the
            // request before it leaves.
            let body = Outgoing::new(
                body,
                judged.limits.request_bytes,
                secrets,
                judged.trail.clone(),
            )
            .collect()
            .await?
            .to_bytes();
            let body = Full::new(body)
                .map_err(|never| match never {})
                .boxed_unsync();
            sender::send(
                Request::from_parts(parts, body),
                judged.target,
                policy,
                judged.limits,
                judged.redactions,
                judged.trail,
                slot,
            )
            .await
        })
    }
}
