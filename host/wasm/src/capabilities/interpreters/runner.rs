//! How an interpreter's run is made: a fresh, guarded instance of the
//! interpreter bundle that serves the command, under its own limits (and
//! never longer than the command may take), its filesystem the read-only
//! view the capability gives it, its standard streams the command's. The
//! layer that runs calls provides this to the capability as its [`Runner`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::{Event, EventSink, ToolErrorKind};

use super::vfs::Vfs;
use super::view::View;
use super::{CommandIo, Run, Runner, WORKSPACE_MOUNT};
use crate::audit::Audit;
use crate::bindings::cordon::plugin::interpreters as wit;
use crate::bundle::{Bundle, Exports};
use crate::capabilities::dirs::guard::FileGuard;
use crate::capabilities::log::CommandOutput;
use crate::engine::Engine;
use crate::guarded::{self, Body};
use crate::sandbox::builder::CallBuilder;

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

/// Runs of a backend call's interpreters.
pub(crate) struct Runs {
    pub(crate) interpreters: Interpreters,
    pub(crate) engine: Arc<Engine>,
    /// Where interpreters' events are shown as they happen.
    pub(crate) live: Arc<dyn EventSink>,
    pub(crate) guard: Arc<FileGuard>,
}

impl Runner for Runs {
    fn serves(&self, command: &str) -> bool {
        self.interpreters.by_command.contains_key(command)
    }

    fn slots(&self) -> u32 {
        self.interpreters.slots()
    }

    fn run(&self, view: View, invocation: wit::Invocation) -> Run<'_> {
        Box::pin(async move {
            match self.interpreters.by_command.get(&invocation.command) {
                Some(bundle) => run(self, bundle, view, invocation).await,
                None => (not_an_interpreter(&invocation.command), Vec::new()),
            }
        })
    }
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

/// Run `invocation` in a fresh instance of the interpreter `bundle`, seeing
/// `view`: what it did, and its trail, shown live already.
async fn run(
    runs: &Runs,
    bundle: &Arc<Bundle>,
    view: View,
    invocation: wit::Invocation,
) -> (wit::Finished, Vec<Event>) {
    let Exports::Interpreter(indices) = &bundle.exports else {
        return (not_an_interpreter(&invocation.command), Vec::new());
    };
    let audit = Audit::new(bundle.id(), Arc::clone(&runs.live));
    let asked = Duration::from_millis(u64::from(invocation.timeout_ms.max(1)));
    let mut args = vec![invocation.command.clone()];
    args.extend(invocation.args.iter().cloned());
    let call = CallBuilder::new(
        bundle,
        &invocation.command,
        audit.clone(),
        Arc::clone(&runs.guard),
    )
    .command(
        CommandIo {
            args,
            env: invocation.env.clone(),
            stdin: invocation.stdin,
        },
        Vfs::new(view),
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
    let finished = guarded::call(&runs.engine, call, false, body).await;
    let output = finished.output.unwrap_or_else(|| CommandOutput {
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

/// What a command no interpreter serves comes to.
fn not_an_interpreter(command: &str) -> wit::Finished {
    wit::Finished {
        exit_code: 126,
        stdout: Vec::new(),
        stderr: format!("{command}: not an interpreter\n").into_bytes(),
        stdout_truncated: false,
        stderr_truncated: false,
    }
}
