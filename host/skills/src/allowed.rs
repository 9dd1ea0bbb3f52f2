//! `allowed-tools`: the tools a skill may use while it is active, each a
//! tool name or glob with optional argument patterns in Cordon's rule syntax
//! (`read`, `files.*`, `bash(command=python3 scripts/*)`, `@read-only`).
//! The format's own form is one string of rules separated by spaces; a YAML
//! list of rules is accepted too. Spaces inside a rule's parentheses belong
//! to the rule.

use cordon_kernel::{Rule, Verdict};

/// The rules of a space-separated `allowed-tools` string, split where a space
/// falls outside parentheses.
pub(crate) fn split(text: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if c.is_whitespace() && depth == 0 => {
                if !current.is_empty() {
                    rules.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        rules.push(current);
    }
    rules
}

/// Why `rule` is not one Cordon accepts, if it is not.
pub(crate) fn check(rule: &str) -> Result<(), String> {
    Rule::parse(Verdict::Allow, rule)
        .map(drop)
        .map_err(|error| match error {
            cordon_kernel::PolicyError::Rule { reason, .. } => format!(
                "{rule:?} is not a Cordon permission rule: {reason} (for example `read`, `files.*` or `bash(command=python3 scripts/*)`)"
            ),
            other => other.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_inside_parentheses_stay_with_their_rule() {
        assert_eq!(
            split("read  grep bash(command=python3 scripts/*) files.*"),
            ["read", "grep", "bash(command=python3 scripts/*)", "files.*"]
        );
        assert!(split("   ").is_empty());
    }

    #[test]
    fn rules_are_checked_with_the_policy_syntax() {
        assert!(check("bash(command=python3 *)").is_ok());
        assert!(check("@read-only").is_ok());
        let error = check("Bash(git:*)").unwrap_err();
        assert!(
            error.contains("Bash(git:*)") && error.contains("lowercase"),
            "{error}"
        );
    }
}
