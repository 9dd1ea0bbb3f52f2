//! What whoever asked for a step's calls (the loop, an MCP client, an
//! embedder) gives them besides the calls: a way to stop them, and someone
//! their tools may ask.

use std::sync::Arc;

use crate::ask::Asker;
use crate::cancel::Cancellation;

/// The requester of a step's calls, as the calls see it.
#[derive(Clone, Default)]
pub struct Requester {
    /// Set when the requester cancels the calls.
    pub cancel: Cancellation,
    /// Whom the calls' questions reach; `None` when nobody can be asked.
    pub asker: Option<Arc<dyn Asker>>,
}
