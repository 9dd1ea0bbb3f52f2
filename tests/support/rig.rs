//! A workspace bound to a sandbox backend, with the calls tests make of it:
//! the built-in tools, a shell line, and what the loop does with a call's
//! file changes and at a commit. The rig's calls follow one another in one
//! step, each seeing the changes of those before it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use cordon_kernel::{
    ActiveSkills, CallContext, Capability, Event, FileChange, FileWrites, LimitKind,
    SkillActivation, SkillChange, StateSnapshot, ToolError, ToolErrorKind,
};
use cordon_wasm::{Safeguards, Workspace, WorkspaceOptions};
use serde_json::{Value, json};

use crate::{Fixture, Loaded};

/// A seeded workspace bound to a backend.
pub struct Rig {
    /// The plugins directory and the workspace root.
    pub fixture: Fixture,
    /// The loaded plugins, with their state and events.
    pub loaded: Loaded,
    /// The workspace bound to the backend.
    pub workspace: Workspace,

    /// A folder outside the workspace holding a secret the symlinks point at.
    pub outside: tempfile::TempDir,
    /// The skills active for the rig's calls.
    pub skills: Arc<ActiveSkills>,
    /// The file changes of this step's calls so far.
    step: Mutex<FileWrites>,
}

impl Rig {
    /// A workspace `prepare` fills (given the fixture and a folder outside
    /// it), bound to backend `name` with `options`, every call under
    /// `safeguards`.
    pub async fn bind(
        name: &str,
        options: WorkspaceOptions,
        safeguards: Safeguards,
        prepare: impl FnOnce(&Fixture, &Path),
    ) -> Self {
        Self::bind_guarded(name, options, |fixture, outside| {
            prepare(fixture, outside);
            safeguards
        })
        .await
    }

    /// A workspace `prepare` fills (given the fixture and a folder outside
    /// it), bound to backend `name` with `options`, every call under the
    /// safeguards `prepare` returns, which may name the fixture's folders.
    pub async fn bind_guarded(
        name: &str,
        options: WorkspaceOptions,
        prepare: impl FnOnce(&Fixture, &Path) -> Safeguards,
    ) -> Self {
        let fixture = Fixture::new();
        let outside = tempfile::tempdir().unwrap();
        let safeguards = prepare(&fixture, outside.path());
        let loaded = fixture.load_with(safeguards).await;
        let workspace = loaded.plugins.workspace(name, options).unwrap();
        Self {
            fixture,
            loaded,
            workspace,
            outside,
            skills: ActiveSkills::none(),
            step: Mutex::default(),
        }
    }

    /// Call the built-in tool `tool` with `args`, seeing the step's changes
    /// so far; what it changes joins them, as the loop admits it.
    pub async fn call(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        let mut context = CallContext::outside_run(Arc::new(StateSnapshot::default()));
        context.files = Arc::new(self.step.lock().unwrap().clone());
        context.skills = Arc::clone(&self.skills);
        let outcome = self.workspace.tools().call(tool, args, context).await;
        let output = outcome.result?;
        let mut step = self.step.lock().unwrap();
        if let Some(ledger) = self.workspace.ledger() {
            ledger
                .fits(&step, &outcome.files)
                .map_err(|quota| ToolError::new(ToolErrorKind::Limit, quota.detail))?;
        }
        step.extend(outcome.files);
        Ok(output.content)
    }

    /// Call `tool`, which must succeed.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let shown = args.to_string();
        self.call(tool, args)
            .await
            .unwrap_or_else(|error| panic!("{tool} {shown}: {error}"))
    }

    /// Run `line`: exit code, stdout, stderr.
    pub async fn sh(&self, line: &str) -> (i64, String, String) {
        let done = self.ok("bash", json!({ "command": line })).await;
        (
            done["exit_code"].as_i64().unwrap(),
            done["stdout"].as_str().unwrap().to_owned(),
            done["stderr"].as_str().unwrap().to_owned(),
        )
    }

    /// The changes the step's calls made so far, as its commit would take them.
    pub fn staged(&self) -> Vec<FileChange> {
        self.workspace
            .ledger()
            .map(|ledger| ledger.changes(&self.step.lock().unwrap()))
            .unwrap_or_default()
    }

    /// What the loop does once a step's commit is durable: take the step's
    /// changes and confirm them.
    pub fn confirm(&self) -> Vec<FileChange> {
        let step = std::mem::take(&mut *self.step.lock().unwrap());
        let Some(ledger) = self.workspace.ledger() else {
            return Vec::new();
        };
        let changes = ledger.changes(&step);
        ledger.confirm(&changes);
        changes
    }

    /// What the loop does at a step's commit: confirm the step's changes
    /// and publish them.
    pub fn commit(&self) -> Vec<FileChange> {
        let changes = self.confirm();
        if let Some(ledger) = self.workspace.ledger() {
            ledger.publish().unwrap();
        }
        changes
    }

    /// The text of the workspace folder's file `path`, if any.
    pub fn on_disk(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.fixture.workspace.path().join(path)).ok()
    }

    /// Every denial so far: its capability and target.
    pub fn denials(&self) -> Vec<(Capability, String)> {
        self.loaded
            .events
            .denials()
            .into_iter()
            .map(|denial| (denial.capability, denial.target))
            .collect()
    }

    /// The targets of the filesystem denials of bundle `bundle`.
    pub fn refused_paths(&self, bundle: &str) -> Vec<String> {
        self.loaded
            .events
            .denials()
            .into_iter()
            .filter(|denial| denial.bundle == bundle && denial.capability == Capability::Filesystem)
            .map(|denial| denial.target)
            .collect()
    }

    /// The limits the bundles' runs hit, each with its bundle.
    pub fn limits(&self) -> Vec<(String, LimitKind)> {
        self.loaded
            .events
            .snapshot()
            .into_iter()
            .filter_map(|event| match event {
                Event::LimitExceeded { bundle, limit, .. } => Some((bundle, limit)),
                _ => None,
            })
            .collect()
    }

    /// Mounts the skill `name`, whose folder is `folder`, in the workspace;
    /// its folder is seen only once it is active.
    pub fn mount_skill(&mut self, name: &str, folder: &Path) {
        self.workspace = self.workspace.clone().with_skills(
            BTreeMap::from([(name.to_owned(), folder.to_owned())]),
            BTreeMap::new(),
        );
    }

    /// Activates the skill `name` for the rig's calls, as the `skill` tool
    /// would.
    pub fn activate_skill(&mut self, name: &str) {
        let mut active = ActiveSkills::default();
        active.apply(&[SkillChange::Activated {
            call_id: "c".into(),
            activation: SkillActivation {
                skill: name.into(),
                fingerprint: "f".into(),
                allowed: None,
            },
        }]);
        self.skills = Arc::new(active);
    }
}
