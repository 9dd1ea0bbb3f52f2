//! Model providers: implementations of the kernel's [`ModelProvider`] port, and
//! [`resolve`], which turns a model spec into one:
//!
//! | spec | provider | key |
//! |---|---|---|
//! | `scripted:FILE` | [`ScriptedModel`], offline turns from a TOML file | none |
//! | `openai:MODEL` | [`OpenAiModel`], any OpenAI-compatible chat completions endpoint | `OPENAI_API_KEY` (optional off api.openai.com) |
//! | `anthropic:MODEL` | [`AnthropicModel`], Anthropic's Messages API | `ANTHROPIC_API_KEY` |
//!
//! The hosted providers stream, retry with backoff on 429 and 5xx (honouring
//! `Retry-After`), retry a stream that breaks before the step commits, and time
//! out idle connections; see [`ModelOptions`]. [`SpecResolver`] resolves the
//! specs sub-agents name the same way.

mod anthropic;
pub mod choice;
mod http;
mod names;
mod openai;
mod prompt;
mod retry;
mod scripted;
mod sub_agents;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::{ModelError, ModelProvider};

pub use anthropic::{ANTHROPIC_BASE_URL, AnthropicModel};
pub use http::ApiKey;
pub use openai::{OPENAI_BASE_URL, OpenAiModel};
pub use retry::RetryPolicy;
pub use scripted::{ScriptError, ScriptedModel};
pub use sub_agents::SpecResolver;

/// The environment variable holding the OpenAI (or compatible) API key.
pub const OPENAI_KEY_VAR: &str = "OPENAI_API_KEY";
/// The environment variable holding the Anthropic API key.
pub const ANTHROPIC_KEY_VAR: &str = "ANTHROPIC_API_KEY";
/// The environment variable overriding the OpenAI-compatible base URL.
pub const OPENAI_BASE_URL_VAR: &str = "OPENAI_BASE_URL";
/// The environment variable overriding the Anthropic base URL.
pub const ANTHROPIC_BASE_URL_VAR: &str = "ANTHROPIC_BASE_URL";

/// How a hosted provider is reached and sampled.
#[derive(Debug, Clone)]
pub struct ModelOptions {
    /// The endpoint's base URL; the provider's public one when absent.
    pub base_url: Option<String>,
    /// Sampling temperature, when the agent sets one.
    pub temperature: Option<f64>,
    /// The most output tokens per step, when the agent sets it.
    pub max_tokens: Option<u32>,
    /// Whether the model is sent the images tool results carry, when the
    /// agent says; otherwise Anthropic models are, and OpenAI's own are
    /// while another OpenAI-compatible endpoint is not.
    pub images: Option<bool>,
    /// How long to wait for a connection.
    pub connect_timeout: Duration,
    /// How long a response may go without sending anything.
    pub idle_timeout: Duration,
    /// When to retry.
    pub retry: RetryPolicy,
}

impl ModelOptions {
    /// The base URL to use: the one given, or `default`, without a trailing `/`.
    pub(crate) fn base_url_or(&self, default: &str) -> String {
        self.base_url
            .as_deref()
            .unwrap_or(default)
            .trim_end_matches('/')
            .to_owned()
    }
}

impl Default for ModelOptions {
    fn default() -> Self {
        Self {
            base_url: None,
            temperature: None,
            max_tokens: None,
            images: None,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(90),
            retry: RetryPolicy::default(),
        }
    }
}

/// Why a model spec could not be turned into a provider.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The spec names no provider this build knows.
    #[error("unknown model {0:?}: use scripted:FILE, openai:MODEL or anthropic:MODEL")]
    Unknown(String),
    /// The scripted model's file is unusable.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// A hosted provider needs a key that is not set.
    #[error("{provider} needs an API key: set {var}")]
    MissingKey {
        /// The provider, such as `openai`.
        provider: &'static str,
        /// The environment variable that holds its key.
        var: &'static str,
    },

    /// The provider could not be set up.
    #[error(transparent)]
    Setup(#[from] ModelError),
}

/// The provider a spec names. Relative script paths resolve against `base`;
/// keys come from the environment, and a base URL from `options` or else the
/// environment.
pub fn resolve(
    spec: &str,
    base: &Path,
    options: &ModelOptions,
) -> Result<Arc<dyn ModelProvider>, ResolveError> {
    let env = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    match spec.split_once(':') {
        Some(("scripted", file)) if !file.is_empty() => {
            Ok(Arc::new(ScriptedModel::load(&base.join(file))?))
        }
        Some(("openai", model)) if !model.is_empty() => {
            let mut options = options.clone();
            options.base_url = options.base_url.or_else(|| env(OPENAI_BASE_URL_VAR));
            let key = env(OPENAI_KEY_VAR).map(ApiKey::new);
            let public = options
                .base_url
                .as_deref()
                .is_none_or(|url| url.starts_with(OPENAI_BASE_URL));
            if key.is_none() && public {
                return Err(ResolveError::MissingKey {
                    provider: "openai",
                    var: OPENAI_KEY_VAR,
                });
            }
            Ok(Arc::new(OpenAiModel::new(model, key, &options)?))
        }
        Some(("anthropic", model)) if !model.is_empty() => {
            let mut options = options.clone();
            options.base_url = options.base_url.or_else(|| env(ANTHROPIC_BASE_URL_VAR));
            let key = env(ANTHROPIC_KEY_VAR).ok_or(ResolveError::MissingKey {
                provider: "anthropic",
                var: ANTHROPIC_KEY_VAR,
            })?;
            Ok(Arc::new(AnthropicModel::new(
                model,
                ApiKey::new(key),
                &options,
            )?))
        }
        _ => Err(ResolveError::Unknown(spec.to_owned())),
    }
}
