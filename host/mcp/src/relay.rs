//! A component's `log` and `progress` calls, relayed to the client whose
//! request is running: progress as `notifications/progress` when the request
//! carries a progress token, log lines as `notifications/message` when the
//! request (2026-07-28) or the session (`logging/setLevel`) asked for them at
//! their level or above. Requests take their turn (a served run commits one
//! step at a time), so one slot names the running request; events arriving
//! with no request running reach the server's own log only. The relay keeps
//! the order events arrive in, and the answer leaves only after them.

#![allow(deprecated)] // Logging notifications are deprecated in 2026-07-28, not gone.

use std::sync::Mutex;

use cordon_kernel::{Event, EventSink, LogLevel};
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Where the running request's notifications go.
pub struct Audience {
    /// The client.
    pub peer: Peer<RoleServer>,
    /// The request's progress token, when it asked for progress.
    pub progress: Option<ProgressToken>,
    /// The lowest level of log line it asked for, when it asked.
    pub log_level: Option<LoggingLevel>,
}

/// The live event sink of a served run.
#[derive(Default)]
pub struct Relay {
    current: Mutex<Option<mpsc::UnboundedSender<Event>>>,
}

impl Relay {
    /// Relay the events of the request now running to `audience`, until the
    /// returned handle is finished. A request that asked for neither
    /// progress nor log lines is sent nothing, and nothing waits to send it.
    pub fn open(&self, audience: Audience) -> Relaying<'_> {
        if audience.progress.is_none() && audience.log_level.is_none() {
            self.lock().take();
            return Relaying {
                relay: self,
                forwarder: None,
            };
        }
        let (sender, receiver) = mpsc::unbounded_channel();
        *self.lock() = Some(sender);
        Relaying {
            relay: self,
            forwarder: Some(tokio::spawn(forward(receiver, audience))),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<mpsc::UnboundedSender<Event>>> {
        self.current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl EventSink for Relay {
    fn emit(&self, event: Event) {
        match &event {
            Event::Log { .. } | Event::Progress { .. } => {}
            _ => return,
        }
        if let Some(sender) = self.lock().as_ref() {
            let _ = sender.send(event);
        }
    }
}

/// One request's relaying; [`Relaying::finish`] delivers what is queued.
pub struct Relaying<'a> {
    relay: &'a Relay,
    forwarder: Option<JoinHandle<()>>,
}

impl Relaying<'_> {
    /// Stop relaying and wait until every queued notification is sent.
    pub async fn finish(mut self) {
        self.relay.lock().take();
        if let Some(forwarder) = self.forwarder.take() {
            let _ = forwarder.await;
        }
    }
}

impl Drop for Relaying<'_> {
    fn drop(&mut self) {
        self.relay.lock().take();
    }
}

async fn forward(mut events: mpsc::UnboundedReceiver<Event>, audience: Audience) {
    while let Some(event) = events.recv().await {
        let sent = match event {
            Event::Progress {
                done,
                total,
                message,
                ..
            } => {
                let Some(token) = audience.progress.clone() else {
                    continue;
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
                    continue;
                };
                if rank(level) < rank(wanted) {
                    continue;
                }
                let params =
                    LoggingMessageNotificationParam::new(level, serde_json::Value::String(message))
                        .with_logger(bundle);
                audience.peer.notify_logging_message(params).await
            }
            _ => continue,
        };
        if let Err(error) = sent {
            tracing::debug!(%error, "a notification did not reach the client");
        }
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
