//! Whose state a stored key belongs to: one run (run-scoped state) or one
//! thread (thread-scoped state, shared by the thread's runs). Both durable
//! stores keep the two in tables of the same shape and name a key that does
//! not decode the same way.

/// The owner of a state row.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Owner<'a> {
    /// A run's own state.
    Run(&'a str),
    /// A thread's state.
    Thread(&'a str),
}

impl Owner<'_> {
    /// The run id or thread name the rows are keyed by.
    pub(crate) fn id(&self) -> &str {
        match self {
            Self::Run(id) | Self::Thread(id) => id,
        }
    }

    /// `key` of this owner, as messages name it.
    pub(crate) fn describe(&self, key: &str) -> String {
        match self {
            Self::Run(id) => format!("run {id} state key `{key}`"),
            Self::Thread(id) => format!("thread {id} state key `{key}`"),
        }
    }
}
