//! The guard's `[config]` table and its defaults: which arguments hold paths and
//! commands, which commands are refused or need a person's approval, and which
//! tools are refused or need approval by name. A list the operator sets
//! replaces its default entirely.

use serde::Deserialize;

/// Block devices, by the prefixes of their `/dev` names; writing to them
/// destroys file systems, while `/dev/null`, `/dev/zero` and the like are harmless.
macro_rules! block_device {
    () => {
        r"/dev/(?:[shv]d|xvd|nvme|mmcblk|disk|mapper/|md|dm-|loop|sr|mem|kmem|port)"
    };
}

/// Argument names whose string values are paths.
const PATH_ARGS: &[&str] = &[
    "path",
    "file",
    "dir",
    "cwd",
    "target",
    "source",
    "destination",
    "from",
    "to",
];

/// Argument names whose string values are shell commands.
const COMMAND_ARGS: &[&str] = &["command", "cmd", "script"];

/// Commands no one should run from an agent: they destroy the machine, its
/// disks or its availability rather than the workspace.
const DENY_COMMANDS: &[(&str, &str)] = &[
    // `rm` of `/`, `/*`, `~`, `~/*` or `$HOME`, whatever the flags.
    (
        "deletes the root or home folder",
        r#"(?m)(?-u:\b)rm\s+(?:[^;&|\n]*\s)?["']?(?:/|~|\$HOME|\$\{HOME\})/?\*?["']?(?:$|[\s;&|)])"#,
    ),
    (
        "formats a filesystem",
        r"(?-u:\b)mkfs(?:\.[a-z0-9]+)?(?-u:\b)",
    ),
    (
        "writes raw bytes over a disk",
        concat!(r#"(?-u:\b)dd\s[^;&|\n]*(?-u:\b)of=["']?"#, block_device!()),
    ),
    // The fork bomb `:(){ :|:& };:`, under any function name.
    (
        "is a fork bomb",
        r"[\w:]+\s*\(\s*\)\s*\{\s*[\w:]+\s*\|\s*[\w:]+\s*&\s*\}",
    ),
    (
        "redirects output over a disk",
        concat!(r#">\s*["']?"#, block_device!()),
    ),
    (
        "changes the owner or permissions of the whole filesystem",
        r#"(?m)(?-u:\b)ch(?:mod|own)\s(?:[^;&|\n]*\s)?-(?:[a-zA-Z]*R[a-zA-Z]*|-recursive)\s(?:[^;&|\n]*\s)?["']?/\*?["']?(?:$|[\s;&|)])"#,
    ),
    // Only in command position, so that `git commit -m "fix reboot"` passes.
    (
        "shuts down or restarts the machine",
        r"(?m)(?:^|[;&|(]|(?-u:\b)(?:sudo|doas|exec|systemctl))\s*(?:/[\w/]*/)?(?:shutdown|reboot|halt|poweroff)(?:$|[\s;&|)])",
    ),
];

/// Commands that may be right but cannot be undone, or run code or privileges
/// the agent was not given: a person should look first.
const ASK_COMMANDS: &[(&str, &str)] = &[
    (
        "deletes recursively",
        r"(?m)(?-u:\b)rm\s+(?:[^;&|\n]*\s)?-(?:[a-zA-Z]*[rR][a-zA-Z]*|-recursive)(?:$|\s)",
    ),
    (
        "force-pushes, rewriting the remote's history",
        r"(?m)(?-u:\b)git\s(?:[^;&|\n]*\s)?push\s(?:[^;&|\n]*\s)?(?:--force(?:-with-lease)?|-[a-zA-Z]*f[a-zA-Z]*)(?:$|[\s=])",
    ),
    (
        "discards uncommitted work (git reset --hard)",
        r"(?m)(?-u:\b)git\s(?:[^;&|\n]*\s)?reset\s(?:[^;&|\n]*\s)?--hard(?:$|\s)",
    ),
    (
        "drops a table, database or schema",
        r"(?i)(?-u:\b)drop\s+(?:table|database|schema)(?-u:\b)",
    ),
    (
        "runs a script fetched from the network",
        r"(?m)(?-u:\b)(?:curl|wget)\s[^;&\n]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|da|z|k|fi)?sh(?:$|[\s;&|)])",
    ),
    ("runs with root privileges (sudo)", r"(?-u:\b)sudo(?-u:\b)"),
];

/// A command pattern: a regular expression, and what a command it matches
/// does, in words a person deciding reads. A pattern written as a bare
/// string is shown as itself.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub(crate) enum CommandPattern {
    /// A regular expression alone.
    Bare(String),
    /// A regular expression and what it catches.
    Labelled {
        /// What a matching command does, such as `deletes recursively`.
        label: String,
        /// The regular expression.
        pattern: String,
    },
}

impl CommandPattern {
    /// The regular expression.
    pub(crate) fn pattern(&self) -> &str {
        match self {
            Self::Bare(pattern) | Self::Labelled { pattern, .. } => pattern,
        }
    }
}

/// The `[config]` table. Unknown keys are an error, so that a misspelt list
/// fails closed instead of silently leaving its default in place.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) struct Config {
    /// Argument names holding paths that must stay inside the workspace.
    pub path_args: Vec<String>,
    /// Argument names holding shell commands.
    pub command_args: Vec<String>,
    /// Commands to refuse.
    pub deny_commands: Vec<CommandPattern>,
    /// Commands a person must approve.
    pub ask_commands: Vec<CommandPattern>,
    /// Tool-name globs (`*` matches any run of characters) to refuse.
    pub deny_tools: Vec<String>,
    /// Tool-name globs a person must approve.
    pub ask_tools: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        let owned = |list: &[&str]| list.iter().map(|item| (*item).to_owned()).collect();
        let labelled = |list: &[(&str, &str)]| {
            list.iter()
                .map(|(label, pattern)| CommandPattern::Labelled {
                    label: (*label).to_owned(),
                    pattern: (*pattern).to_owned(),
                })
                .collect()
        };
        Self {
            path_args: owned(PATH_ARGS),
            command_args: owned(COMMAND_ARGS),
            deny_commands: labelled(DENY_COMMANDS),
            ask_commands: labelled(ASK_COMMANDS),
            deny_tools: Vec::new(),
            ask_tools: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Config;

    #[test]
    fn an_empty_table_is_the_defaults() {
        let config: Config = serde_json::from_str("{}").expect("defaults load");
        assert_eq!(config, Config::default());
        assert!(config.path_args.iter().any(|name| name == "destination"));
    }

    #[test]
    fn a_set_list_replaces_only_its_default() {
        let config: Config =
            serde_json::from_str(r#"{ "ask-tools": ["shell.*"] }"#).expect("config loads");
        assert_eq!(config.ask_tools, ["shell.*"]);
        assert_eq!(config.deny_commands, Config::default().deny_commands);
    }

    #[test]
    fn a_pattern_is_a_string_or_a_labelled_table() {
        let config: Config = serde_json::from_str(
            r#"{ "ask-commands": ["npm publish", { "label": "publishes a crate", "pattern": "cargo publish" }] }"#,
        )
        .expect("config loads");
        assert_eq!(config.ask_commands[0].pattern(), "npm publish");
        assert_eq!(config.ask_commands[1].pattern(), "cargo publish");
        assert!(
            serde_json::from_str::<Config>(r#"{ "ask-commands": [{ "label": "x" }] }"#).is_err(),
            "a label without a pattern"
        );
    }

    #[test]
    fn unknown_keys_are_errors() {
        assert!(serde_json::from_str::<Config>(r#"{ "deny-command": [] }"#).is_err());
    }
}
