//! The bodies of a component's requests and responses: a request body is
//! read whole before anything is sent, bounded, and refused if it carries a
//! secret's placeholder; a response body is bounded, cut when the server
//! goes quiet for too long, and has every injected secret's value replaced
//! by its placeholder before the component reads it.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use cordon_kernel::{Capability, LimitKind};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Sleep;
use wasmtime_wasi_http::{Error, WasiBody};

use super::secrets::CallSecrets;
use crate::audit::Audit;

/// Who a body belongs to, for the trail.
#[derive(Clone)]
pub(crate) struct Trail {
    pub(crate) audit: Audit,
    /// The tool called.
    pub(crate) label: String,
    /// The origin the request goes to.
    pub(crate) target: String,
}

impl Trail {
    pub(crate) fn deny(&self, reason: &str) {
        self.audit.deny(Capability::Network, &self.target, reason);
    }

    pub(crate) fn exceeded(&self, detail: String) {
        let _ = self.audit.exceeded(
            &self.label,
            LimitKind::Network,
            format!("{}: {detail}", self.target),
        );
    }
}

/// A request body on its way out.
pub(crate) struct Outgoing {
    inner: WasiBody,
    sent: u64,
    limit: u64,
    secrets: Arc<CallSecrets>,
    /// The end of what was sent, where a placeholder split across two
    /// writes begins.
    tail: Vec<u8>,
    trail: Trail,
}

impl Outgoing {
    pub(crate) fn new(
        inner: WasiBody,
        limit: u64,
        secrets: Arc<CallSecrets>,
        trail: Trail,
    ) -> Self {
        Self {
            inner,
            sent: 0,
            limit,
            secrets,
            tail: Vec::new(),
            trail,
        }
    }

    fn check_data(&mut self, data: &Bytes) -> Result<(), Error> {
        self.sent += data.len() as u64;
        if self.sent > self.limit {
            self.trail.exceeded(format!(
                "the request body is larger than the limit of {} bytes",
                self.limit
            ));
            return Err(Error::HttpRequestBodySize(Some(self.sent)));
        }
        if self.secrets.is_empty() {
            return Ok(());
        }
        let mut window = std::mem::take(&mut self.tail);
        window.extend_from_slice(data);
        if let Some(secret) = self.secrets.placeholder_in(&window) {
            self.trail.deny(&format!(
                "the placeholder of secret `{}` is in the request body; it goes only in its `{}` header",
                secret.name, secret.header
            ));
            return Err(Error::HttpRequestDenied);
        }
        let keep = self.secrets.longest_placeholder().saturating_sub(1);
        self.tail = window[window.len().saturating_sub(keep)..].to_vec();
        Ok(())
    }

    fn check_trailers(&self, trailers: &HeaderMap) -> Result<(), Error> {
        for (name, value) in trailers {
            if let Some(secret) = self.secrets.placeholder_in(value.as_bytes()) {
                self.trail.deny(&format!(
                    "the placeholder of secret `{}` is in the trailer `{name}`",
                    secret.name
                ));
                return Err(Error::HttpRequestDenied);
            }
        }
        Ok(())
    }
}

