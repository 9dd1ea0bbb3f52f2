//! A component's `log` and `progress` calls, relayed to the client whose
//! request made the call: progress as `notifications/progress` when the
//! request carries a progress token, log lines as `notifications/message`
//! when the request (2026-07-28) or the session (`logging/setLevel`) asked
//! for them at their level or above. Requests run at once, each as the
//! watcher of its own calls ([`cordon_kernel::watching`]), so the [`Relay`]
//! (the host's one live sink) hands each event to the request whose call
//! emitted it; events of no request reach the server's own log only. Each
//! request's events keep the order they arrive in, and its answer leaves
//! only after them.

#![allow(deprecated)] // Logging notifications are deprecated in 2026-07-28, not gone.

use std::future::Future;
use std::sync::Arc;

use cordon_kernel::{Event, EventSink, LogLevel, watching};
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::{mpsc, oneshot};

/// Where a request's notifications go.
pub struct Audience {
    /// The client.
    pub peer: Peer<RoleServer>,
    /// The request's progress token, when it asked for progress.
    pub progress: Option<ProgressToken>,
    /// The lowest level of log line it asked for, when it asked.
    pub log_level: Option<LoggingLevel>,
}

/// The host's live event sink: each component's progress and log lines go
/// to the request watching the call that emitted them.
#[derive(Default)]
pub struct Relay;

impl EventSink for Relay {
    fn emit(&self, event: Event) {
        match &event {
            Event::Log { .. } | Event::Progress { .. } => {}
            _ => return,
        }
        if let Some(watcher) = watching::watcher() {
            watcher.emit(event);
        }
    }
}

/// One request's watcher: the queue its notifications wait in.
struct Watcher(mpsc::UnboundedSender<Event>);

impl EventSink for Watcher {
    fn emit(&self, event: Event) {
        // Refused only once the request has ended and its answer is sent.
        let _ = self.0.send(event);
    }
}

/// Run `request`, relaying the events of its calls to `audience`, and
/// return once every notification it queued is sent. A request that asked
/// for neither progress nor log lines is sent nothing, and nothing waits to
/// send it.
pub async fn relayed<F: Future>(audience: Audience, request: F) -> F::Output {
    if audience.progress.is_none() && audience.log_level.is_none() {
        return request.await;
    }
    let (sender, receiver) = mpsc::unbounded_channel();
    let (done, ended) = oneshot::channel();
    let forwarder = tokio::spawn(forward(receiver, ended, audience));
    let output = watching::watched(Arc::new(Watcher(sender)), request).await;
    let _ = done.send(());
    let _ = forwarder.await;
    output
}

/// Send what arrives on `events` to `audience` until the request `ended`,
/// then what it queued before that.
async fn forward(
    mut events: mpsc::UnboundedReceiver<Event>,
    mut ended: oneshot::Receiver<()>,
    audience: Audience,
) {
    loop {
        tokio::select! {
            biased;
            _ = &mut ended => break,
            event = events.recv() => match event {
                Some(event) => deliver(event, &audience).await,
                None => return,
            },
        }
    }
    // Work of the request still running elsewhere may hold its watcher;
    // what it sends from now on reaches nobody.
    events.close();
    while let Some(event) = events.recv().await {
        deliver(event, &audience).await;
    }
}

/// Send `event` to `audience` if it asked for its kind and level.
async fn deliver(event: Event, audience: &Audience) {
    let sent = match event {
        Event::Progress {
            done,
            total,
            message,
            ..
        } => {
            let Some(token) = audience.progress.clone() else {
                return;
            };
            #[allow(clippy::cast_precision_loss)] // progress counts are far below 2^52
            let mut params = ProgressNotificationParam::new(token, done as f64);
            if let Some(total) = total {
                #[allow(clippy::cast_precision_loss)]
                {
                    params = params.with_total(total as f64);
                }
            }
            if !message.is_empty() {
                params = params.with_message(message);
            }
            audience.peer.notify_progress(params).await
        }
        Event::Log {
            bundle,
            level,
            message,
        } => {
            let level = mcp_level(level);
            let Some(wanted) = audience.log_level else {
                return;
            };
            if rank(level) < rank(wanted) {
                return;
            }
            let params =
                LoggingMessageNotificationParam::new(level, serde_json::Value::String(message))
                    .with_logger(bundle);
            audience.peer.notify_logging_message(params).await
        }
        _ => return,
    };
    if let Err(error) = sent {
        tracing::debug!(%error, "a notification did not reach the client");
    }
}

/// A component's level as MCP names it.
fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Trace | LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warn => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}

/// MCP's levels in order of severity.
pub fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
