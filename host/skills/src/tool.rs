//! The built-in `skill` tool. Its description lists each skill's name and
//! description, and nothing else of it, and its `name` argument is an enum of
//! the run's skills: that is all the model knows of a skill before it
//! activates one (progressive disclosure). Calling it returns the skill's
//! body wrapped with the skill's folder, as the run's workspace mounts it,
//! and the names of its files and tools, never their contents; and it
//! brings back the activation as the call's effect, which the step commits.
//! A skill active already is not injected again. Nothing a SKILL.md holds is
//! executed: `` !`cmd` `` lines are text like any other.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

use cordon_kernel::{
    CallContext, SKILL_TOOL, SkillActivation, ToolAnnotations, ToolCallOutcome, ToolError,
    ToolErrorKind, ToolFuture, ToolSet, ToolSpec,
};
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::skill::Skill;

/// Where a run's workspace mounts the folder of an active skill: `/skills/NAME`.
pub const SKILLS_MOUNT: &str = "/skills";

/// The `skill` tool of one run.
pub struct SkillTool {
    catalog: Arc<Catalog>,
    /// Whether the run's workspace mounts the folders of active skills.
    mounted: bool,
    /// The tools each skill ships, by skill.
    tools: BTreeMap<String, Vec<String>>,
    /// Why a skill's Python packages are not in this run, by skill.
    unavailable: BTreeMap<String, String>,
    spec: Option<ToolSpec>,
}

impl SkillTool {
    /// The tool offering `catalog`'s skills, whose folders the run's
    /// workspace mounts when `mounted`, and whose tools are `tools`.
    pub fn new(catalog: Arc<Catalog>, mounted: bool, tools: BTreeMap<String, Vec<String>>) -> Self {
        let spec = (!catalog.is_empty()).then(|| spec(&catalog));
        Self {
            catalog,
            mounted,
            tools,
            unavailable: BTreeMap::new(),
            spec,
        }
    }

    /// This tool saying, on activating a skill in `unavailable`, that its
    /// Python packages are not in this run and why, before any of its
    /// scripts runs.
    pub fn with_unavailable_packages(mut self, unavailable: BTreeMap<String, String>) -> Self {
        self.unavailable = unavailable;
        self
    }

    fn activate(&self, args: &Value, context: &CallContext) -> ToolCallOutcome {
        let extra = args
            .as_object()
            .and_then(|fields| fields.keys().find(|key| *key != "name"));
        if let Some(extra) = extra {
            return error(
                ToolErrorKind::InvalidInput,
                format!("`{extra}` is not an argument of `skill`; give only the skill's `name`"),
            );
        }
        let Some(name) = args.get("name").and_then(Value::as_str) else {
            return error(
                ToolErrorKind::InvalidInput,
                "give the skill's `name`".to_owned(),
            );
        };
        let Some(skill) = self.catalog.get(name) else {
            let names: Vec<&str> = self.catalog.skills().map(|skill| skill.name()).collect();
            return error(
                ToolErrorKind::InvalidInput,
                format!(
                    "no skill named `{name}`; the skills are: {}",
                    names.join(", ")
                ),
            );
        };
        if context.skills.is_active(name) {
            return ToolCallOutcome::output(json!({
                "skill": name,
                "status": "already active: its instructions are in the conversation above",
            }));
        }
        let text = self.content(skill);
        ToolCallOutcome::output(Value::String(text)).with_skills(vec![SkillActivation {
            skill: name.to_owned(),
            fingerprint: skill.fingerprint.clone(),
            allowed: skill.meta.allowed_tools.clone(),
        }])
    }

    /// The skill's body, wrapped with its folder and the names of its files
    /// and tools.
    fn content(&self, skill: &Skill) -> String {
        let name = skill.name();
        let mut text = format!("<skill_content name=\"{name}\">\n{}", skill.body);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let (files, more) = skill.files();
        let folder = format!("{SKILLS_MOUNT}/{name}/");
        if self.mounted {
            let _ = writeln!(
                text,
                "\nThe skill's folder is {folder}, read-only. Read its files with `read`, `grep`, `glob` or `bash` when the instructions call for them; run its scripts with `bash`."
            );
        } else {
            let _ = writeln!(
                text,
                "\nThis run has no workspace, so the skill's files cannot be read."
            );
        }
        if !files.is_empty() {
            text.push_str("<skill_resources>\n");
            for file in &files {
                let shown = if self.mounted {
                    format!("{folder}{file}")
                } else {
                    file.clone()
                };
                let _ = writeln!(text, "{shown}");
            }
            if more > 0 {
                let _ = writeln!(text, "... and {more} more");
            }
            text.push_str("</skill_resources>\n");
        }
        if let Some(why) = self.unavailable.get(name) {
            let _ = writeln!(
                text,
                "Its Python packages are not available in this run, so its scripts that import them will fail: {why}. Tell the user rather than working around it."
            );
        }
        if let Some(tools) = self.tools.get(name).filter(|tools| !tools.is_empty()) {
            let _ = writeln!(text, "Its tools, while it is active: {}", tools.join(", "));
        }
        if let Some(allowed) = &skill.meta.allowed_tools {
            let _ = writeln!(
                text,
                "While it is active, calls are limited to its allowed-tools: {}",
                if allowed.is_empty() {
                    "(none)".to_owned()
                } else {
                    allowed.join(" ")
                }
            );
        }
        text.push_str("</skill_content>");
        text
    }
}

