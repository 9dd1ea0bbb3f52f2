//! `cordon runs diff`: the file changes a run committed, as a unified diff.
//! Over the whole run each path goes from what it held before its first change
//! to what it holds after its last; `--step` shows one step alone.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use cordon_kernel::{CommitStore, FileChange, FileState};
use cordon_store::SqliteCommitStore;
use similar::TextDiff;

use crate::args::DiffArgs;

pub fn diff(args: DiffArgs) -> anyhow::Result<ExitCode> {
    let store = SqliteCommitStore::open(&args.store.store)
        .with_context(|| format!("opening the run store {}", args.store.store.display()))?;
    let record = store.load(&args.run)?;
    let steps = store.files(&args.run)?;
    if let Some(step) = args.step
        && (step == 0 || step > record.last_seq())
    {
        bail!(
            "run {} has steps 1 to {}; there is no step {step}",
            args.run,
            record.last_seq()
        );
    }
    let mut net: BTreeMap<String, FileChange> = BTreeMap::new();
    for step in steps
        .into_iter()
        .filter(|step| args.step.is_none_or(|only| only == step.seq))
    {
        for change in step.changes {
            match net.get_mut(&change.path) {
                Some(existing) => existing.after = change.after,
                None => {
                    net.insert(change.path.clone(), change);
                }
            }
        }
    }
    let mut out = std::io::stdout().lock();
    for change in net.values().filter(|change| change.before != change.after) {
        out.write_all(render(change).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One path's change in unified diff form, which `patch -p1` applies.
fn render(change: &FileChange) -> String {
    let path = &change.path;
    match (&change.before, &change.after) {
        (FileState::Directory, FileState::Absent) => format!("Removed directory {path}/\n"),
        (FileState::Absent, FileState::Directory) => format!("New directory {path}/\n"),
        (before, after) => {
            let (old, new) = (text(before), text(after));
            let (Some(old), Some(new)) = (old, new) else {
                return format!("Binary files a/{path} and b/{path} differ\n");
            };
            let from = if matches!(before, FileState::File(_)) {
                format!("a/{path}")
            } else {
                "/dev/null".to_owned()
            };
            let to = if matches!(after, FileState::File(_)) {
                format!("b/{path}")
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

/// A side's text: empty for no file or a directory, `None` for bytes that
/// are not UTF-8.
fn text(state: &FileState) -> Option<&str> {
    match state {
        FileState::File(contents) => std::str::from_utf8(contents).ok(),
        FileState::Absent | FileState::Directory => Some(""),
    }
}
