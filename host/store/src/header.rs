//! A run's header as both stores keep it in its row: the metadata and the
//! parent link as JSON text, `NULL` for a run with no parent.

use cordon_kernel::{CommitError, RunHeader};

/// The JSON columns of `header`'s row.
pub(crate) struct HeaderColumns {
    pub(crate) metadata: String,
    pub(crate) parent: Option<String>,
}

impl HeaderColumns {
    /// The columns `header` is stored as.
    pub(crate) fn of(header: &RunHeader) -> Result<Self, CommitError> {
        let encoding = |what: &str, error: serde_json::Error| {
            CommitError::Storage(format!("encoding {what}: {error}"))
        };
        Ok(Self {
            metadata: serde_json::to_string(&header.metadata)
                .map_err(|error| encoding("run metadata", error))?,
            parent: header
                .parent
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(|error| encoding("a run's parent", error))?,
        })
    }
}
