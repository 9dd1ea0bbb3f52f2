//! `git status`: what the index holds against `HEAD`, and the working tree
//! against the index, in git's long form, `--short` or `--porcelain`.

use std::collections::BTreeMap;
use std::io::Write;

use gix::status::index_worktree;
use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};

use crate::failure::{Failure, OrFatal};

/// One path's state: its letter against `HEAD` (`X`) and against the index
/// (`Y`), git's short-format columns; `??` for an untracked path.
#[derive(Clone, Copy, Default)]
pub struct Letters {
    pub staged: Option<char>,
    pub unstaged: Option<char>,
    pub untracked: bool,
}

/// Every changed path, by path; a rename is shown under its new path as
/// `old -> new`.
pub type Changes = BTreeMap<String, Letters>;

/// The repository's changes.
pub fn changes(repo: &gix::Repository) -> Result<Changes, Failure> {
    let mut changes = Changes::new();
    let items = repo
        .status(gix::progress::Discard)
        .or_fatal()?
        .untracked_files(gix::status::UntrackedFiles::Collapsed)
        .into_iter(None)
        .or_fatal()?;
    for item in items {
        match item.or_fatal()? {
            gix::status::Item::IndexWorktree(item) => worktree_change(&mut changes, item),
            gix::status::Item::TreeIndex(change) => {
                use gix::diff::index::ChangeRef;
                let (path, letter) = match &change {
                    ChangeRef::Addition { location, .. } => (location.to_string(), 'A'),
                    ChangeRef::Deletion { location, .. } => (location.to_string(), 'D'),
                    ChangeRef::Modification { location, .. } => (location.to_string(), 'M'),
                    ChangeRef::Rewrite {
                        source_location,
                        location,
                        copy,
                        ..
                    } => (
                        format!("{source_location} -> {location}"),
                        if *copy { 'C' } else { 'R' },
                    ),
                };
                changes.entry(path).or_default().staged = Some(letter);
            }
        }
    }
    Ok(changes)
}

fn worktree_change(changes: &mut Changes, item: index_worktree::Item) {
    match item {
        index_worktree::Item::Modification {
            rela_path, status, ..
        } => {
            let letter = match status {
                EntryStatus::Conflict { .. } => 'U',
                EntryStatus::Change(Change::Removed) => 'D',
                EntryStatus::Change(Change::Type { .. }) => 'T',
                EntryStatus::Change(_) => 'M',
                EntryStatus::IntentToAdd => 'A',
                EntryStatus::NeedsUpdate(_) => return,
            };
            changes.entry(rela_path.to_string()).or_default().unstaged = Some(letter);
        }
        index_worktree::Item::DirectoryContents { entry, .. } => untracked(changes, &entry),
        index_worktree::Item::Rewrite {
            source,
            dirwalk_entry,
            ..
        } => {
            changes
                .entry(source.rela_path().to_string())
                .or_default()
                .unstaged = Some('D');
            untracked(changes, &dirwalk_entry);
        }
    }
}

fn untracked(changes: &mut Changes, entry: &gix::dir::Entry) {
    if entry.status != gix::dir::entry::Status::Untracked {
        return;
    }
    let mut path = entry.rela_path.to_string();
    if entry.disk_kind == Some(gix::dir::entry::Kind::Directory) {
        path.push('/');
    }
    changes.entry(path).or_default().untracked = true;
}

/// `git status [-s | --short | --porcelain] [-b]`.
pub fn run(repo: &gix::Repository, args: &[String], out: &mut dyn Write) -> Result<i32, Failure> {
    let mut short = false;
    let mut branch = false;
    for arg in args {
        match arg.as_str() {
            "-s" | "--short" | "--porcelain" | "--porcelain=v1" => short = true,
            "-b" | "--branch" => branch = true,
            "-sb" | "-bs" => (short, branch) = (true, true),
            "-uall" | "--untracked-files=all" | "-unormal" => {}
            other => {
                return Err(Failure::usage(format!(
                    "unknown option {other}; status here takes -s, --short, --porcelain and -b"
                )));
            }
        }
    }
    let changes = changes(repo)?;
    if short {
        if branch {
            writeln!(
                out,
                "## {}",
                branch_name(repo)?.unwrap_or_else(|| "HEAD (no branch)".to_owned())
            )?;
        }
        // Tracked paths first, then untracked ones, each in path order.
        for (path, letters) in changes.iter().filter(|(_, letters)| !letters.untracked) {
            writeln!(
                out,
                "{}{} {}",
                letters.staged.unwrap_or(' '),
                letters.unstaged.unwrap_or(' '),
                quoted(path)
            )?;
        }
        for (path, _) in changes.iter().filter(|(_, letters)| letters.untracked) {
            writeln!(out, "?? {}", quoted(path))?;
        }
        return Ok(0);
    }
    long(repo, &changes, out)?;
    Ok(0)
}

