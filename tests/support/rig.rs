//! A workspace bound to a sandbox backend, with the calls tests make of it:
//! the built-in tools, a shell line, and what the loop does at a commit.

use std::path::Path;
use std::sync::Arc;

use cordon_kernel::{CallContext, Capability, FileChange, StateSnapshot, ToolError};
use cordon_wasm::{Safeguards, Workspace, WorkspaceOptions};
use serde_json::{Value, json};

use crate::{Fixture, Loaded};

/// A seeded workspace bound to a backend.
pub struct Rig {
    pub fixture: Fixture,
    pub loaded: Loaded,
    pub workspace: Workspace,
    /// A folder outside the workspace holding a secret the symlinks point at.
    pub outside: tempfile::TempDir,
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
        let fixture = Fixture::new();
        let outside = tempfile::tempdir().unwrap();
        prepare(&fixture, outside.path());
        let loaded = fixture.load_with(safeguards).await;
        let workspace = loaded.plugins.workspace(name, options).unwrap();
        Self {
            fixture,
            loaded,
            workspace,
            outside,
        }
    }

    /// Call the built-in tool `tool` with `args`.
    pub async fn call(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        self.workspace
            .tools()
            .call(
                tool,
                args,
                CallContext::outside_run(Arc::new(StateSnapshot::default())),
            )
            .await
            .result
            .map(|output| output.content)
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

    /// What the loop does at a step's commit: take the staged changes, confirm
    /// them and publish them.
    pub fn commit(&self) -> Vec<FileChange> {
        let Some(ledger) = self.workspace.ledger() else {
            return Vec::new();
        };
        let changes = ledger.staged();
        ledger.confirm();
        ledger.publish().unwrap();
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
}
