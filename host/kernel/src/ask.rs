//! Questions a tool asks the person on whose behalf its call runs, such as
//! an MCP client's user: a message and a form. Whoever asked for the step's
//! calls decides how a question is answered ([`Asker`]): at once, by asking
//! the person during the call; later, when the requester asks between
//! requests and sends the same request again with the answers, so the step
//! is withdrawn rather than committed ([`Unasked::Deferred`]); or not at all,
//! saying why ([`Unasked::Unable`]). Calls the loop makes for a model have
//! nobody to ask.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One question a tool asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// Names the question within the call, so a call run again with the
    /// answers gets the same answer for it.
    pub key: String,
    /// What the person is told.
    pub message: String,
    /// The form's JSON object schema.
    pub schema: Value,
}

/// What the person did with the form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// They filled it in: the form's fields.
    Accept(Value),
    /// They said no.
    Decline,
    /// They dismissed it without answering.
    Cancel,
}

/// Why a question got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unasked {
    /// Nobody can be asked; the reason, for the tool.
    Unable(String),
    /// The requester asks the person and sends the same request again with
    /// the answer: the call stops here, and its step commits nothing.
    Deferred,
}

/// The future an [`Asker`] returns.
pub type AskFuture<'a> = Pin<Box<dyn Future<Output = Result<Answer, Unasked>> + Send + 'a>>;

/// The port through which a call's questions reach a person.
pub trait Asker: Send + Sync {
    /// Ask `question` on behalf of a call of `tool`.
    fn ask<'a>(&'a self, tool: &'a str, question: &'a Question) -> AskFuture<'a>;
}

/// A question that was deferred, and the tool that asked it.
#[derive(Debug, Clone, PartialEq)]
pub struct Deferred {
    /// The tool that asked.
    pub tool: String,
    /// What it asked.
    pub question: Question,
}

/// An [`Asker`] that remembers which questions its requester deferred, so
/// the step that asked them is withdrawn instead of committed.
pub(crate) struct Recording {
    inner: Arc<dyn Asker>,
    deferred: Mutex<Vec<Deferred>>,
}

impl Recording {
    pub(crate) fn new(inner: Arc<dyn Asker>) -> Self {
        Self {
            inner,
            deferred: Mutex::default(),
        }
    }

    /// The questions deferred so far, in the order they were asked.
    pub(crate) fn take_deferred(&self) -> Vec<Deferred> {
        std::mem::take(&mut self.deferred.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Asker for Recording {
    fn ask<'a>(&'a self, tool: &'a str, question: &'a Question) -> AskFuture<'a> {
        Box::pin(async move {
            let answer = self.inner.ask(tool, question).await;
            if matches!(answer, Err(Unasked::Deferred)) {
                self.deferred
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Deferred {
                        tool: tool.to_owned(),
                        question: question.clone(),
                    });
            }
            answer
        })
    }
}
