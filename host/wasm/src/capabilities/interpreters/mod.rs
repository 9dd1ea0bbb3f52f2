//! The interpreter capability. An interpreter bundle (`kind =
//! "interpreter"`) serves the commands its manifest names (`[interpreter]
//! commands = ["python3", "python"]`), a command bundle (`kind = "command"`)
//! the everyday commands its manifest names (`[command] names = ["tr",
//! "seq"]`), both through the `interpreter` interface, and neither is
//! granted anything: each run sees what its command sees. A sandbox backend's shell reaches interpreters
//! through the `interpreters` import, which only a backend's call holds. Each
//! run is a fresh, guarded instance of the interpreter under its own limits
//! (and never longer than the command may take), its filesystem the
//! [`view`] of the calling operation served by [`vfs`], its standard
//! streams the command's, and its trail part of the operation's. What the
//! run writes in the workspace ([`layer`], judged by [`writes`]) goes back
//! to the operation when it ends: into the call's staged layer when the run
//! stages (committed with the step, or with nothing if the call fails), or
//! published to the folder as the backend's own writes are when it does
//! not; its `/tmp` vanishes with it. Nothing runs on the host.

pub(crate) mod layer;
pub(crate) mod runner;
pub(crate) mod vfs;
pub(crate) mod view;
pub(crate) mod writes;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use std::future::Future;
use std::pin::Pin;

use cordon_kernel::Event;
use serde::Deserialize;
use wasmtime::component::{HasData, Linker};

use crate::audit::Audit;
use crate::bindings::cordon::plugin::interpreters as wit;
use crate::capabilities::dirs::guard::FileGuard;
use crate::capabilities::staging::StagingLimitExceeded;
use crate::capabilities::unit::Imports;
use crate::manifest::checks::{ManifestError, Validator};
use crate::manifest::kind::BundleKind;
use crate::workspace::folder::Folder;
use crate::workspace::staging::{CallFiles, OverQuota};

use view::{Shelf, View, WorkspaceView};

/// Where an interpreter sees the calling operation's workspace.
pub(crate) const WORKSPACE_MOUNT: &str = "/workspace";

/// The `[interpreter]` table of an interpreter bundle's manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InterpreterTable {
    commands: Vec<String>,
}

/// The `[command]` table of a command bundle's manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommandTable {
    names: Vec<String>,
}

/// Check `[interpreter]` and `[command]`: the one its kind needs, present,
/// naming at least one command, for a bundle that may ask for no grant;
/// give its commands.
pub(crate) fn validate(
    interpreter: Option<InterpreterTable>,
    command: Option<CommandTable>,
    kind: BundleKind,
    granted: Option<Vec<String>>,
    check: &Validator<'_>,
) -> Result<Vec<String>, ManifestError> {
    let (field, commands) = match (kind, interpreter, command) {
        (kind, Some(_), _) if kind != BundleKind::Interpreter => {
            return Err(check.invalid(
                "interpreter",
                "[interpreter]",
                &format!("only `interpreter` bundles have one; this bundle's kind is `{kind}`"),
            ));
        }
        (kind, _, Some(_)) if kind != BundleKind::Command => {
            return Err(check.invalid(
                "command",
                "[command]",
                &format!("only `command` bundles have one; this bundle's kind is `{kind}`"),
            ));
        }
        (BundleKind::Interpreter, Some(table), _) => ("interpreter.commands", table.commands),
        (BundleKind::Command, _, Some(table)) => ("command.names", table.names),
        (BundleKind::Interpreter, None, _) => {
            return Err(check.invalid(
                "interpreter.commands",
                Vec::<String>::new(),
                "an interpreter bundle names the commands it serves, such as [\"python3\", \"python\"]",
            ));
        }
        (BundleKind::Command, _, None) => {
            return Err(check.invalid(
                "command.names",
                Vec::<String>::new(),
                "a command bundle names the commands it serves, such as [\"tr\", \"seq\"]",
            ));
        }
        _ => return Ok(Vec::new()),
    };
    if commands.is_empty() {
        return Err(check.invalid(field, &commands, "name at least one command"));
    }
    check.unique_names(
        field,
        &commands,
        is_command_name,
        "a command is 1 to 64 of lowercase letters, digits, `.`, `_`, `+` and `-`",
    )?;
    if let Some(granted) = granted {
        return Err(check.invalid(
            "grants",
            granted,
            &format!(
                "a `{kind}` bundle is granted nothing: each run sees exactly what its command sees"
            ),
        ));
    }
    Ok(commands)
}

fn is_command_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._+-".contains(c))
}

/// What a backend call's `interpreters` import runs with.
pub(crate) struct InterpreterAccess {
    /// What runs them.
    pub(crate) runner: Arc<dyn Runner>,
    pub(crate) guard: Arc<FileGuard>,
    /// The backend's workspace folder, canonical, when it has one.
    pub(crate) folder: Option<PathBuf>,
    /// Whether the backend may write its folder itself (a run that does not
    /// stage); a staged run's writes go to its layer either way.
    pub(crate) folder_writable: bool,
    /// The folders of the skills active for the call, by skill.
    pub(crate) skills: BTreeMap<String, PathBuf>,
    /// The package folders of those skills that have approved packages, by
    /// skill.
    pub(crate) packages: BTreeMap<String, PathBuf>,
}

