//! Permission policy: which tool calls may run, which need a person's approval,
//! and which are refused.
//!
//! A policy is a default verdict plus rules. A rule names a tool, optionally with
//! a wildcard (`notes.*`), and optionally constrains arguments with globs
//! (`files.read(path=docs/**)`). Instead of a tool, a rule may name an effect
//! the tool declares, `@read-only`, `@destructive`, `@idempotent` or
//! `@open-world`, so `deny = ["@destructive"]` covers every tool that may
//! destroy data, whoever wrote it. Every rule that matches a call is considered
//! and the most restrictive verdict wins, deny over ask over allow, whatever
//! order the rules were written in; the default applies only when no rule
//! matches. Path-like argument values are normalized before matching, so
//! `docs/../secrets/key` is judged as `secrets/key`.

use std::fmt;
use std::path::Path;

use globset::{Glob, GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::file_rules::{FileRules, FileRulesTable};
use crate::tool::annotations::ToolAnnotations;

/// A person's answer to a pending call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Approval {
    /// Run it.
    Approve,
    /// Refuse it; the model sees a `denied` tool error.
    Deny,
    /// Refuse it, and tell the model why.
    DenyBecause(String),
}

/// What may happen to a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Wait for a person to approve or deny it.
    Ask,
    /// Refuse it; the model sees a `denied` tool error.
    Deny,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        })
    }
}

/// One rule: a verdict for calls that match a tool pattern and argument globs.
#[derive(Debug, Clone)]
pub struct Rule {
    verdict: Verdict,
    text: String,
    target: Target,
    args: Vec<(String, GlobMatcher)>,
}

/// Which tools a rule is about.
#[derive(Debug, Clone)]
enum Target {
    /// Tools whose names match a glob.
    Named(GlobMatcher),
    /// Tools that declare an effect.
    Declaring(Effect),
}

/// An effect a tool declares in its annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    ReadOnly,
    Destructive,
    Idempotent,
    OpenWorld,
}

impl Effect {
    fn parse(name: &str) -> Option<Self> {
        match name {
            "read-only" => Some(Self::ReadOnly),
            "destructive" => Some(Self::Destructive),
            "idempotent" => Some(Self::Idempotent),
            "open-world" => Some(Self::OpenWorld),
            _ => None,
        }
    }

    fn declared_by(self, annotations: ToolAnnotations) -> bool {
        match self {
            Self::ReadOnly => annotations.read_only,
            Self::Destructive => annotations.destructive,
            Self::Idempotent => annotations.idempotent,
            Self::OpenWorld => annotations.open_world,
        }
    }
}

/// Why a rule or a policy file was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A rule does not parse.
    #[error("invalid rule {rule:?}: {reason}")]
    Rule {
        /// The rule as written.
        rule: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The policy file cannot be read or parsed.
    #[error("{file}: {message}")]
    File {
        /// The policy file.
        file: String,
        /// Why it cannot be read or parsed.
        message: String,
    },
}

