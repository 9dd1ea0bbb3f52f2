//! Approval prompts on a terminal.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};

use cordon_kernel::{Approval, ApprovalFuture, Approver, PendingCall, PendingReason};

/// Asks on the terminal about each pending call; answers nothing when there is
/// no terminal, so the run pauses with a committed waiting outcome. A call of
/// a tool that runs outside any sandbox says so, as `unsandboxed` words it.
pub(crate) struct TerminalApprover {
    pub(crate) unsandboxed: BTreeMap<String, String>,
}

impl TerminalApprover {
    /// Whether prompts can be shown and answered.
    pub(crate) fn available() -> bool {
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }
}

impl Approver for TerminalApprover {
    fn decide<'a>(&'a self, pending: &'a [PendingCall]) -> ApprovalFuture<'a> {
        let questions: Vec<String> = pending
            .iter()
            .map(|pending| {
                let why = match &pending.reason {
                    PendingReason::Approval { rule: Some(rule) } => format!("rule `{rule}`"),
                    PendingReason::Approval { rule: None } => "the default permission".into(),
                    PendingReason::Indeterminate => "it may already have run".into(),
                };
                let reach = self
                    .unsandboxed
                    .get(&pending.call.name)
                    .map_or_else(String::new, |note| format!("\n  {note}\n"));
                format!(
                    "{reach}allow {} {} {}? ({why}) [y/N] ",
                    pending.call.id, pending.call.name, pending.call.args
                )
            })
            .collect();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask_all(&questions))
                .await
                .ok()
                .flatten()
        })
    }
}

fn ask_all(questions: &[String]) -> Option<Vec<Approval>> {
    let stdin = std::io::stdin();
    let mut answers = Vec::with_capacity(questions.len());
    for question in questions {
        eprint!("\n{question}");
        std::io::stderr().flush().ok()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line).ok()? == 0 {
            return None;
        }
        let yes = matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes");
        answers.push(if yes {
            Approval::Approve
        } else {
            Approval::Deny
        });
    }
    Some(answers)
}
