//! The `{{name}}` hook: denies every tool call whose arguments mention a word
//! the manifest's `[config] blocked` list names. A hook can deny, ask a
//! person, rewrite the arguments or allow; it can never turn a deny into an
//! allow.

use cordon_sdk::hooks::{BeforeToolCall, ToolCall, Verdict};

/// The `[config]` table.
#[derive(serde::Deserialize)]
struct Config {
    /// Words that make a call be denied, matched case-insensitively.
    #[serde(default)]
    blocked: Vec<String>,
}

struct Blocklist;

impl BeforeToolCall for Blocklist {
    fn before_tool_call(call: ToolCall) -> Verdict {
        let config: Config = match cordon_sdk::config::get() {
            Ok(config) => config,
            Err(error) => return Verdict::Deny(format!("{{name}} is misconfigured: {error}")),
        };
        let args = call.args.to_string().to_lowercase();
        match config
            .blocked
            .iter()
            .find(|word| args.contains(&word.to_lowercase()))
        {
            Some(word) => Verdict::Deny(format!("the arguments of {} mention `{word}`", call.name)),
            None => Verdict::Allow,
        }
    }
}

cordon_sdk::export_before_tool_call!(Blocklist);