fn error(kind: ToolErrorKind, message: String) -> ToolCallOutcome {
    ToolCallOutcome::error(ToolError::new(kind, message))
}

/// The tool's spec: each skill's name and description, nothing more.
fn spec(catalog: &Catalog) -> ToolSpec {
    let mut description = "Activate a skill: load its instructions into the conversation when the task matches its description. Activating one limits later calls to what it allows. The skills:\n".to_owned();
    let mut names = Vec::new();
    for skill in catalog.skills() {
        let _ = writeln!(
            description,
            "- {}: {}",
            skill.name(),
            skill.meta.description
        );
        names.push(skill.name().to_owned());
    }
    ToolSpec {
        name: SKILL_TOOL.to_owned(),
        description: description.trim_end().to_owned(),
        input_schema: Arc::new(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names, "description": "The skill to activate."}
            },
            "required": ["name"],
            "additionalProperties": false
        })),
        output_schema: None,
        annotations: ToolAnnotations {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
    }
}

impl ToolSet for SkillTool {
    fn specs(&self) -> Vec<ToolSpec> {
        self.spec.iter().cloned().collect()
    }

    fn call<'a>(&'a self, name: &'a str, args: Value, context: CallContext) -> ToolFuture<'a> {
        Box::pin(async move {
            if name != SKILL_TOOL || self.spec.is_none() {
                return error(ToolErrorKind::NotFound, format!("no tool named `{name}`"));
            }
            self.activate(&args, &context)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_kernel::{ActiveSkills, SkillChange, StateSnapshot};

    fn catalog(root: &std::path::Path) -> Arc<Catalog> {
        let folder = root.join("report");
        std::fs::create_dir_all(folder.join("references")).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            "---\nname: report\ndescription: Summarise a CSV file.\nallowed-tools: read bash\n---\n# Steps\nSECRET-BODY-TEXT\n!`touch /tmp/never`\n",
        )
        .unwrap();
        std::fs::write(folder.join("references/format.md"), "REFERENCE-CONTENTS").unwrap();
        Arc::new(Catalog::new([Skill::load(&folder).unwrap()]))
    }

    fn context(skills: ActiveSkills) -> CallContext {
        let mut context = CallContext::outside_run(Arc::new(StateSnapshot::default()));
        context.skills = Arc::new(skills);
        context
    }

    #[tokio::test]
    async fn the_spec_shows_names_and_descriptions_only() {
        let root = tempfile::tempdir().unwrap();
        let tool = SkillTool::new(catalog(root.path()), true, BTreeMap::new());
        let spec = &tool.specs()[0];
        let shown = serde_json::to_string(spec).unwrap();
        assert!(shown.contains("report") && shown.contains("Summarise a CSV file."));
        assert!(
            !shown.contains("SECRET-BODY-TEXT") && !shown.contains("format.md"),
            "{shown}"
        );
        assert_eq!(
            spec.input_schema["properties"]["name"]["enum"],
            json!(["report"])
        );
        assert!(
            SkillTool::new(Arc::new(Catalog::default()), true, BTreeMap::new())
                .specs()
                .is_empty()
        );
    }

    #[tokio::test]
    async fn activation_returns_the_body_and_file_names_and_brings_back_the_activation() {
        let root = tempfile::tempdir().unwrap();
        let tools = BTreeMap::from([("report".to_owned(), vec!["report/csv.summary".to_owned()])]);
        let tool = SkillTool::new(catalog(root.path()), true, tools);
        let outcome = tool
            .call(
                SKILL_TOOL,
                json!({"name": "report"}),
                context(ActiveSkills::default()),
            )
            .await;
        let text = outcome.result.unwrap().content;
        let text = text.as_str().unwrap();
        assert!(
            text.starts_with("<skill_content name=\"report\">\n# Steps\nSECRET-BODY-TEXT"),
            "{text}"
        );
        assert!(
            text.contains("/skills/report/references/format.md"),
            "{text}"
        );
        assert!(
            !text.contains("REFERENCE-CONTENTS"),
            "file contents are never included"
        );
        assert!(
            text.contains("report/csv.summary") && text.contains("read bash"),
            "{text}"
        );
        assert!(!std::path::Path::new("/tmp/never").exists());
        assert_eq!(outcome.skills.len(), 1);
        assert_eq!(
            outcome.skills[0].allowed.as_deref(),
            Some(&["read".to_owned(), "bash".to_owned()][..])
        );
    }

    #[tokio::test]
    async fn an_active_skill_is_not_injected_again_and_bad_names_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let catalog = catalog(root.path());
        let tool = SkillTool::new(Arc::clone(&catalog), false, BTreeMap::new());
        let mut active = ActiveSkills::default();
        active.apply(&[SkillChange::Activated {
            call_id: "c".into(),
            activation: SkillActivation {
                skill: "report".into(),
                fingerprint: catalog.get("report").unwrap().fingerprint.clone(),
                allowed: None,
            },
        }]);
        let again = tool
            .call(SKILL_TOOL, json!({"name": "report"}), context(active))
            .await;
        assert!(again.skills.is_empty());
        assert_eq!(
            again.result.unwrap().content["status"],
            json!("already active: its instructions are in the conversation above")
        );
        for args in [
            json!({"name": "nope"}),
            json!({}),
            json!({"name": "report", "x": 1}),
        ] {
            let refused = tool
                .call(SKILL_TOOL, args, context(ActiveSkills::default()))
                .await;
            assert_eq!(
                refused.result.unwrap_err().kind,
                ToolErrorKind::InvalidInput
            );
        }
    }
}
