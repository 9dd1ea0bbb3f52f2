//! The interpreter capability. An interpreter bundle (`kind =
//! "interpreter"`) serves the commands its manifest names (`[interpreter]
//! commands = ["python3", "python"]`) and is granted nothing: each run sees
//! what its command sees. A sandbox backend's shell reaches interpreters
//! through the `interpreters` import, which only a backend's call holds. Each
//! run is a fresh, guarded instance of the interpreter under its own limits
//! (and never longer than the command may take), its filesystem the
//! read-only [`view`] of the calling operation served by [`vfs`], its
//! standard streams the command's, and its trail part of the operation's.
//! Nothing runs on the host.

pub(crate) mod vfs;
pub(crate) mod view;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::{EventSink, ToolErrorKind};
use serde::Deserialize;
use wasmtime::component::{HasData, Linker};

use crate::audit::Audit;
use crate::bindings::cordon::plugin::interpreters as wit;
use crate::bundle::{Bundle, Exports};
use crate::capabilities::CallBuilder;
use crate::capabilities::dirs::guard::FileGuard;
use crate::engine::Engine;
use crate::guarded::{self, Body};
use crate::manifest::{BundleKind, Grants, ManifestError, Validator};
use crate::sandbox::CallState;
use crate::workspace::CallFiles;

use view::{View, WorkspaceView};

/// Where an interpreter sees the calling operation's workspace.
pub(crate) const WORKSPACE_MOUNT: &str = "/workspace";

/// The `[interpreter]` table of an interpreter bundle's manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InterpreterTable {
    commands: Vec<String>,
}

/// Check `[interpreter]`: present, with at least one command, exactly for an
/// interpreter bundle, which may ask for no grant; give its commands.
pub(crate) fn validate(
    table: Option<InterpreterTable>,
    kind: BundleKind,
    grants: &Grants,
    check: &Validator<'_>,
) -> Result<Vec<String>, ManifestError> {
    match (kind, table) {
        (BundleKind::Interpreter, None) => Err(check.invalid(
            "interpreter.commands",
            Vec::<String>::new(),
            "an interpreter bundle names the commands it serves, such as [\"python3\", \"python\"]",
        )),
        (BundleKind::Interpreter, Some(table)) => {
            if table.commands.is_empty() {
                return Err(check.invalid(
                    "interpreter.commands",
                    &table.commands,
                    "name at least one command",
                ));
            }
            check.unique_names(
                "interpreter.commands",
                &table.commands,
                is_command_name,
                "a command is 1 to 64 of lowercase letters, digits, `.`, `_`, `+` and `-`",
            )?;
            if !grants.is_empty() {
                return Err(check.invalid(
                    "grants",
                    grants.summary(),
                    "an interpreter is granted nothing: each run sees exactly what its command sees",
                ));
            }
            Ok(table.commands)
        }
        (_, None) => Ok(Vec::new()),
        (kind, Some(_)) => Err(check.invalid(
            "interpreter",
            "[interpreter]",
            &format!("only `interpreter` bundles serve commands; this bundle's kind is `{kind}`"),
        )),
    }
}

fn is_command_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._+-".contains(c))
}

/// A run's interpreters, by the commands they serve; of two serving one
/// command, the first by bundle name.
#[derive(Clone, Default)]
pub(crate) struct Interpreters {
    by_command: BTreeMap<String, Arc<Bundle>>,
}

impl Interpreters {
    /// The interpreters among `bundles`.
    pub(crate) fn of(bundles: &[Arc<Bundle>]) -> Self {
        let mut by_command = BTreeMap::new();
        let mut sorted: Vec<&Arc<Bundle>> = bundles
            .iter()
            .filter(|bundle| matches!(bundle.exports, Exports::Interpreter(_)))
            .collect();
        sorted.sort_by(|a, b| a.manifest.name.cmp(&b.manifest.name));
        for bundle in sorted {
            for command in &bundle.manifest.commands {
                by_command
                    .entry(command.clone())
                    .or_insert_with(|| Arc::clone(bundle));
            }
        }
        Self { by_command }
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.by_command.is_empty()
    }

    /// The most slots of the instance pool one run of any of them takes.
    pub(crate) fn slots(&self) -> u32 {
        self.by_command
            .values()
            .map(|bundle| bundle.footprint.slots())
            .max()
            .unwrap_or(0)
    }
}

/// What a backend call's `interpreters` import runs with.
pub(crate) struct InterpreterAccess {
    pub(crate) interpreters: Interpreters,
    pub(crate) engine: Arc<Engine>,
    /// Where interpreters' events are shown as they happen.
    pub(crate) live: Arc<dyn EventSink>,
    pub(crate) guard: Arc<FileGuard>,
    /// The backend's workspace folder, canonical, when it has one.
    pub(crate) folder: Option<PathBuf>,
    /// The folders of the skills active for the call, by skill.
    pub(crate) skills: BTreeMap<String, PathBuf>,
}

