//! `cordon runs diff`: the file changes a run committed, as a unified diff.
//! Over the whole run each path goes from what it held before its first change
//! to what it holds after its last; `--step` shows one step alone.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use cordon_kernel::{FileChange, FileState};
use similar::TextDiff;

use crate::args::{GlobalArgs, StoreArg};
use crate::store;

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The run id (`last` for the newest run).
    pub run: String,
    /// Only the changes of this model step, as progress and `runs show`
    /// number them.
    #[arg(long)]
    pub step: Option<u32>,
    #[command(flatten)]
    pub store: StoreArg,
}

pub(crate) async fn diff(global: &GlobalArgs, args: DiffArgs) -> anyhow::Result<ExitCode> {
    let store = store::existing(&args.store.location(global)).await?;
    let run = store::run_named(&*store, &args.run).await?;
    let record = store.load(&run).await?;
    let step_of: BTreeMap<u64, u32> = record
        .commits
        .iter()
        .map(|commit| commit.seq)
        .zip(record.steps())
        .collect();
    let last = record.steps().last().copied().unwrap_or(0);
    if let Some(step) = args.step
        && (step == 0 || step > last)
    {
        bail!("run {run} has steps 1 to {last}; there is no step {step}");
    }
    let commits = store.files(&run).await?;
    let mut changed: Vec<u32> = commits
        .iter()
        .filter(|commit| !commit.changes.is_empty())
        .filter_map(|commit| step_of.get(&commit.seq).copied())
        .collect();
    changed.dedup();
    let mut net: BTreeMap<String, FileChange> = BTreeMap::new();
    for commit in commits.into_iter().filter(|commit| {
        args.step
            .is_none_or(|only| step_of.get(&commit.seq) == Some(&only))
    }) {
        for change in commit.changes {
            match net.get_mut(&change.path) {
                Some(existing) => existing.after = change.after,
                None => {
                    net.insert(change.path.clone(), change);
                }
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let mut shown = 0;
    for change in net.values().filter(|change| change.before != change.after) {
        out.write_all(render(change).as_bytes())?;
        shown += 1;
    }
    if shown == 0 {
        eprintln!("{}", nothing_changed(&run, args.step, &changed));
    }
    Ok(ExitCode::SUCCESS)
}

/// Why a diff is empty, and where the run's changes are, on stderr so the
/// diff itself stays empty for `patch`.
fn nothing_changed(run: &str, step: Option<u32>, changed: &[u32]) -> String {
    let steps: Vec<String> = changed.iter().map(u32::to_string).collect();
    match (step, changed) {
        (_, []) => format!("run {run} changed no files"),
        (Some(step), _) => format!(
            "step {step} of run {run} changed no files; its changes are in step(s) {} \
             (`cordon runs diff {run} --step N`)",
            steps.join(", ")
        ),
        (None, _) => format!(
            "run {run}'s changes in step(s) {} undo one another: nothing differs",
            steps.join(", ")
        ),
    }
}

/// One path's change in unified diff form, which `patch -p1` applies. Names
/// are quoted as git quotes them, so no name can forge a line of the diff.
pub(crate) fn render(change: &FileChange) -> String {
    let path = &change.path;
    match (&change.before, &change.after) {
        (FileState::Directory, FileState::Absent) => {
            format!("Removed directory {}\n", quoted("", &format!("{path}/")))
        }
        (FileState::Absent, FileState::Directory) => {
            format!("New directory {}\n", quoted("", &format!("{path}/")))
        }
        (before, after) => {
            let (old, new) = (text(before), text(after));
            let (Some(old), Some(new)) = (old, new) else {
                return format!(
                    "Binary files {} and {} differ\n",
                    quoted("a/", path),
                    quoted("b/", path)
                );
            };
            let from = if matches!(before, FileState::File(_)) {
                quoted("a/", path)
            } else {
                "/dev/null".to_owned()
            };
            let to = if matches!(after, FileState::File(_)) {
                quoted("b/", path)
            } else {
                "/dev/null".to_owned()
            };
            TextDiff::from_lines(old, new)
                .unified_diff()
                .context_radius(3)
                .header(&from, &to)
                .to_string()
        }
    }
}

/// `prefix` and `path` as git writes a file name: as they are when they hold
/// nothing unusual, otherwise in double quotes with `\n`, `\t`, `\"`, `\\`
/// and the like escaped, and every other control or non-ASCII byte as an
/// octal escape (`\303\251`).
fn quoted(prefix: &str, path: &str) -> String {
    let name = format!("{prefix}{path}");
    let unusual = |byte: u8| !(0x20..0x7f).contains(&byte) || byte == b'"' || byte == b'\\';
    if !name.bytes().any(unusual) {
        return name;
    }
    let mut out = String::with_capacity(name.len() + 8);
    out.push('"');
    for byte in name.bytes() {
        match byte {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            byte if unusual(byte) => out.push_str(&format!("\\{byte:03o}")),
            byte => out.push(char::from(byte)),
        }
    }
    out.push('"');
    out
}

/// A side's text: empty for no file or a directory, `None` for bytes that
/// are not UTF-8.
fn text(state: &FileState) -> Option<&str> {
    match state {
        FileState::File(contents) => std::str::from_utf8(contents).ok(),
        FileState::Absent | FileState::Directory => Some(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_git_quotes_them() {
        assert_eq!(quoted("a/", "src/main.rs"), "a/src/main.rs");
        assert_eq!(quoted("a/", "x\n+++ b/evil"), "\"a/x\\n+++ b/evil\"");
        assert_eq!(quoted("b/", "say \"hi\""), "\"b/say \\\"hi\\\"\"");
        assert_eq!(quoted("", "caf\u{e9}"), "\"caf\\303\\251\"");
        assert_eq!(quoted("", "esc\u{1b}[2J"), "\"esc\\033[2J\"");
    }

    #[test]
    fn a_name_with_a_newline_cannot_forge_a_header() {
        let change = FileChange {
            path: "x\n+++ b/etc/passwd".into(),
            before: FileState::Absent,
            after: FileState::File(b"hello\n".as_slice().into()),
        };
        let diff = render(&change);
        let headers: Vec<&str> = diff
            .lines()
            .filter(|line| line.starts_with("+++"))
            .collect();
        assert_eq!(headers, ["+++ \"b/x\\n+++ b/etc/passwd\""], "{diff}");
    }
}
