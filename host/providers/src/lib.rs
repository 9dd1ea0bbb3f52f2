//! Model providers: implementations of the kernel's [`ModelProvider`] port, and
//! [`resolve`], which turns a model spec such as `scripted:demo.toml` into one.

mod scripted;

use std::path::Path;
use std::sync::Arc;

use cordon_kernel::ModelProvider;

pub use scripted::{ScriptError, ScriptedModel};

/// Why a model spec could not be turned into a provider.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The spec names no provider this build knows.
    #[error("unknown model {0:?}: use scripted:FILE")]
    Unknown(String),
    /// The scripted model's file is unusable.
    #[error(transparent)]
    Script(#[from] ScriptError),
}

/// The provider a spec names. Relative script paths resolve against `base`.
pub fn resolve(spec: &str, base: &Path) -> Result<Arc<dyn ModelProvider>, ResolveError> {
    match spec.split_once(':') {
        Some(("scripted", file)) if !file.is_empty() => {
            Ok(Arc::new(ScriptedModel::load(&base.join(file))?))
        }
        _ => Err(ResolveError::Unknown(spec.to_owned())),
    }
}