impl Body for Outgoing {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = self.get_mut();
        let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other,
        };
        let checked = if let Some(data) = frame.data_ref() {
            this.check_data(data)
        } else if let Some(trailers) = frame.trailers_ref() {
            this.check_trailers(trailers)
        } else {
            Ok(())
        };
        Poll::Ready(Some(checked.map(|()| frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A secret's value and the placeholder that stands for it in what the
/// component reads.
#[derive(Clone)]
pub(crate) struct Redaction {
    pub(crate) value: Vec<u8>,
    pub(crate) placeholder: Vec<u8>,
}

/// Replace every `redactions` value in `bytes` by its placeholder.
pub(crate) fn redact(bytes: &[u8], redactions: &[Redaction]) -> Option<Vec<u8>> {
    let mut current: Option<Vec<u8>> = None;
    for redaction in redactions {
        if redaction.value.is_empty() {
            continue;
        }
        let source = current.as_deref().unwrap_or(bytes);
        if memchr::memmem::find(source, &redaction.value).is_none() {
            continue;
        }
        let mut out = Vec::with_capacity(source.len());
        let mut rest = source;
        while let Some(at) = memchr::memmem::find(rest, &redaction.value) {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(&redaction.placeholder);
            rest = &rest[at + redaction.value.len()..];
        }
        out.extend_from_slice(rest);
        current = Some(out);
    }
    current
}

/// A response body on its way in.
pub(crate) struct Incoming {
    inner: hyper::body::Incoming,
    received: u64,
    limit: u64,
    between: Duration,
    quiet: Pin<Box<Sleep>>,
    redactions: Vec<Redaction>,
    /// What was received but not yet handed on: the end of it may be the
    /// start of a secret's value.
    held: BytesMut,
    ended: bool,
    trail: Trail,
    /// The request's place among the call's concurrent requests, given
    /// back when the body is done with.
    _slot: OwnedSemaphorePermit,
}

impl Incoming {
    pub(crate) fn new(
        inner: hyper::body::Incoming,
        limit: u64,
        between: Duration,
        redactions: Vec<Redaction>,
        trail: Trail,
        slot: OwnedSemaphorePermit,
    ) -> Self {
        Self {
            inner,
            received: 0,
            limit,
            between,
            quiet: Box::pin(tokio::time::sleep(between)),
            redactions,
            held: BytesMut::new(),
            ended: false,
            trail,
            _slot: slot,
        }
    }

    fn keep(&self) -> usize {
        self.redactions
            .iter()
            .map(|redaction| redaction.value.len())
            .max()
            .unwrap_or(0)
            .saturating_sub(1)
    }

    /// `data` received: checked against the limit, and what of it may be
    /// handed on.
    fn receive(&mut self, data: Bytes) -> Result<Option<Bytes>, Error> {
        self.received += data.len() as u64;
        if self.received > self.limit {
            self.trail.exceeded(format!(
                "the response body is larger than the limit of {} bytes",
                self.limit
            ));
            return Err(Error::HttpResponseBodySize(Some(self.limit)));
        }
        if self.redactions.is_empty() {
            return Ok(Some(data));
        }
        self.held.extend_from_slice(&data);
        if let Some(redacted) = redact(&self.held, &self.redactions) {
            self.held = BytesMut::from(&redacted[..]);
        }
        let ready = self.held.len().saturating_sub(self.keep());
        Ok((ready > 0).then(|| self.held.split_to(ready).freeze()))
    }
}

impl Body for Incoming {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = self.get_mut();
        loop {
            if this.ended {
                if this.held.is_empty() {
                    return Poll::Ready(None);
                }
                return Poll::Ready(Some(Ok(Frame::data(this.held.split().freeze()))));
            }
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(None) => this.ended = true,
                Poll::Ready(Some(Err(error))) => {
                    return Poll::Ready(Some(Err(if error.is_timeout() {
                        Error::HttpResponseTimeout
                    } else {
                        Error::from(error)
                    })));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    let deadline = tokio::time::Instant::now() + this.between;
                    this.quiet.as_mut().reset(deadline);
                    match frame.into_data() {
                        Ok(data) => match this.receive(data) {
                            Ok(Some(ready)) => return Poll::Ready(Some(Ok(Frame::data(ready)))),
                            Ok(None) => {}
                            Err(error) => return Poll::Ready(Some(Err(error))),
                        },
                        Err(frame) => {
                            let frame = match frame.into_trailers() {
                                Ok(mut trailers) => {
                                    redact_headers(&mut trailers, &this.redactions);
                                    Frame::trailers(trailers)
                                }
                                Err(frame) => frame,
                            };
                            return Poll::Ready(Some(Ok(frame)));
                        }
                    }
                }
                Poll::Pending => {
                    if this.quiet.as_mut().poll(cx).is_ready() {
                        this.trail.exceeded(format!(
                            "the server sent nothing for {} ms",
                            this.between.as_millis()
                        ));
                        return Poll::Ready(Some(Err(Error::ConnectionReadTimeout)));
                    }
                    return Poll::Pending;
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended && self.held.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        if self.redactions.is_empty() {
            self.inner.size_hint()
        } else {
            SizeHint::default()
        }
    }
}

/// Replace every `redactions` value in the values of `headers`.
pub(crate) fn redact_headers(headers: &mut HeaderMap, redactions: &[Redaction]) {
    if redactions.is_empty() {
        return;
    }
    for value in headers.values_mut() {
        if let Some(redacted) = redact(value.as_bytes(), redactions)
            && let Ok(replaced) = http::HeaderValue::from_bytes(&redacted)
        {
            *value = replaced;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_is_replaced_by_its_placeholder() {
        let redactions = [Redaction {
            value: b"s3cr3t".to_vec(),
            placeholder: b"PLACE".to_vec(),
        }];
        assert_eq!(
            redact(b"a s3cr3t b s3cr3t", &redactions).unwrap(),
            b"a PLACE b PLACE"
        );
        assert!(redact(b"nothing here", &redactions).is_none());
    }
}