/// The variable a Python interpreter reads its package folders from.
const PYTHONPATH: &str = "PYTHONPATH";

/// `env` with each package folder (`/packages/NAME`) ahead of whatever
/// `PYTHONPATH` already named.
fn with_packages(
    mut env: Vec<(String, String)>,
    packages: &BTreeMap<String, PathBuf>,
) -> Vec<(String, String)> {
    if packages.is_empty() {
        return env;
    }
    let mut entries: Vec<String> = packages
        .keys()
        .map(|skill| format!("/{}/{skill}", Shelf::Packages.name()))
        .collect();
    if let Some(at) = env.iter().position(|(name, _)| name == PYTHONPATH) {
        let (_, given) = env.remove(at);
        entries.extend(
            given
                .split(':')
                .filter(|entry| !entry.is_empty())
                .map(str::to_owned),
        );
    }
    env.push((PYTHONPATH.to_owned(), entries.join(":")));
    env
}

/// What runs a command's interpreter: a fresh guarded instance of it, which
/// only the layer that runs calls can make. This module decides what a run
/// may see; the runner makes the run.
pub(crate) trait Runner: Send + Sync {
    /// Whether an interpreter serves `command`.
    fn serves(&self, command: &str) -> bool;

    /// Slots of the instance pool one run of any interpreter holds.
    fn slots(&self) -> u32;

    /// Run `invocation` in the interpreter that serves its command, its
    /// files the read-only `view`: what it came to, and its trail.
    fn run(&self, view: View, invocation: wit::Invocation) -> Run<'_>;
}

/// A run of an interpreter, under way.
pub(crate) type Run<'a> = Pin<Box<dyn Future<Output = (wit::Finished, Vec<Event>)> + Send + 'a>>;

/// A command an interpreter runs: its streams, its variables, its args.
pub(crate) struct CommandIo {
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) stdin: Vec<u8>,
}

/// The `interpreters` import as one call sees it.
pub(crate) struct InterpretersView<'a> {
    pub(crate) access: Option<&'a InterpreterAccess>,
    pub(crate) staging: Option<&'a mut CallFiles>,
    pub(crate) audit: &'a Audit,
}

/// The interpreter capability, which only a backend's call holds.
pub(crate) struct RunInterpreters;

impl HasData for RunInterpreters {
    type Data<'a> = InterpretersView<'a>;
}

impl Imports for RunInterpreters {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()> {
        wit::add_to_linker::<T, Self>(linker, get)?;
        Ok(())
    }
}

impl wit::Host for InterpretersView<'_> {
    async fn run(
        &mut self,
        mut invocation: wit::Invocation,
    ) -> wasmtime::Result<Result<wit::Finished, wit::Refusal>> {
        let Some(access) = self.access else {
            return Ok(Err(wit::Refusal::Unknown));
        };
        if !access.runner.serves(&invocation.command) {
            return Ok(Err(wit::Refusal::Unknown));
        }
        let staged = self
            .staging
            .as_deref()
            .map(|files| files.under(""))
            .unwrap_or_default();
        let writable = self.staging.is_some() || access.folder_writable;
        let view = WorkspaceView::new(access.folder.as_deref(), staged, writable)
            .map_err(|error| format!("cannot open the workspace folder: {error}"))
            .and_then(|workspace| {
                let shelves = BTreeMap::from([
                    (Shelf::Skills, access.skills.clone()),
                    (Shelf::Packages, access.packages.clone()),
                ]);
                View::new(Some(workspace), &shelves, Arc::clone(&access.guard))
                    .map_err(|(path, error)| format!("cannot open {}: {error}", path.display()))
            });
        let view = match view {
            Ok(view) => view,
            Err(message) => return Ok(Err(wit::Refusal::Failed(message))),
        };
        let layer = view.layer();
        invocation.env = with_packages(std::mem::take(&mut invocation.env), &access.packages);
        let invocation_command = invocation.command.clone();
        let (mut finished, events) = access.runner.run(view, invocation).await;
        self.audit.keep(events);
        let written = std::mem::take(&mut *layer::lock(&layer));
        for tree in written.overflowed() {
            // A program sees only an I/O error: say what ran out.
            finished.stderr.extend_from_slice(
                format!("{}: {}\n", invocation_command, tree.full_message()).as_bytes(),
            );
        }
        let changes = written.into_changes();
        if changes.is_empty() {
            return Ok(Ok(finished));
        }
        match self.staging.as_deref_mut() {
            Some(files) => {
                for (path, state) in changes {
                    if let Err(OverQuota(detail)) = files.put(path, state) {
                        // Stops the backend; its call ends as a `limit`.
                        return Err(StagingLimitExceeded(detail).into());
                    }
                }
            }
            None => {
                let published = access
                    .folder
                    .as_deref()
                    .map(|folder| Folder::open(folder).map_err(|error| error.to_string()))
                    .transpose()
                    .and_then(|folder| match folder {
                        Some(folder) => folder
                            .publish(changes.iter())
                            .map_err(|stopped| stopped.error.message),
                        None => Ok(()),
                    });
                if let Err(message) = published {
                    finished.stderr.extend_from_slice(
                        format!("cannot write the workspace: {message}\n").as_bytes(),
                    );
                    if finished.exit_code == 0 {
                        finished.exit_code = 1;
                    }
                }
            }
        }
        Ok(Ok(finished))
    }
}