impl Rule {
    /// Parse `text`, such as `files.read(path=docs/**, mode=ro)`, as a rule with `verdict`.
    pub fn parse(verdict: Verdict, text: &str) -> Result<Self, PolicyError> {
        let fail = |reason: &str| PolicyError::Rule {
            rule: text.to_owned(),
            reason: reason.to_owned(),
        };
        let trimmed = text.trim();
        let (tool, args) = match trimmed.split_once('(') {
            None => (trimmed, ""),
            Some((tool, rest)) => {
                let args = rest
                    .strip_suffix(')')
                    .ok_or_else(|| fail("an argument list must end with `)`"))?;
                (tool.trim(), args)
            }
        };
        let target = if let Some(effect) = tool.strip_prefix('@') {
            Target::Declaring(Effect::parse(effect).ok_or_else(|| {
                fail("an effect is `@read-only`, `@destructive`, `@idempotent` or `@open-world`")
            })?)
        } else {
            let tool_ok = !tool.is_empty()
                && tool
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-/*?".contains(c));
            if !tool_ok {
                return Err(fail(
                    "a tool pattern uses lowercase letters, digits, `.`, `_`, `-`, `/` (a skill's tools: `SKILL/TOOL`) and the wildcards `*` and `?`",
                ));
            }
            Target::Named(
                Glob::new(tool)
                    .map_err(|error| fail(&error.to_string()))?
                    .compile_matcher(),
            )
        };
        let mut constraints = Vec::new();
        for part in args
            .split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
        {
            let (name, pattern) = part
                .split_once('=')
                .ok_or_else(|| fail("each argument constraint is `name=glob`"))?;
            let (name, pattern) = (name.trim(), pattern.trim());
            if name.is_empty() || pattern.is_empty() {
                return Err(fail("each argument constraint is `name=glob`"));
            }
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map_err(|error| fail(&error.to_string()))?
                .compile_matcher();
            constraints.push((name.to_owned(), glob));
        }
        Ok(Self {
            verdict,
            text: trimmed.to_owned(),
            target,
            args: constraints,
        })
    }

    /// The verdict this rule gives.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether a call of `tool`, which declares `annotations`, with `args`
    /// matches this rule. An argument the rule constrains must be present; a
    /// string is matched after path normalization, any other value by its JSON
    /// text.
    pub fn matches(&self, tool: &str, annotations: ToolAnnotations, args: &Value) -> bool {
        let targeted = match &self.target {
            Target::Named(glob) => glob.is_match(tool),
            Target::Declaring(effect) => effect.declared_by(annotations),
        };
        targeted
            && self.args.iter().all(|(name, glob)| match args.get(name) {
                Some(Value::String(text)) => glob.is_match(normalize(text)),
                Some(other) => glob.is_match(other.to_string()),
                None => false,
            })
    }
}

/// Resolve `.` and `..` lexically and drop leading `./` and `/`, so that a
/// path cannot dodge a glob by detouring. A path that climbs above its start
/// keeps its leading `..`, which no relative glob matches.
fn normalize(text: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let mut climbs = 0usize;
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    climbs += 1;
                }
            }
            other => parts.push(other),
        }
    }
    let mut normalized = "../".repeat(climbs);
    normalized.push_str(&parts.join("/"));
    normalized
}

/// Who decided a call, which says how its denial reads: a permission rule
/// is quoted as a rule, a hook or a skill is named as itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decider {
    /// The permission policy: the rule in `rule`, or its default when none.
    #[default]
    Policy,
    /// A before-tool-call hook; `rule` names it and gives its reason.
    Hook,
    /// A skill: an active skill's `allowed-tools`, or a skill not active;
    /// `rule` says which and why.
    Skill,
    /// The host itself (a tool the agent does not list, arguments that are
    /// not an object, a hook that failed, ...); `rule` says why.
    Host,
}

impl Decider {
    pub(crate) fn is_policy(&self) -> bool {
        *self == Self::Policy
    }
}

/// The verdict for one call and the rule that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// What may happen.
    pub verdict: Verdict,
    /// The deciding rule as written, or `None` when the default applied;
    /// for a call a person answered, the rule that asked. For a decision
    /// not made by the policy, what decided it and why.
    pub rule: Option<String>,
    /// Who decided: the policy unless said otherwise.
    #[serde(default, skip_serializing_if = "Decider::is_policy")]
    pub by: Decider,
    /// What a person answered, when the policy asked about the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered: Option<Approval>,
}

impl Decision {
    /// A decision `by` someone other than the policy, for the reason `why`.
    pub fn by(by: Decider, verdict: Verdict, why: String) -> Self {
        Self {
            verdict,
            rule: Some(why),
            by,
            answered: None,
        }
    }

    /// The decision a person's `answer` makes of a call that `asked` (the
    /// rule that asked, or `None` for the default permission) put to them.
    pub fn answered(answer: Approval, asked: Option<String>) -> Self {
        Self {
            verdict: match answer {
                Approval::Approve => Verdict::Allow,
                Approval::Deny | Approval::DenyBecause(_) => Verdict::Deny,
            },
            rule: asked,
            by: Decider::Policy,
            answered: Some(answer),
        }
    }

    /// Why a denied call was denied, as the model reads it.
    pub fn denial(&self) -> String {
        match (&self.answered, self.by, &self.rule) {
            (Some(Approval::DenyBecause(reason)), _, _) => {
                format!("denied by the operator: {reason}")
            }
            (Some(_), _, _) => "denied by the operator".to_owned(),
            (None, Decider::Policy, Some(rule)) => format!("denied by permission rule `{rule}`"),
            (None, Decider::Policy, None) => "denied by the default permission".to_owned(),
            (None, Decider::Hook, Some(why)) => format!("denied by {why}"),
            (None, Decider::Skill | Decider::Host, Some(why)) => format!("denied because {why}"),
            (None, by, None) => format!("denied by {by:?}").to_lowercase(),
        }
    }
}

/// A default verdict and the rules that override it, and the file rules
/// every component of a run obeys.
#[derive(Debug, Clone)]
pub struct PermissionPolicy {
    default: Verdict,
    rules: Vec<Rule>,
    files: FileRules,
    /// The policy of the agent that delegated to this one, which judges
    /// every call too: the stricter verdict of the two stands.
    outer: Option<std::sync::Arc<PermissionPolicy>>,
}

/// A policy as written in a policy file or an agent file's `[permissions]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyTable {
    /// Unless told otherwise, a person approves every call.
    default: Option<Verdict>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    files: FileRulesTable,
}

impl PolicyTable {
    /// The policy, or the list and index of the first rule that does not parse
    /// (`deny[1]`) with why.
    pub(crate) fn build(self) -> Result<PermissionPolicy, (String, PolicyError)> {
        self.build_or(Verdict::Ask)
    }

    /// [`PolicyTable::build`], answering `fallback` where the table
    /// sets no `default`.
    pub(crate) fn build_or(
        self,
        fallback: Verdict,
    ) -> Result<PermissionPolicy, (String, PolicyError)> {
        let mut policy = PermissionPolicy::new(self.default.unwrap_or(fallback));
        policy.files = self.files.build().map_err(|(field, rule, reason)| {
            (format!("files.{field}"), PolicyError::Rule { rule, reason })
        })?;
        for (verdict, rules) in [
            (Verdict::Allow, self.allow),
            (Verdict::Ask, self.ask),
            (Verdict::Deny, self.deny),
        ] {
            for (index, text) in rules.iter().enumerate() {
                let rule = Rule::parse(verdict, text)
                    .map_err(|error| (format!("{verdict}[{index}]"), error))?;
                policy.rules.push(rule);
            }
        }
        Ok(policy)
    }
}

impl PermissionPolicy {
    /// A policy with no rules that answers `default` to every call.
    pub fn new(default: Verdict) -> Self {
        Self {
            default,
            rules: Vec::new(),
            files: FileRules::new(),
            outer: None,
        }
    }

    /// This policy beneath `outer`, the policy of the agent delegating to
    /// it: every call is judged by both and the stricter verdict stands
    /// (deny over ask over allow), so no rule here loosens one there; the
    /// file rules are both together.
    pub fn within(&self, outer: &PermissionPolicy) -> Self {
        let mut narrowed = self.clone();
        narrowed.files = narrowed.files.union(&outer.files);
        narrowed.outer = Some(std::sync::Arc::new(match &self.outer {
            None => outer.clone(),
            Some(mine) => mine.within(outer),
        }));
        narrowed
    }

    /// This policy with `files` as its file rules.
    pub fn with_files(mut self, files: FileRules) -> Self {
        self.files = files;
        self
    }

    /// The file rules every component of a run obeys (`[files]`).
    pub fn files(&self) -> &FileRules {
        &self.files
    }

    /// Add a rule.
    pub fn with_rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Parse a policy file:
    ///
    /// ```toml
    /// default = "ask"
    /// allow = ["jq.query", "files.read(path=docs/**)"]
    /// ask = ["notes.*"]
    /// deny = ["files.read(path=**/.env)"]
    ///
    /// [files]                      # enforced at the file layer, for every tool
    /// deny = ["**/.env"]
    /// read-only = ["Cargo.lock"]
    /// ```
    pub fn parse(file: &Path, text: &str) -> Result<Self, PolicyError> {
        let in_file = |message: String| PolicyError::File {
            file: file.display().to_string(),
            message,
        };
        let table: PolicyTable = toml::from_str(text)
            .map_err(|error| in_file(error.to_string().trim_end().to_owned()))?;
        table
            .build()
            .map_err(|(field, error)| in_file(format!("`{field}`: {error}")))
    }

    /// Read and parse the policy file at `file`.
    pub fn load(file: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(file).map_err(|error| PolicyError::File {
            file: file.display().to_string(),
            message: format!("cannot read: {error}"),
        })?;
        Self::parse(file, &text)
    }

    /// The verdict for a call of `tool`, which declares `annotations`, with
    /// `args`.
    pub fn decide(&self, tool: &str, annotations: ToolAnnotations, args: &Value) -> Decision {
        let mine = self.decide_here(tool, annotations, args);
        match &self.outer {
            None => mine,
            Some(outer) => {
                let theirs = outer.decide(tool, annotations, args);
                if theirs.verdict > mine.verdict {
                    theirs
                } else {
                    mine
                }
            }
        }
    }

    /// The verdict of this policy's own rules and default.
    fn decide_here(&self, tool: &str, annotations: ToolAnnotations, args: &Value) -> Decision {
        self.rules
            .iter()
            .filter(|rule| rule.matches(tool, annotations, args))
            .max_by_key(|rule| rule.verdict)
            .map_or(
                Decision {
                    verdict: self.default,
                    answered: None,
                    rule: None,
                    by: Decider::Policy,
                },
                |rule| Decision {
                    verdict: rule.verdict,
                    answered: None,
                    rule: Some(rule.text.clone()),
                    by: Decider::Policy,
                },
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(text: &str) -> PermissionPolicy {
        PermissionPolicy::parse(Path::new("policy.toml"), text).unwrap()
    }

    #[test]
    fn effect_rules_match_the_tools_that_declare_the_effect() {
        let policy = policy(
            r#"
            default = "ask"
            allow = ["@read-only"]
            deny = ["@destructive(path=.git/**)"]
            "#,
        );
        let reader = ToolAnnotations {
            read_only: true,
            ..ToolAnnotations::default()
        };
        let writer = ToolAnnotations {
            destructive: true,
            ..ToolAnnotations::default()
        };
        let args = json!({"path": "src/../.git/config"});
        assert_eq!(policy.decide("read", reader, &args).verdict, Verdict::Allow);
        let denied = policy.decide("write", writer, &args);
        assert_eq!(denied.verdict, Verdict::Deny);
        assert_eq!(denied.rule.as_deref(), Some("@destructive(path=.git/**)"));
        let elsewhere = json!({"path": "src/main.rs"});
        assert_eq!(
            policy.decide("write", writer, &elsewhere).verdict,
            Verdict::Ask
        );
        assert!(Rule::parse(Verdict::Deny, "@dangerous").is_err());
    }

    #[test]
    fn a_denial_names_who_decided_and_quotes_only_a_rule() {
        let rule = Decision {
            verdict: Verdict::Deny,
            rule: Some("files.read(path=.env)".into()),
            by: Decider::Policy,
            answered: None,
        };
        assert_eq!(
            rule.denial(),
            "denied by permission rule `files.read(path=.env)`"
        );
        let hook = Decision::by(Decider::Hook, Verdict::Deny, "hook `blocker`: no rm".into());
        assert_eq!(hook.denial(), "denied by hook `blocker`: no rm");
        let skill = Decision::by(
            Decider::Skill,
            Verdict::Deny,
            "skill `csv` is active and its allowed-tools [read] do not include this call".into(),
        );
        assert_eq!(
            skill.denial(),
            "denied because skill `csv` is active and its allowed-tools [read] do not include this call"
        );
        // What a store holds from before `by` existed reads as the policy's.
        let stored: Decision =
            serde_json::from_value(json!({"verdict": "deny", "rule": "notes.*"})).unwrap();
        assert_eq!(stored.by, Decider::Policy);
        assert!(
            !serde_json::to_string(&rule).unwrap().contains("\"by\""),
            "the policy's decisions are stored as before"
        );
    }

    #[test]
    fn the_default_applies_when_no_rule_matches() {
        let policy = policy("default = \"ask\"\nallow = [\"jq.query\"]");
        assert_eq!(
            policy
                .decide("jq.query", ToolAnnotations::default(), &json!({}))
                .verdict,
            Verdict::Allow
        );
        assert_eq!(
            policy.decide("notes.add", ToolAnnotations::default(), &json!({})),
            Decision {
                verdict: Verdict::Ask,
                answered: None,
                rule: None,
                by: Decider::Policy,
            }
        );
    }

    #[test]
    fn deny_beats_ask_beats_allow_whatever_the_order() {
        let policy = policy(
            "default = \"allow\"\ndeny = [\"files.read(path=secrets/**)\"]\nask = [\"files.*\"]\nallow = [\"files.read\"]",
        );
        let decision = policy.decide(
            "files.read",
            ToolAnnotations::default(),
            &json!({"path": "secrets/key"}),
        );
        assert_eq!(decision.verdict, Verdict::Deny);
        assert_eq!(
            decision.rule.as_deref(),
            Some("files.read(path=secrets/**)")
        );
        assert_eq!(
            policy
                .decide(
                    "files.read",
                    ToolAnnotations::default(),
                    &json!({"path": "docs/a.md"})
                )
                .verdict,
            Verdict::Ask
        );
        assert_eq!(
            policy
                .decide("jq.query", ToolAnnotations::default(), &json!({}))
                .verdict,
            Verdict::Allow
        );
    }

    #[test]
    fn argument_globs_match_paths_segment_by_segment() {
        let policy = policy(
            "default = \"deny\"\nallow = [\"files.read(path=docs/*.md)\", \"files.list(path=docs/**)\"]",
        );
        assert_eq!(
            policy
                .decide(
                    "files.read",
                    ToolAnnotations::default(),
                    &json!({"path": "docs/a.md"})
                )
                .verdict,
            Verdict::Allow
        );
        assert_eq!(
            policy
                .decide(
                    "files.read",
                    ToolAnnotations::default(),
                    &json!({"path": "docs/sub/a.md"})
                )
                .verdict,
            Verdict::Deny
        );
        assert_eq!(
            policy
                .decide(
                    "files.list",
                    ToolAnnotations::default(),
                    &json!({"path": "docs/sub/deeper"})
                )
                .verdict,
            Verdict::Allow
        );
        assert_eq!(
            policy
                .decide("files.read", ToolAnnotations::default(), &json!({}))
                .verdict,
            Verdict::Deny,
            "a constrained argument must be present"
        );
    }

    #[test]
    fn a_detour_through_dot_dot_is_judged_where_it_lands() {
        let policy = policy(
            "default = \"ask\"\nallow = [\"files.read(path=docs/**)\"]\ndeny = [\"files.read(path=secrets/**)\"]",
        );
        for path in [
            "docs/../secrets/key",
            "./docs/../../secrets/key",
            "docs/./../secrets/key",
        ] {
            let verdict = policy
                .decide(
                    "files.read",
                    ToolAnnotations::default(),
                    &json!({ "path": path }),
                )
                .verdict;
            assert_ne!(verdict, Verdict::Allow, "{path}");
        }
        assert_eq!(
            policy
                .decide(
                    "files.read",
                    ToolAnnotations::default(),
                    &json!({"path": "docs/../secrets/key"})
                )
                .verdict,
            Verdict::Deny
        );
        assert_eq!(
            policy
                .decide(
                    "files.read",
                    ToolAnnotations::default(),
                    &json!({"path": "/docs/a"})
                )
                .verdict,
            Verdict::Allow
        );
    }

    #[test]
    fn non_string_arguments_match_by_their_json_text() {
        let policy = policy("default = \"ask\"\nallow = [\"notes.delete(id=1?)\"]");
        assert_eq!(
            policy
                .decide(
                    "notes.delete",
                    ToolAnnotations::default(),
                    &json!({"id": 12})
                )
                .verdict,
            Verdict::Allow
        );
        assert_eq!(
            policy
                .decide(
                    "notes.delete",
                    ToolAnnotations::default(),
                    &json!({"id": 2})
                )
                .verdict,
            Verdict::Ask
        );
    }

    #[test]
    fn bad_rules_and_files_name_what_is_wrong() {
        for (text, needle) in [
            ("default = \"maybe\"", "maybe"),
            ("default = \"ask\"\nallow = [\"Files.Read\"]", "`allow[0]`"),
            (
                "default = \"ask\"\ndeny = [\"x\", \"files.read(path=docs\"]",
                "`deny[1]`",
            ),
            (
                "default = \"ask\"\nask = [\"files.read(path)\"]",
                "name=glob",
            ),
            ("default = \"ask\"\nallw = []", "allw"),
            (
                "default = \"ask\"\n[files]\ndeny = [\".env\", \"../up\"]",
                "`files.deny[1]`",
            ),
            ("default = \"ask\"\n[files]\nwrite-only = []", "write-only"),
        ] {
            let error = PermissionPolicy::parse(Path::new("policy.toml"), text)
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("policy.toml"), "{error}");
            assert!(error.contains(needle), "{needle}: {error}");
        }
    }
}
