//! Workspace paths as the host accepts them: the one rule the sandbox kit
//! applies too ([`cordon_paths`]). Everything a model or a backend hands the
//! host passes through [`normalize`] first; the built-in tools also take the
//! folders of active skills, mounted read-only ([`resolve_mounted`]).

pub use cordon_paths::{
    PACKAGES_ROOT, PathError, RESERVED, SKILLS_ROOT, is_malformed, is_under, mount_of, normalize,
    package_mount_of, resolve_mounted,
};
