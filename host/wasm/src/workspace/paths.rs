//! Workspace paths as the host accepts them: the one rule the sandbox kit
//! applies too ([`cordon_paths`]). Everything a model or a backend hands the
//! host passes through [`normalize`] first.

pub use cordon_paths::{PathError, RESERVED, is_malformed, is_under, normalize};
