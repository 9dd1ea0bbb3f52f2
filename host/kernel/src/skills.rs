//! Skills in the loop. A skill is a folder of instructions, and perhaps of
//! tools, that the model activates with the built-in [`SKILL_TOOL`]. An
//! activation is an effect of that call: it travels back in the call's
//! outcome, is admitted in the model's call order, and commits with the step
//! as a [`SkillChange`]; from the next step on the skill is active, and a
//! resumed run finds it active again in its committed steps.
//!
//! Activation only narrows. A skill that lists `allowed-tools` adds a layer,
//! and while it is active a call must be allowed by the agent's policy *and*
//! by every active layer; no layer can turn a deny or an ask into an allow.
//! Each layer always admits the `skill` tool (another activation can only
//! narrow further) and its own skill's tools. A skill's own tools are named
//! `SKILL/TOOL` ([`skill_of`]): the model is offered them, and may call them,
//! only while their skill is active.
//!
//! A resumed run checks each activation against the skills as they are now
//! ([`SkillCatalog`]): one whose SKILL.md changed since, or that is no longer
//! there, is dropped with a warning, and the drop commits with the next step.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::{Rule, Verdict};
use crate::tool::annotations::ToolAnnotations;

/// The name of the built-in tool that activates a skill.
pub const SKILL_TOOL: &str = "skill";

/// The separator between a skill's name and the name of a tool it ships.
pub const SKILL_TOOL_SEPARATOR: char = '/';

/// A skill activation, as the `skill` tool reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillActivation {
    /// The skill's name.
    pub skill: String,
    /// The SHA-256 of its SKILL.md when it was activated, lowercase hex.
    pub fingerprint: String,
    /// Its `allowed-tools`, each a permission rule as written; `None` when it
    /// lists none, which adds no layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
}

/// A change to a run's active skills, as a step commits it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum SkillChange {
    /// A call of the `skill` tool activated a skill.
    Activated {
        /// The call.
        call_id: String,
        /// What it activated.
        #[serde(flatten)]
        activation: SkillActivation,
    },
    /// A resumed run found the skill changed or gone, and dropped it.
    Dropped {
        /// The skill.
        skill: String,
        /// Why.
        reason: String,
    },
}

/// Which skill a tool belongs to: the part of its name before `/`, for a
/// tool a skill ships (`csv-report/csv.summary`).
pub fn skill_of(tool: &str) -> Option<&str> {
    tool.split_once(SKILL_TOOL_SEPARATOR)
        .map(|(skill, _)| skill)
        .filter(|skill| !skill.is_empty())
}

/// The port through which a resumed run checks its activations against the
/// skills as they are now.
pub trait SkillCatalog: Send + Sync {
    /// The fingerprint of skill `name`'s SKILL.md as it is now, or `None`
    /// when the run has no such skill.
    fn fingerprint(&self, name: &str) -> Option<String>;
}

/// One active skill and its layer.
#[derive(Debug, Clone)]
struct Active {
    activation: SkillActivation,
    /// The rules of its `allowed-tools`; `None` when it adds no layer.
    layer: Option<Vec<Rule>>,
}

/// Why an active skill's layer refused a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRefusal {
    /// The skill whose `allowed-tools` leave the call out.
    pub skill: String,
    /// Its `allowed-tools`, as written.
    pub allowed: Vec<String>,
}

/// The skills active in a run, in the order they were activated.
#[derive(Debug, Clone, Default)]
pub struct ActiveSkills {
    skills: Vec<Active>,
}

impl ActiveSkills {
    /// No skill is active.
    pub fn none() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The active skills after `changes`, in order. A skill activated again
    /// keeps its first activation. A rule that no longer parses (the store
    /// was edited) leaves a layer that allows nothing: it fails closed.
    pub fn apply(&mut self, changes: &[SkillChange]) {
        for change in changes {
            match change {
                SkillChange::Activated { activation, .. } => {
                    if self.is_active(&activation.skill) {
                        continue;
                    }
                    let layer = activation.allowed.as_ref().map(|rules| {
                        rules
                            .iter()
                            .map(|text| Rule::parse(Verdict::Allow, text))
                            .collect::<Result<Vec<_>, _>>()
                            .unwrap_or_default()
                    });
                    self.skills.push(Active {
                        activation: activation.clone(),
                        layer,
                    });
                }
                SkillChange::Dropped { skill, .. } => {
                    self.skills
                        .retain(|active| active.activation.skill != *skill);
                }
            }
        }
    }

    /// Whether skill `name` is active.
    pub fn is_active(&self, name: &str) -> bool {
        self.skills
            .iter()
            .any(|active| active.activation.skill == name)
    }

    /// The active skills' names, in activation order.
    pub fn names(&self) -> BTreeSet<String> {
        self.skills
            .iter()
            .map(|active| active.activation.skill.clone())
            .collect()
    }

    /// The activations, in order.
    pub fn activations(&self) -> impl Iterator<Item = &SkillActivation> {
        self.skills.iter().map(|active| &active.activation)
    }

    /// Whether no skill is active.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Whether the model may see and call `tool`: any tool but one that a
    /// skill ships, which only while that skill is active.
    pub fn offers(&self, tool: &str) -> bool {
        skill_of(tool).is_none_or(|skill| self.is_active(skill))
    }

