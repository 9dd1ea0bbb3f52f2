//! The host's interpreters, imported through WIT, as the kit's [`Interpreters`].

use crate::cordon::plugin::interpreters as wit;
use cordon_sandbox_kit::{Interpreters, Invocation, NotRun, Ran};

/// The `interpreters` import.
pub(crate) struct HostInterpreters;

impl Interpreters for HostInterpreters {
    fn run(&self, invocation: Invocation) -> Result<Ran, NotRun> {
        let invocation = wit::Invocation {
            command: invocation.command,
            args: invocation.args,
            cwd: invocation.cwd,
            env: invocation.env,
            stdin: invocation.stdin,
            timeout_ms: invocation.timeout_ms,
        };
        match wit::run(&invocation) {
            Ok(done) => Ok(Ran {
                exit_code: done.exit_code,
                stdout: done.stdout,
                stderr: done.stderr,
                stdout_truncated: done.stdout_truncated,
                stderr_truncated: done.stderr_truncated,
            }),
            Err(wit::Refusal::Unknown) => Err(NotRun::Unknown),
            Err(wit::Refusal::Failed(message)) => Err(NotRun::Failed(message)),
        }
    }
}