/// A command an interpreter runs: its streams, its variables, its args.
pub(crate) struct CommandIo {
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) stdin: Vec<u8>,
}

/// The `interpreters` import as one call sees it.
pub(crate) struct InterpretersView<'a> {
    pub(crate) access: Option<&'a InterpreterAccess>,
    pub(crate) staging: Option<&'a CallFiles>,
    pub(crate) audit: &'a Audit,
}

struct InterpretersCapability;

impl HasData for InterpretersCapability {
    type Data<'a> = InterpretersView<'a>;
}

/// Link the `interpreters` import.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    wit::add_to_linker::<CallState, InterpretersCapability>(linker, CallState::interpreters_view)
}

/// The exit status of a command an interpreter did not finish: as a shell
/// reports a command its time limit ended, or one killed.
fn stopped_status(kind: ToolErrorKind) -> i32 {
    match kind {
        ToolErrorKind::Timeout => 124,
        _ => 137,
    }
}

/// `cwd` as the interpreter sees it: a workspace path under `/workspace`, a
/// skill's folder as it is.
fn interpreter_cwd(cwd: &str) -> String {
    if cwd.starts_with('/') {
        cwd.to_owned()
    } else if cwd.is_empty() {
        WORKSPACE_MOUNT.to_owned()
    } else {
        format!("{WORKSPACE_MOUNT}/{cwd}")
    }
}

impl wit::Host for InterpretersView<'_> {
    async fn run(
        &mut self,
        invocation: wit::Invocation,
    ) -> wasmtime::Result<Result<wit::Finished, wit::Refusal>> {
        let Some(access) = self.access else {
            return Ok(Err(wit::Refusal::Unknown));
        };
        let Some(bundle) = access.interpreters.by_command.get(&invocation.command) else {
            return Ok(Err(wit::Refusal::Unknown));
        };
        let staged = self
            .staging
            .map(|files| files.under(""))
            .unwrap_or_default();
        let view = WorkspaceView::new(access.folder.as_deref(), staged)
            .map_err(|error| format!("cannot open the workspace folder: {error}"))
            .and_then(|workspace| {
                View::new(Some(workspace), &access.skills, Arc::clone(&access.guard))
                    .map_err(|(path, error)| format!("cannot open {}: {error}", path.display()))
            });
        let view = match view {
            Ok(view) => view,
            Err(message) => return Ok(Err(wit::Refusal::Failed(message))),
        };
        let (finished, events) = run(access, bundle, view, invocation).await;
        self.audit.keep(events);
        Ok(Ok(finished))
    }
}

/// Run `invocation` in a fresh instance of the interpreter `bundle`, seeing
/// `view`: what it did, and its trail, shown live already.
async fn run(
    access: &InterpreterAccess,
    bundle: &Arc<Bundle>,
    view: View,
    invocation: wit::Invocation,
) -> (wit::Finished, Vec<cordon_kernel::Event>) {
    let Exports::Interpreter(indices) = &bundle.exports else {
        let finished = wit::Finished {
            exit_code: 126,
            stdout: Vec::new(),
            stderr: format!("{}: not an interpreter\n", invocation.command).into_bytes(),
            stdout_truncated: false,
            stderr_truncated: false,
        };
        return (finished, Vec::new());
    };
    let audit = Audit::new(&bundle.id(), Arc::clone(&access.live));
    let asked = Duration::from_millis(u64::from(invocation.timeout_ms.max(1)));
    let mut args = vec![invocation.command.clone()];
    args.extend(invocation.args.iter().cloned());
    let call = CallBuilder::new(
        bundle,
        &invocation.command,
        audit.clone(),
        Arc::clone(&access.guard),
    )
    .command(
        CommandIo {
            args,
            env: invocation.env.clone(),
            stdin: invocation.stdin,
        },
        vfs::Vfs::new(view),
    )
    .within_time(asked);
    let (indices, args, cwd, env) = (
        indices.clone(),
        invocation.args,
        interpreter_cwd(&invocation.cwd),
        invocation.env,
    );
    let body: Body<i32> = Box::new(move |store, instance| {
        Box::pin(async move {
            let guest = indices.load(&mut *store, &instance)?;
            guest.call_run(&mut *store, &args, &cwd, &env).await
        })
    });
    let finished = guarded::call(&access.engine, call, false, body).await;
    let output = finished
        .output
        .unwrap_or_else(|| crate::capabilities::log::CommandOutput {
            stdout: Vec::new(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
        });
    let mut stderr = output.stderr;
    let exit_code = match finished.result {
        Ok(code) => code,
        Err(error) => {
            stderr.extend_from_slice(
                format!("{}: stopped: {}\n", invocation.command, error.message).as_bytes(),
            );
            stopped_status(error.kind)
        }
    };
    let finished = wit::Finished {
        exit_code,
        stdout: output.stdout,
        stderr,
        stdout_truncated: output.stdout_truncated,
        stderr_truncated: output.stderr_truncated,
    };
    (finished, audit.take())
}