    /// The first active layer that leaves out a call of `tool`, which
    /// declares `annotations`, with `args`; `None` when every layer admits it.
    pub fn refusal(
        &self,
        tool: &str,
        annotations: ToolAnnotations,
        args: &Value,
    ) -> Option<SkillRefusal> {
        if tool == SKILL_TOOL {
            return None;
        }
        self.skills.iter().find_map(|active| {
            let layer = active.layer.as_ref()?;
            let skill = &active.activation.skill;
            let own = skill_of(tool) == Some(skill.as_str());
            let listed = layer
                .iter()
                .any(|rule| rule.matches(tool, annotations, args));
            (!own && !listed).then(|| SkillRefusal {
                skill: skill.clone(),
                allowed: active.activation.allowed.clone().unwrap_or_default(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn activated(skill: &str, allowed: Option<&[&str]>) -> SkillChange {
        SkillChange::Activated {
            call_id: format!("call-{skill}"),
            activation: SkillActivation {
                skill: skill.into(),
                fingerprint: "f".repeat(64),
                allowed: allowed.map(|rules| rules.iter().map(|rule| (*rule).to_owned()).collect()),
            },
        }
    }

    fn refused(skills: &ActiveSkills, tool: &str, args: Value) -> Option<String> {
        skills
            .refusal(tool, ToolAnnotations::default(), &args)
            .map(|refusal| refusal.skill)
    }

    #[test]
    fn each_layer_narrows_and_two_layers_admit_only_what_both_list() {
        let mut skills = ActiveSkills::default();
        skills.apply(&[activated(
            "report",
            Some(&["read", "bash(command=python3 *)", "files.*"]),
        )]);
        assert_eq!(refused(&skills, "read", json!({"path": "a"})), None);
        assert_eq!(refused(&skills, "files.list", json!({})), None);
        assert_eq!(
            refused(&skills, "bash", json!({"command": "python3 x.py"})),
            None
        );
        assert_eq!(
            refused(&skills, "bash", json!({"command": "rm -rf x"})).as_deref(),
            Some("report")
        );
        assert_eq!(
            refused(&skills, "notes.add", json!({})).as_deref(),
            Some("report")
        );
        skills.apply(&[activated("second", Some(&["read", "notes.*"]))]);
        assert_eq!(refused(&skills, "read", json!({"path": "a"})), None);
        assert_eq!(
            refused(&skills, "files.list", json!({})).as_deref(),
            Some("second")
        );
        assert_eq!(
            refused(&skills, "notes.add", json!({})).as_deref(),
            Some("report")
        );
    }

    #[test]
    fn a_star_stays_within_a_path_component_and_a_double_star_spans_them() {
        let mut skills = ActiveSkills::default();
        skills.apply(&[activated(
            "report",
            Some(&[
                "bash(command=python3 scripts/*)",
                "bash(command=python3 /skills/report/**)",
            ]),
        )]);
        let script = |command: &str| refused(&skills, "bash", json!({ "command": command }));
        assert_eq!(script("python3 scripts/report.py data.csv"), None);
        assert_eq!(
            script("python3 scripts/report.py data/sales.csv").as_deref(),
            Some("report"),
            "`*` stops at `/`"
        );
        assert_eq!(
            script("python3 /skills/report/scripts/report.py data/sales.csv"),
            None
        );
        assert_eq!(
            script("python3 /skills/other/x.py").as_deref(),
            Some("report")
        );
    }

    #[test]
    fn a_skill_without_allowed_tools_adds_no_layer_and_the_skill_tool_always_passes() {
        let mut skills = ActiveSkills::default();
        skills.apply(&[activated("free", None)]);
        assert_eq!(refused(&skills, "anything", json!({})), None);
        skills.apply(&[activated("tight", Some(&[]))]);
        assert_eq!(
            refused(&skills, "anything", json!({})).as_deref(),
            Some("tight")
        );
        assert_eq!(refused(&skills, SKILL_TOOL, json!({"name": "x"})), None);
        assert_eq!(refused(&skills, "tight/csv.summary", json!({})), None);
        assert_eq!(
            refused(&skills, "free/x.y", json!({})).as_deref(),
            Some("tight"),
            "another skill's tools pass only the layers that list them"
        );
    }

    #[test]
    fn skill_tools_are_offered_only_while_their_skill_is_active() {
        let mut skills = ActiveSkills::default();
        assert!(skills.offers("files.read"));
        assert!(!skills.offers("report/csv.summary"));
        skills.apply(&[activated("report", None)]);
        assert!(skills.offers("report/csv.summary"));
        skills.apply(&[SkillChange::Dropped {
            skill: "report".into(),
            reason: "changed".into(),
        }]);
        assert!(!skills.offers("report/csv.summary"));
        assert!(skills.is_empty());
    }

    #[test]
    fn a_second_activation_keeps_the_first_and_a_bad_rule_fails_closed() {
        let mut skills = ActiveSkills::default();
        skills.apply(&[activated("a", Some(&["read"])), activated("a", None)]);
        assert_eq!(skills.activations().count(), 1);
        assert_eq!(refused(&skills, "write", json!({})).as_deref(), Some("a"));
        let mut broken = ActiveSkills::default();
        broken.apply(&[activated("b", Some(&["read", "Not A Rule("]))]);
        assert_eq!(refused(&broken, "read", json!({})).as_deref(), Some("b"));
    }

    #[test]
    fn changes_round_trip_through_json() {
        let change = activated("report", Some(&["read"]));
        let text = serde_json::to_string(&change).unwrap();
        assert!(text.contains("\"change\":\"activated\""), "{text}");
        assert_eq!(serde_json::from_str::<SkillChange>(&text).unwrap(), change);
        assert_eq!(skill_of("report/csv.summary"), Some("report"));
        assert_eq!(skill_of("files.read"), None);
        assert_eq!(skill_of("/x"), None);
    }
}
