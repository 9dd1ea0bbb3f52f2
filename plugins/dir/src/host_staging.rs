//! The host's staging layer, imported through WIT, as the kit's [`Staging`].

use crate::cordon::plugin::staging as wit;
use cordon_sandbox_kit::{Error, Result, Staged, Staging};

/// The `staging` import.
pub(crate) struct HostStaging;

/// A WIT staged entry as the kit's.
fn from_wit(entry: wit::Staged) -> Staged {
    match entry {
        wit::Staged::File(data) => Staged::File(data),
        wit::Staged::Directory => Staged::Directory,
        wit::Staged::Removed => Staged::Removed,
    }
}

impl Staging for HostStaging {
    fn get(&self, path: &str) -> Result<Option<Staged>> {
        wit::get(path)
            .map(|entry| entry.map(from_wit))
            .map_err(Error::Denied)
    }

    fn put(&self, path: &str, entry: Staged) -> Result<()> {
        let entry = match entry {
            Staged::File(data) => wit::Staged::File(data),
            Staged::Directory => wit::Staged::Directory,
            Staged::Removed => wit::Staged::Removed,
        };
        wit::put(path, &entry).map_err(Error::Denied)
    }

    fn under(&self, prefix: &str) -> Vec<(String, Staged)> {
        wit::under(prefix)
            .into_iter()
            .map(|(path, entry)| (path, from_wit(entry)))
            .collect()
    }
}
