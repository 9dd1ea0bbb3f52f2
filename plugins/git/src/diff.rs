//! `git diff`: the working tree against the index, the index against
//! `HEAD` (`--cached`), the working tree against a commit, or two commits;
//! as a patch, `--stat`, `--name-only`, `--name-status`, or only an exit
//! status (`--quiet`, `--exit-code`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use gix::ObjectId;

use crate::failure::{Failure, OrFatal};
use crate::patch::{self, Side};
use crate::revisions::resolve;

/// A file's blob and mode in one version of the tree.
#[derive(Clone, PartialEq)]
pub struct Version {
    pub id: ObjectId,
    pub mode: &'static str,
}

/// Paths to their versions.
pub type Snapshot = BTreeMap<String, Version>;

/// How changes are shown.
#[derive(Clone, Copy, PartialEq)]
pub enum Shown {
    Patch,
    Stat,
    NameOnly,
    NameStatus,
    Nothing,
}

/// The files of the tree of `commit`.
pub fn commit_files(repo: &gix::Repository, commit: ObjectId) -> Result<Snapshot, Failure> {
    let tree = repo.find_commit(commit).or_fatal()?.tree().or_fatal()?;
    let mut recorder = gix::traverse::tree::Recorder::default();
    tree.traverse().breadthfirst(&mut recorder).or_fatal()?;
    Ok(recorder
        .records
        .into_iter()
        .filter(|entry| !entry.mode.is_tree())
        .map(|entry| {
            let version = Version {
                id: entry.oid,
                mode: patch::mode_text(entry.mode),
            };
            (entry.filepath.to_string(), version)
        })
        .collect())
}

/// The files the index holds.
fn index_files(repo: &gix::Repository) -> Result<Snapshot, Failure> {
    let index = repo.index_or_empty().or_fatal()?;
    Ok(index
        .entries()
        .iter()
        .map(|entry| {
            let mode = entry
                .mode
                .to_tree_entry_mode()
                .map_or("100644", patch::mode_text);
            let version = Version { id: entry.id, mode };
            (entry.path(&index).to_string(), version)
        })
        .collect())
}

/// The working tree's files among `paths`, hashed as git would store them.
fn worktree_files(
    repo: &gix::Repository,
    paths: impl Iterator<Item = (String, &'static str)>,
) -> Result<Snapshot, Failure> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| Failure::fatal("this operation must be run in a work tree"))?
        .to_owned();
    let mut files = Snapshot::new();
    for (path, mode) in paths {
        if let Ok(data) = std::fs::read(workdir.join(&path)) {
            let id = patch::blob_id(repo, &data);
            files.insert(path, Version { id, mode });
        }
    }
    Ok(files)
}

/// A version's bytes: the blob's, or the working tree file's when the blob
/// is not in the repository.
fn contents(repo: &gix::Repository, path: &str, version: &Version) -> Vec<u8> {
    match repo.find_object(version.id) {
        Ok(object) => object.detach().data,
        Err(_) => repo
            .workdir()
            .and_then(|workdir| std::fs::read(workdir.join(path)).ok())
            .unwrap_or_default(),
    }
}

/// `git diff [OPTION]... [--cached] [COMMIT [COMMIT]] [-- PATH...]`.
pub fn run(repo: &gix::Repository, args: &[String], out: &mut dyn Write) -> Result<i32, Failure> {
    let mut shown = Shown::Patch;
    let mut cached = false;
    let mut exit_code = false;
    let mut revisions = Vec::new();
    let mut paths = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cached" | "--staged" => cached = true,
            "--stat" => shown = Shown::Stat,
            "--name-only" => shown = Shown::NameOnly,
            "--name-status" => shown = Shown::NameStatus,
            "--quiet" => (shown, exit_code) = (Shown::Nothing, true),
            "--exit-code" => exit_code = true,
            "-p" | "--patch" | "--no-color" | "--no-ext-diff" => {}
            "--" => paths.extend(args.by_ref().cloned()),
            option if option.starts_with('-') => {
                return Err(Failure::usage(format!(
                    "unknown option {option}; diff here takes --cached, --stat, \
                     --name-only, --name-status, --quiet and --exit-code"
                )));
            }
            word if repo.rev_parse_single(word).is_err()
                && !word.contains("..")
                && std::path::Path::new(word).exists() =>
            {
                // Like git, a word that names no revision but a path of
                // the working tree is a path.
                paths.push(word.to_owned());
            }
            revision => match revision.split_once("..") {
                Some((from, to)) => {
                    revisions.push(resolve(repo, if from.is_empty() { "HEAD" } else { from })?);
                    revisions.push(resolve(repo, if to.is_empty() { "HEAD" } else { to })?);
                }
                None => revisions.push(resolve(repo, revision)?),
            },
        }
    }
    let (old, new) = match (revisions.as_slice(), cached) {
        ([], false) => {
            let index = index_files(repo)?;
            let worktree = worktree_files(repo, modes(&index))?;
            (index, worktree)
        }
        ([], true) => {
            let head = match repo.head_id() {
                Ok(id) => commit_files(repo, id.detach())?,
                Err(_) => Snapshot::new(),
            };
            (head, index_files(repo)?)
        }
        ([commit], true) => (commit_files(repo, *commit)?, index_files(repo)?),
        ([commit], false) => {
            let old = commit_files(repo, *commit)?;
            let index = index_files(repo)?;
            let tracked = modes(&old).chain(modes(&index));
            let worktree = worktree_files(repo, tracked)?;
            (old, worktree)
        }
        ([from, to], false) => (commit_files(repo, *from)?, commit_files(repo, *to)?),
        _ => return Err(Failure::usage("diff compares at most two commits")),
    };
    let changed = write_changes(repo, &old, &new, &paths, shown, out)?;
    Ok(i32::from(exit_code && changed))
}

