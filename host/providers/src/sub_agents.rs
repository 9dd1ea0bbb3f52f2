//! The models sub-agents name: each spec in a sub-agent's file or its
//! `[agents.NAME]` table is resolved as the root agent's is ([`resolve`]),
//! against the sub-agent's own folder and sampling settings.

use std::path::Path;
use std::sync::Arc;

use cordon_kernel::{ModelProvider, ModelResolver, ModelSettings};

use crate::{ModelOptions, resolve};

/// Resolves sub-agents' model specs as the command line resolves the root's.
#[derive(Debug, Default, Clone, Copy)]
pub struct SpecResolver;

impl ModelResolver for SpecResolver {
    fn resolve(
        &self,
        spec: &str,
        settings: &ModelSettings,
        dir: &Path,
    ) -> Result<Arc<dyn ModelProvider>, String> {
        let options = ModelOptions {
            base_url: settings.base_url.clone(),
            temperature: settings.temperature,
            max_tokens: settings.max_tokens,
            images: settings.images,
            ..ModelOptions::default()
        };
        resolve(spec, dir, &options).map_err(|error| error.to_string())
    }
}
