//! Approval prompts on a terminal. Each pending call is shown readably (see
//! [`present`]) with why it asks and, for a tool that runs outside any
//! sandbox, which program runs it; the answer allows it once, allows its
//! tool for the rest of the run, denies it, or denies it with a reason the
//! model reads.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cordon_kernel::{Approval, ApprovalFuture, Approver, PendingCall};

use crate::present::present;

/// Asks on the terminal about each pending call; answers nothing when there is
/// no terminal, so the run pauses with a committed waiting outcome.
pub(crate) struct TerminalApprover {
    /// What to say of the calls of tools that run outside any sandbox.
    unsandboxed: BTreeMap<String, String>,
    /// Where a written file's current content is read from for its diff.
    folder: Option<PathBuf>,
    /// The tools allowed for the rest of the run.
    always: Arc<Mutex<BTreeSet<String>>>,
}

/// One answer a person typed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Typed {
    Once,
    Always,
    No,
    Because(String),
}

impl TerminalApprover {
    /// Whether prompts can be shown and answered.
    pub(crate) fn available() -> bool {
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }

    /// Prompts that show written files against `folder` and say of the tools
    /// `unsandboxed` names where they run.
    pub(crate) fn new(unsandboxed: BTreeMap<String, String>, folder: Option<PathBuf>) -> Self {
        Self {
            unsandboxed,
            folder,
            always: Arc::default(),
        }
    }

    fn question(&self, pending: &PendingCall) -> String {
        let why = pending
            .reason
            .asked()
            .unwrap_or_else(|| "it may already have run before the run stopped".into());
        let mut question = format!(
            "\n{}  {}  ({why})\n{}\n",
            pending.call.id,
            pending.call.name,
            present(&pending.call.args, self.folder.as_deref())
        );
        if let Some(note) = self.unsandboxed.get(&pending.call.name) {
            question.push_str(&format!("  {note}\n"));
        }
        question.push_str(&format!(
            "allow? [y]es once, [a]lways `{}` in this run, [n]o, [r] no with a reason: ",
            pending.call.name
        ));
        question
    }
}

impl Approver for TerminalApprover {
    fn decide<'a>(&'a self, pending: &'a [PendingCall]) -> ApprovalFuture<'a> {
        let asked: Vec<(String, Option<String>)> = {
            let always = self.always.lock().unwrap_or_else(|held| held.into_inner());
            pending
                .iter()
                .map(|call| {
                    let question = (!always.contains(&call.call.name)).then(|| self.question(call));
                    (call.call.name.clone(), question)
                })
                .collect()
        };
        let always = Arc::clone(&self.always);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask_all(&asked, &always))
                .await
                .ok()
                .flatten()
        })
    }
}

/// The answers to `asked` (each call's tool, and its question unless its
/// tool is allowed for the rest of the run), remembering the tools `always`
/// allowed; `None` when the terminal closes.
fn ask_all(
    asked: &[(String, Option<String>)],
    always: &Mutex<BTreeSet<String>>,
) -> Option<Vec<Approval>> {
    let stdin = std::io::stdin();
    let mut answers = Vec::with_capacity(asked.len());
    for (tool, question) in asked {
        let remembered = always
            .lock()
            .unwrap_or_else(|held| held.into_inner())
            .contains(tool);
        let Some(question) = question.as_deref().filter(|_| !remembered) else {
            eprintln!("\nallowed {tool}: allowed for the rest of the run");
            answers.push(Approval::Approve);
            continue;
        };
        eprint!("{question}");
        let typed = loop {
            std::io::stderr().flush().ok()?;
            let line = read_line(&stdin)?;
            match parse(&line) {
                Some(Typed::Because(reason)) if reason.is_empty() => {
                    eprint!("why? (the model reads it): ");
                    std::io::stderr().flush().ok()?;
                    let reason = read_line(&stdin)?;
                    break Typed::Because(reason.trim().to_owned());
                }
                Some(typed) => break typed,
                None => eprint!("answer y, a, n or r: "),
            }
        };
        answers.push(match typed {
            Typed::Once => Approval::Approve,
            Typed::Always => {
                always
                    .lock()
                    .unwrap_or_else(|held| held.into_inner())
                    .insert(tool.clone());
                Approval::Approve
            }
            Typed::No => Approval::Deny,
            Typed::Because(reason) if reason.is_empty() => Approval::Deny,
            Typed::Because(reason) => Approval::DenyBecause(reason),
        });
    }
    Some(answers)
}

/// One line from `stdin`; `None` at its end.
fn read_line(stdin: &std::io::Stdin) -> Option<String> {
    let mut line = String::new();
    (stdin.lock().read_line(&mut line).ok()? > 0).then_some(line)
}

/// What `line` answers: `r` alone asks for the reason next; `r REASON` gives it.
fn parse(line: &str) -> Option<Typed> {
    let line = line.trim();
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    match word.to_ascii_lowercase().as_str() {
        "y" | "yes" => Some(Typed::Once),
        "a" | "always" => Some(Typed::Always),
        "" | "n" | "no" => Some(Typed::No),
        "r" | "reason" => Some(Typed::Because(rest.trim().to_owned())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_as_once_always_no_and_no_with_a_reason() {
        assert_eq!(parse("y\n"), Some(Typed::Once));
        assert_eq!(parse("YES"), Some(Typed::Once));
        assert_eq!(parse("a"), Some(Typed::Always));
        assert_eq!(parse("\n"), Some(Typed::No), "enter denies");
        assert_eq!(parse("no"), Some(Typed::No));
        assert_eq!(
            parse("r  use the staging bucket "),
            Some(Typed::Because("use the staging bucket".into()))
        );
        assert_eq!(parse("r"), Some(Typed::Because(String::new())));
        assert_eq!(parse("maybe"), None);
    }
}