fn modes(snapshot: &Snapshot) -> impl Iterator<Item = (String, &'static str)> + '_ {
    snapshot
        .iter()
        .map(|(path, version)| (path.clone(), version.mode))
}

/// Writes the changes from `old` to `new` under `paths` (all when empty) as
/// `shown` says; whether anything changed.
pub fn write_changes(
    repo: &gix::Repository,
    old: &Snapshot,
    new: &Snapshot,
    paths: &[String],
    shown: Shown,
    out: &mut dyn Write,
) -> Result<bool, Failure> {
    let under = |path: &str| {
        paths.is_empty()
            || paths.iter().any(|prefix| {
                let prefix = prefix.trim_end_matches('/');
                prefix == "." || path == prefix || path.starts_with(&format!("{prefix}/"))
            })
    };
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut stats = Vec::new();
    let mut changed = false;
    for name in names.into_iter().filter(|name| under(name)) {
        let (before, after) = (old.get(name), new.get(name));
        if before == after {
            continue;
        }
        changed = true;
        let letter = match (before, after) {
            (None, _) => 'A',
            (_, None) => 'D',
            _ => 'M',
        };
        match shown {
            Shown::Nothing => return Ok(true),
            Shown::NameOnly => writeln!(out, "{name}")?,
            Shown::NameStatus => writeln!(out, "{letter}\t{name}")?,
            Shown::Patch | Shown::Stat => {
                let old_data = before.map(|version| contents(repo, name, version));
                let new_data = after.map(|version| contents(repo, name, version));
                if shown == Shown::Stat {
                    let counts = patch::counts(
                        old_data.as_deref().unwrap_or_default(),
                        new_data.as_deref().unwrap_or_default(),
                    );
                    stats.push((name.clone(), counts));
                    continue;
                }
                let old_view = side(name, before, old_data.as_deref());
                let new_view = side(name, after, new_data.as_deref());
                patch::write(out, old_view.as_ref(), new_view.as_ref())?;
            }
        }
    }
    if shown == Shown::Stat && !stats.is_empty() {
        write_stat(out, &stats)?;
    }
    Ok(changed)
}

/// One side of a change for the patch printer.
fn side<'a>(path: &'a str, version: Option<&Version>, data: Option<&'a [u8]>) -> Option<Side<'a>> {
    version.zip(data).map(|(version, data)| Side {
        path,
        id: version.id,
        mode: version.mode,
        data,
    })
}

/// Git's `--stat`: each file with its count of changed lines and a bar of
/// `+` and `-`, then the totals.
fn write_stat(out: &mut dyn Write, stats: &[(String, (usize, usize))]) -> std::io::Result<()> {
    let name_width = stats
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0);
    let most = stats
        .iter()
        .map(|(_, (added, removed))| added + removed)
        .max()
        .unwrap_or(0);
    let count_width = most.to_string().len();
    // The bar gets what is left of 80 columns, as git's does.
    let bar_width = 80usize.saturating_sub(name_width + count_width + 6).max(10);
    let (mut added_total, mut removed_total) = (0, 0);
    for (name, (added, removed)) in stats {
        added_total += added;
        removed_total += removed;
        let total = added + removed;
        let (plus, minus) = if most > bar_width {
            let scale = |n: usize| {
                if n == 0 {
                    0
                } else {
                    (n * bar_width / most).max(1)
                }
            };
            (scale(*added), scale(*removed))
        } else {
            (*added, *removed)
        };
        writeln!(
            out,
            " {name:<name_width$} | {total:>count_width$} {}{}",
            "+".repeat(plus),
            "-".repeat(minus)
        )?;
    }
    let files = stats.len();
    let mut summary = format!(" {files} file{} changed", if files == 1 { "" } else { "s" });
    if added_total > 0 || removed_total == 0 {
        summary.push_str(&format!(
            ", {added_total} insertion{}(+)",
            if added_total == 1 { "" } else { "s" }
        ));
    }
    if removed_total > 0 || added_total == 0 {
        summary.push_str(&format!(
            ", {removed_total} deletion{}(-)",
            if removed_total == 1 { "" } else { "s" }
        ));
    }
    writeln!(out, "{summary}")
}
