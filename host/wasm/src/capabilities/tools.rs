//! The tool-call capability: the tools a bundle may call (`grants.tools`),
//! granted to `tool` bundles only; the handle its calls go through, which
//! only a bundle with the grant holds; and the `tools` import. Inside a run
//! the handle is the run's gate, which judges each call like a model's;
//! outside a run (an operator's single call) it calls the loaded plugins
//! directly. An undeclared tool is a typed error and a `denied` event; a
//! chain deeper than [`MAX_CALL_DEPTH`] is a `limit`. What a nested call
//! staged (state writes, file changes) joins the caller's and travels back
//! with the caller's outcome; its events join the caller's trail.

use std::sync::Arc;

use cordon_kernel::{Capability, FileWrites, LimitKind, NestedCalls};
use serde_json::Value;
use wasmtime::component::{HasData, Linker};

use crate::audit::Audit;
use crate::bindings::cordon::plugin::{tools, types};
use crate::errors::to_wit_error;
use crate::manifest::checks::{ManifestError, Validator, is_tool_name};
use crate::manifest::kind::BundleKind;

use super::state::StateAccess;
use super::unit::{Grant, Imports};

/// The deepest chain of tool calls a component may start (a calling b calling c...).
pub(crate) const MAX_CALL_DEPTH: u32 = 4;

/// The capability of calling tools.
pub(crate) struct Tools;

impl Grant for Tools {
    const SAID: u8 = 1;

    /// The tools' names.
    type Asked = Vec<String>;

    /// Valid tool names, each listed once, and only for a `tool` bundle: a
    /// hook or a backend runs inside the gate, where its calls could not be
    /// judged.
    fn validate(
        tools: &Vec<String>,
        kind: BundleKind,
        check: &Validator<'_>,
    ) -> Result<(), ManifestError> {
        check.unique_names("grants.tools", tools, is_tool_name, "not a valid tool name")?;
        if kind != BundleKind::Tool && !tools.is_empty() {
            return Err(check.invalid(
            "grants.tools",
            tools,
            &format!(
                "only `tool` bundles call tools; a {kind} bundle runs inside the gate, where its calls could not be judged"
            ),
        ));
        }
        Ok(())
    }

    fn is_empty(tools: &Vec<String>) -> bool {
        tools.is_empty()
    }

    fn describe(tools: &Vec<String>) -> Vec<String> {
        super::env::listed("tools", tools)
    }

    fn beyond(asked: &Vec<String>, approved: &Vec<String>) -> Vec<String> {
        super::env::unlisted(asked, approved)
            .map(|tool| format!("calling tool {tool}"))
            .collect()
    }

    /// Untrusted code calls what it asks: each call is judged as any other.
    fn untrusted(_tools: &mut Vec<String>) -> Vec<String> {
        Vec::new()
    }
}

/// One call's access to tools, held only by a call into a bundle granted it.
pub(crate) struct ToolAccess {
    /// Where its calls go; `None` while the bundle describes itself, when no
    /// tool is reachable.
    handle: Option<Arc<dyn NestedCalls>>,
    /// How many calls enclose this one.
    depth: u32,
    /// The file changes of the calls enclosing this one.
    enclosing: Arc<FileWrites>,
    /// The file changes this call's own calls staged.
    files: FileWrites,
}

impl ToolAccess {
    /// Access through `handle` for a call `depth` deep, seeing `enclosing`.
    pub(crate) fn new(
        handle: Option<Arc<dyn NestedCalls>>,
        depth: u32,
        enclosing: Arc<FileWrites>,
    ) -> Self {
        Self {
            handle,
            depth,
            enclosing,
            files: FileWrites::new(),
        }
    }

    /// The file changes this call's own calls staged.
    pub(crate) fn into_files(self) -> FileWrites {
        self.files
    }

    /// What a call made now sees over the committed files: the enclosing
    /// calls' changes, then this call's.
    fn view(&self) -> Arc<FileWrites> {
        if self.files.is_empty() {
            return Arc::clone(&self.enclosing);
        }
        let mut view = FileWrites::clone(&self.enclosing);
        view.extend(
            self.files
                .iter()
                .map(|(path, state)| (path.clone(), state.clone())),
        );
        Arc::new(view)
    }
}

/// The `tools` import as one call sees it.
pub(crate) struct ToolsView<'a> {
    pub(crate) bundle: &'a str,
    pub(crate) granted: &'a [String],
    /// The tool or operation being called, for the trail.
    pub(crate) label: &'a str,
    pub(crate) access: Option<&'a mut ToolAccess>,
    pub(crate) state: &'a mut StateAccess,
    pub(crate) audit: &'a Audit,
}

impl HasData for Tools {
    type Data<'a> = ToolsView<'a>;
}

impl Imports for Tools {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()> {
        tools::add_to_linker::<T, Self>(linker, get)?;
        Ok(())
    }
}

type CallResult = wasmtime::Result<Result<types::ToolOutput, types::ToolError>>;

impl tools::Host for ToolsView<'_> {
    async fn call(&mut self, name: String, args: String) -> CallResult {
        let access = match self.access.as_deref_mut() {
            Some(access) if self.granted.contains(&name) => access,
            _ => {
                self.audit.deny(Capability::ToolCall, &name, "not declared");
                return Ok(Err(types::ToolError::Denied(format!(
                    "calling tool `{name}` is not granted to bundle `{}`",
                    self.bundle
                ))));
            }
        };
        let Some(handle) = access.handle.clone() else {
            return Ok(Err(types::ToolError::Failed(
                "no tool can be called while the bundle describes itself".into(),
            )));
        };
        if access.depth + 1 >= MAX_CALL_DEPTH {
            let detail = format!("tool calls nest deeper than {MAX_CALL_DEPTH}");
            self.audit
                .exceeded(self.label, LimitKind::CallDepth, detail.clone());
            return Ok(Err(types::ToolError::Failed(detail)));
        }
        let args = match serde_json::from_str::<Value>(&args) {
            Ok(args) => args,
            Err(error) => {
                return Ok(Err(types::ToolError::InvalidInput(format!(
                    "arguments are not valid JSON: {error}"
                ))));
            }
        };
        let state = Arc::clone(self.state.reader());
        let outcome = handle.call(&name, args, state, access.view()).await;
        self.audit.keep(outcome.events);
        let output = match outcome.result {
            Ok(output) => output,
            Err(error) => return Ok(Err(to_wit_error(error))),
        };
        // The callee's changes join this call's: they commit only if the
        // outermost call succeeds.
        if let Err(message) = self.state.join(outcome.writes)? {
            return Ok(Err(types::ToolError::Failed(message)));
        }
        access.files.extend(outcome.files);
        Ok(Ok(types::ToolOutput {
            content: output.content.to_string(),
        }))
    }
}
