//! The model of a run that names none: every provider a spec can name, for
//! the message that asks for one, and the default picked when a provider's
//! key is in the environment.

use crate::{ANTHROPIC_KEY_VAR, OPENAI_KEY_VAR};

/// The model picked when `ANTHROPIC_API_KEY` is set and nothing names one.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "anthropic:claude-sonnet-4-5";

/// The model picked when only `OPENAI_API_KEY` is set and nothing names one.
pub const DEFAULT_OPENAI_MODEL: &str = "openai:gpt-5-mini";

/// Every provider a model spec can name, one line each.
pub const PROVIDERS: &str = "  scripted:FILE     replies scripted in a TOML file, offline\n  \
     openai:MODEL      OpenAI (OPENAI_API_KEY), or any OpenAI-compatible endpoint with --base-url\n  \
     anthropic:MODEL   Anthropic (ANTHROPIC_API_KEY)";

/// A model picked because its provider's key is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Picked {
    /// The model spec.
    pub spec: &'static str,
    /// The environment variable whose presence picked it.
    pub because: &'static str,
}

/// The default model by the keys `env` has: Anthropic's when its key is
/// set, else OpenAI's when its key is, else none.
pub fn pick(env: impl Fn(&str) -> Option<String>) -> Option<Picked> {
    let set = |var: &str| env(var).is_some_and(|value| !value.is_empty());
    if set(ANTHROPIC_KEY_VAR) {
        Some(Picked {
            spec: DEFAULT_ANTHROPIC_MODEL,
            because: ANTHROPIC_KEY_VAR,
        })
    } else if set(OPENAI_KEY_VAR) {
        Some(Picked {
            spec: DEFAULT_OPENAI_MODEL,
            because: OPENAI_KEY_VAR,
        })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        move |name| {
            vars.iter()
                .find(|(known, _)| known == name)
                .map(|(_, value)| value.clone())
        }
    }

    #[test]
    fn a_set_key_picks_its_provider_anthropic_first() {
        assert_eq!(pick(with(&[])), None);
        assert_eq!(pick(with(&[(ANTHROPIC_KEY_VAR, "")])), None);
        let openai = pick(with(&[(OPENAI_KEY_VAR, "sk")])).unwrap();
        assert_eq!(openai.spec, DEFAULT_OPENAI_MODEL);
        let both = pick(with(&[(OPENAI_KEY_VAR, "sk"), (ANTHROPIC_KEY_VAR, "k")])).unwrap();
        assert_eq!(both.because, ANTHROPIC_KEY_VAR);
    }
}
