//! The transport the hosted providers share: one HTTP client with a connect
//! timeout, a POST whose answer is a server-sent-event stream, and the retry
//! loop around both. A response of 429 or 5xx, a connection that fails, and a
//! stream that breaks, stalls longer than the idle timeout or ends before it is
//! complete are all retried from the start of the request, up to the policy's
//! attempts. Everything else (other statuses, a provider error in the stream
//! that will not pass) fails at once with the status and the provider's own
//! message. Retrying is safe because nothing of a step commits before the whole
//! response is assembled.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cordon_kernel::{ModelDelta, ModelError, ModelResponse, Retry};
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use crate::retry::RetryPolicy;

/// An API key. It goes into one request header and nowhere else: its `Debug`
/// form is redacted and no error message includes it.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wrap `key`.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key as a header value after `prefix` (such as `Bearer `), marked
    /// sensitive so that the HTTP stack never logs it.
    pub(crate) fn header(&self, prefix: &str) -> Result<HeaderValue, ModelError> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", self.0))
            .map_err(|_| ModelError::Request("the API key is not a valid header value".into()))?;
        value.set_sensitive(true);
        Ok(value)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// What an assembly does after one event.
pub(crate) enum Flow {
    /// Keep reading.
    More,
    /// The response is complete.
    Done,
}

/// Why an assembly could not take an event.
pub(crate) enum StreamError {
    /// Something that may pass, such as an overloaded provider: try again.
    Retry(String),
    /// Something that will not: give up.
    Fatal(ModelError),
}

/// Builds one response from a provider's stream of events.
pub(crate) trait Assembly: Send {
    /// Take the event named `name` (empty for unnamed events) with `data`.
    fn event(
        &mut self,
        name: &str,
        data: &str,
        deltas: &(dyn Fn(ModelDelta) + Send + Sync),
    ) -> Result<Flow, StreamError>;

    /// Whether a stream that ends here, without its terminator, is complete.
    fn complete(&self) -> bool;

    /// The assembled response.
    fn finish(self) -> Result<ModelResponse, ModelError>;
}

/// One streamed POST.
pub(crate) struct Post<'a> {
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: &'a Value,
}

/// The HTTP client and its patience.
#[derive(Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    retry: RetryPolicy,
    idle: Duration,
}

/// Why one attempt failed.
enum Attempt {
    /// Try again, after the wait the response's headers ask for, if any.
    Retry(String, Option<HeaderMap>),
    /// Give up.
    Fatal(ModelError),
}

impl Transport {
    pub(crate) fn new(
        connect: Duration,
        idle: Duration,
        retry: RetryPolicy,
    ) -> Result<Self, ModelError> {
        let client = reqwest::Client::builder()
            .connect_timeout(connect)
            .build()
            .map_err(|error| {
                ModelError::Request(format!("cannot build an HTTP client: {error}"))
            })?;
        Ok(Self {
            client,
            retry,
            idle,
        })
    }

    /// POST `post` and assemble its stream with a fresh assembly per attempt.
    pub(crate) async fn stream<A: Assembly>(
        &self,
        post: &Post<'_>,
        fresh: impl Fn() -> A,
        deltas: &(dyn Fn(ModelDelta) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        let attempts = self.retry.attempts.max(1);
        let mut last = String::new();
        for attempt in 1..=attempts {
            let streamed = AtomicBool::new(false);
            let forward = |delta: ModelDelta| {
                streamed.store(true, Ordering::Relaxed);
                deltas(delta);
            };
            match self.attempt(post, fresh(), &forward).await {
                Ok(response) => return Ok(response),
                Err(Attempt::Fatal(error)) => return Err(error),
                Err(Attempt::Retry(reason, headers)) => {
                    if streamed.load(Ordering::Relaxed) {
                        deltas(ModelDelta::Restart);
                    }
                    if attempt < attempts {
                        let wait = self.retry.delay(attempt + 1, headers.as_ref());
                        deltas(ModelDelta::Retrying(Retry {
                            reason: reason.clone(),
                            attempt: attempt + 1,
                            attempts,
                            after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                        }));
                        tokio::time::sleep(wait).await;
                    }
                    last = reason;
                }
            }
        }
        Err(ModelError::Request(format!(
            "gave up after {attempts} attempt(s): {last}"
        )))
    }

    async fn attempt<A: Assembly>(
        &self,
        post: &Post<'_>,
        mut assembly: A,
        deltas: &(dyn Fn(ModelDelta) + Send + Sync),
    ) -> Result<ModelResponse, Attempt> {
        let sent = self
            .client
            .post(&post.url)
            .headers(post.headers.clone())
            .json(post.body)
            .send();
        let response = match tokio::time::timeout(self.idle, sent).await {
            Err(_) => {
                return Err(Attempt::Retry(
                    format!("no response within {} s", self.idle.as_secs()),
                    None,
                ));
            }
            Ok(Err(error)) => {
                return Err(Attempt::Retry(
                    format!("cannot reach {}: {}", post.url, without_url(&error)),
                    None,
                ));
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            let headers = response.headers().clone();
            let message = provider_message(response).await;
            return Err(Attempt::Retry(
                format!("HTTP {}: {message}", status.as_u16()),
                Some(headers),
            ));
        }
        if !status.is_success() {
            return Err(Attempt::Fatal(ModelError::Http {
                status: status.as_u16(),
                message: provider_message(response).await,
            }));
        }
        let mut events = response.bytes_stream().eventsource();
        loop {
            let next = match tokio::time::timeout(self.idle, events.next()).await {
                Err(_) => {
                    return Err(Attempt::Retry(
                        format!("the stream stalled for {} s", self.idle.as_secs()),
                        None,
                    ));
                }
                Ok(next) => next,
            };
            match next {
                None if assembly.complete() => break,
                None => {
                    return Err(Attempt::Retry(
                        "the stream ended before the response was complete".into(),
                        None,
                    ));
                }
                Some(Err(error)) => {
                    return Err(Attempt::Retry(format!("the stream broke: {error}"), None));
                }
                Some(Ok(event)) => match assembly.event(&event.event, &event.data, deltas) {
                    Ok(Flow::More) => {}
                    Ok(Flow::Done) => break,
                    Err(StreamError::Retry(reason)) => return Err(Attempt::Retry(reason, None)),
                    Err(StreamError::Fatal(error)) => return Err(Attempt::Fatal(error)),
                },
            }
        }
        assembly.finish().map_err(Attempt::Fatal)
    }
}

/// A client error without its URL's query, which could carry a key.
fn without_url(error: &reqwest::Error) -> String {
    let mut error_text = error.to_string();
    if let Some(url) = error.url() {
        error_text = error_text.replace(url.as_str(), url.path());
    }
    // The cause says what went wrong: `Connection refused`, a name that
    // does not resolve, a certificate refused.
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let said = cause.to_string();
        if !error_text.contains(&said) {
            error_text.push_str(&format!(": {said}"));
        }
        source = cause.source();
    }
    error_text
}

/// The provider's own explanation of an error response: `error.message` of a
/// JSON body, or the start of the body.
async fn provider_message(response: reqwest::Response) -> String {
    const MAX: usize = 500;
    let body = response.text().await.unwrap_or_default();
    let message = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|value| {
            let error = value.get("error")?;
            match error {
                Value::String(text) => Some(text.clone()),
                other => other.get("message")?.as_str().map(str::to_owned),
            }
        })
        .unwrap_or(body);
    let mut message = message.trim().to_owned();
    if message.len() > MAX {
        let mut end = MAX;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push_str("...");
    }
    if message.is_empty() {
        "no message".into()
    } else {
        message
    }
}
