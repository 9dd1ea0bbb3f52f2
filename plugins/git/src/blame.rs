//! `git blame FILE`: the commit, author and date that last changed each
//! line, in git's default format (`^` marks lines from a root commit).

use std::collections::HashMap;
use std::io::Write;

use gix::ObjectId;
use gix::bstr::{BStr, ByteSlice};

use crate::failure::{Failure, OrFatal};
use crate::revisions::resolve;

/// A line of the file: the commit that made it (`None` when not committed
/// yet), its 1-based number, and its bytes.
type Line = (Option<ObjectId>, usize, Vec<u8>);

/// `git blame [-L START,END] [-s] [REV] [--] FILE`.
pub fn run(repo: &gix::Repository, args: &[String], out: &mut dyn Write) -> Result<i32, Failure> {
    let mut range: Option<(u32, u32)> = None;
    let mut suppress = false;
    let mut operands = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-L" => {
                let text = args
                    .next()
                    .ok_or_else(|| Failure::usage("-L needs START,END"))?;
                range = Some(line_range(text)?);
            }
            "-s" => suppress = true,
            "--" => operands.extend(args.by_ref().cloned()),
            _ => {
                if let Some(text) = arg.strip_prefix("-L") {
                    range = Some(line_range(text)?);
                } else if arg.starts_with('-') {
                    return Err(Failure::usage(format!(
                        "unknown option {arg}; blame here takes -L START,END and -s"
                    )));
                } else {
                    operands.push(arg.clone());
                }
            }
        }
    }
    // Without a revision, git blames the working tree's file: lines not
    // yet committed are "Not Committed Yet".
    let (revision, path, worktree) = match operands.as_slice() {
        [path] => ("HEAD", path.as_str(), true),
        [revision, path] => (revision.as_str(), path.as_str(), false),
        _ => return Err(Failure::usage("blame takes [REV] FILE")),
    };
    let suspect = resolve(repo, revision)?;
    let path = path.trim_start_matches("./");
    let options = gix::repository::blame_file::Options::default();
    let outcome = repo
        .blame_file(BStr::new(path.as_bytes()), suspect, options)
        .map_err(|_| Failure::fatal(format!("no such path '{path}' in {revision}")))?;

    let mut people: HashMap<ObjectId, (String, String, bool)> = HashMap::new();
    let mut committed: Vec<(ObjectId, usize, Vec<u8>)> = Vec::new();
    for (entry, entry_lines) in outcome.entries_with_lines() {
        if let std::collections::hash_map::Entry::Vacant(slot) = people.entry(entry.commit_id) {
            let commit = repo.find_commit(entry.commit_id).or_fatal()?;
            let author = commit.author().or_fatal()?;
            let date = author
                .time()
                .or_fatal()?
                .format(gix::date::time::format::ISO8601)
                .or_fatal()?;
            let root = commit.parent_ids().next().is_none();
            slot.insert((author.name.to_string(), date, root));
        }
        for (offset, line) in entry_lines.into_iter().enumerate() {
            let number = entry.start_in_blamed_file as usize + offset;
            committed.push((entry.commit_id, number, line.into()));
        }
    }
    committed.sort_by_key(|(_, number, _)| *number);
    let mut lines: Vec<Line> = if worktree {
        working_lines(path, &committed)?
    } else {
        committed
            .into_iter()
            .map(|(commit, number, line)| (Some(commit), number + 1, line))
            .collect()
    };
    if let Some((start, end)) = range {
        lines.retain(|(_, number, _)| (start as usize..=end as usize).contains(number));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() as i64);
    let uncommitted = (
        "Not Committed Yet".to_owned(),
        gix::date::Time::new(now, 0)
            .format(gix::date::time::format::ISO8601)
            .or_fatal()?,
        false,
    );
    let person = |commit: &Option<ObjectId>| match commit {
        Some(commit) => &people[commit],
        None => &uncommitted,
    };
    let name_width = lines
        .iter()
        .map(|(commit, _, _)| person(commit).0.chars().count())
        .max()
        .unwrap_or(0);
    let number_width = lines
        .last()
        .map_or(1, |(_, number, _)| number.to_string().len());
    for (commit, number, line) in &lines {
        let (name, date, root) = person(commit);
        let id = match commit {
            Some(commit) if *root => format!("^{}", commit.to_hex_with_len(7)),
            Some(commit) => commit.to_hex_with_len(8).to_string(),
            None => "00000000".to_owned(),
        };
        if suppress {
            write!(out, "{id} {number:>number_width$}) ")?;
        } else {
            write!(
                out,
                "{id} ({name:<name_width$} {date} {number:>number_width$}) "
            )?;
        }
        out.write_all(line.as_bytes())?;
        if !line.ends_with(b"\n") {
            writeln!(out)?;
        }
    }
    Ok(0)
}

/// The working tree's lines of `path`, each with the commit that made it
/// (`None` for a line not committed), from the committed lines' blame.
fn working_lines(
    path: &str,
    committed: &[(ObjectId, usize, Vec<u8>)],
) -> Result<Vec<Line>, Failure> {
    let current = std::fs::read(path)
        .map_err(|error| Failure::fatal(format!("cannot read {path}: {error}")))?;
    let before: Vec<u8> = committed
        .iter()
        .flat_map(|(_, _, line)| line.clone())
        .collect();
    let diff = similar::TextDiff::from_lines(&before[..], &current[..]);
    let mut lines = Vec::new();
    for change in diff.iter_all_changes() {
        let commit = match change.tag() {
            similar::ChangeTag::Delete => continue,
            similar::ChangeTag::Equal => change.old_index().map(|index| committed[index].0),
            similar::ChangeTag::Insert => None,
        };
        lines.push((commit, lines.len() + 1, change.value().to_vec()));
    }
    Ok(lines)
}

fn line_range(text: &str) -> Result<(u32, u32), Failure> {
    let bad = || Failure::usage(format!("-L {text}: expected START,END line numbers"));
    let (start, end) = text.split_once(',').ok_or_else(bad)?;
    let start: u32 = start.parse().map_err(|_| bad())?;
    let end: u32 = end.parse().map_err(|_| bad())?;
    if start == 0 || end < start {
        return Err(bad());
    }
    Ok((start, end))
}
