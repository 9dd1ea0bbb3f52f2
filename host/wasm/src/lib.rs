//! Cordon's WebAssembly host.
//!
//! Tools are WASI 0.2 components built against `wit/`. This crate loads them from
//! bundle folders ([`manifest`], [`PluginHost`]), links WASI (and `wasi:http`)
//! with nothing granted plus Cordon's own `state`, `log` and `tools` imports, and
//! runs every call in a fresh instance with the bundle's limits. Only what the manifest declares is
//! reachable; every refusal is a typed error and an audit event.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::{path::Path, sync::Arc};
//! use cordon_kernel::{EventLog, MemoryStateStore, call_committed};
//! use cordon_wasm::{HostConfig, PluginHost};
//!
//! let host = PluginHost::new(HostConfig::default())?;
//! let report = host.load_dir(Path::new("plugins"), Path::new(".")).await?;
//! assert!(report.errors.is_empty());
//! let plugins = host
//!     .plugins(report.bundles, Arc::new(EventLog::new()))
//!     .map_err(|errors| errors[0].to_string())?;
//! let state = Arc::new(MemoryStateStore::new());
//! let args = serde_json::json!({"filter": ".a", "input": {"a": 1}});
//! let output = call_committed(&plugins, state, "jq.query", args).await?;
//! # Ok(()) }
//! ```

mod admission;
mod approvals;
mod audit;
mod bindings;
mod bundle;
mod bundled;
mod cache;
mod call;
mod capabilities;
mod engine;
mod errors;
mod footprint;
mod guarded;
mod hooks;
pub mod limits;
pub mod manifest;
mod pin;
mod plugins;
mod profile;
mod progress;
mod safeguards;
mod sandbox;
mod state_keys;
mod teardown;
pub mod workspace;

pub use approvals::{
    Admission, Admitted, Approval, Approvals, ApprovalsError, Baseline, GRANTS_FILE, Presented,
    Unapproved,
};
pub use bundle::{Bundle, BundleError, LoadedBundle, Request};
pub use bundled::{BundledPlugins, Provenance, Shipped};
pub use cache::{CacheConfig, CacheKey, CacheKeyError, CacheOutcome, Discarded};
pub use capabilities::dirs::ResolvedDir;
pub use capabilities::network::address::{AddressPolicy, Blocked};
pub use capabilities::network::grant::Allowlist;
pub use capabilities::network::origin::{Host, Origin, Scheme};
pub use capabilities::network::policy::NetworkPolicy;
pub use capabilities::network::resolve::{Lookup, Resolve, Resolver, SystemResolver};
pub use capabilities::network::secrets::{
    SECRET_ENV_PREFIX, SecretUse, SecretValue, SecretValues, env_name,
};
pub use engine::{EngineError, HostConfig};
pub use footprint::{Footprint, Unsized};
pub use limits::{Limits, NetworkLimits, StagingLimits};
pub use manifest::{
    BuildRecipe, BundleKind, DirGrant, DirMode, Grants, Manifest, ManifestError, StagingPolicy,
    StateDeclaration, StateGrants,
};
pub use pin::Pinned;
pub use plugins::{DirReport, PluginHost, Plugins, Pool};
pub use profile::UntrustedProfile;
pub use progress::LoadProgress;
pub use safeguards::{Distrust, Holds, ReadOnly, Reserved, Safeguards, Trust, TrustError};
pub use workspace::{Workspace, WorkspaceError, WorkspaceOptions, WriteMode};