fn branch_name(repo: &gix::Repository) -> Result<Option<String>, Failure> {
    Ok(repo
        .head_name()
        .or_fatal()?
        .map(|name| name.shorten().to_string()))
}

/// Git's long format.
fn long(repo: &gix::Repository, changes: &Changes, out: &mut dyn Write) -> Result<(), Failure> {
    match branch_name(repo)? {
        Some(name) => writeln!(out, "On branch {name}")?,
        None => {
            let head = repo.head_id().or_fatal()?;
            writeln!(out, "HEAD detached at {}", head.to_hex_with_len(7))?;
        }
    }
    let unborn = repo.head().or_fatal()?.is_unborn();
    if unborn {
        writeln!(out, "\nNo commits yet")?;
    }
    let staged: Vec<_> = changes
        .iter()
        .filter_map(|(path, letters)| letters.staged.map(|letter| (path, letter)))
        .collect();
    let unstaged: Vec<_> = changes
        .iter()
        .filter_map(|(path, letters)| letters.unstaged.map(|letter| (path, letter)))
        .collect();
    let untracked: Vec<_> = changes
        .iter()
        .filter(|(_, letters)| letters.untracked)
        .map(|(path, _)| path)
        .collect();
    if !staged.is_empty() {
        writeln!(out, "Changes to be committed:")?;
        if unborn {
            writeln!(out, "  (use \"git rm --cached <file>...\" to unstage)")?;
        } else {
            writeln!(out, "  (use \"git restore --staged <file>...\" to unstage)")?;
        }
        for (path, letter) in &staged {
            writeln!(out, "\t{}{}", describe(*letter), quoted(path))?;
        }
        writeln!(out)?;
    }
    if !unstaged.is_empty() {
        writeln!(out, "Changes not staged for commit:")?;
        let removed = unstaged.iter().any(|(_, letter)| *letter == 'D');
        let verb = if removed { "add/rm" } else { "add" };
        writeln!(
            out,
            "  (use \"git {verb} <file>...\" to update what will be committed)"
        )?;
        writeln!(
            out,
            "  (use \"git restore <file>...\" to discard changes in working directory)"
        )?;
        for (path, letter) in &unstaged {
            writeln!(out, "\t{}{}", describe(*letter), quoted(path))?;
        }
        writeln!(out)?;
    }
    if !untracked.is_empty() {
        writeln!(out, "Untracked files:")?;
        writeln!(
            out,
            "  (use \"git add <file>...\" to include in what will be committed)"
        )?;
        for path in &untracked {
            writeln!(out, "\t{}", quoted(path))?;
        }
        writeln!(out)?;
    }
    let summary = match (staged.is_empty(), unstaged.is_empty(), untracked.is_empty()) {
        (false, _, _) => None,
        (true, false, _) => {
            Some("no changes added to commit (use \"git add\" and/or \"git commit -a\")")
        }
        (true, true, false) => {
            Some("nothing added to commit but untracked files present (use \"git add\" to track)")
        }
        (true, true, true) if unborn => {
            Some("nothing to commit (create/copy files and use \"git add\" to track)")
        }
        (true, true, true) => Some("nothing to commit, working tree clean"),
    };
    if let Some(summary) = summary {
        writeln!(out, "{summary}")?;
    }
    Ok(())
}

/// The long format's words for a letter, padded as git pads them.
fn describe(letter: char) -> &'static str {
    match letter {
        'A' => "new file:   ",
        'D' => "deleted:    ",
        'R' => "renamed:    ",
        'C' => "copied:     ",
        'T' => "typechange: ",
        'U' => "both modified:   ",
        _ => "modified:   ",
    }
}

/// A path as git prints it: in double quotes when it holds a space-like or
/// special character.
fn quoted(path: &str) -> String {
    if path.contains(" -> ") {
        return path.to_owned();
    }
    if path
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control() || !c.is_ascii())
    {
        format!("{path:?}")
    } else {
        path.to_owned()
    }
}
