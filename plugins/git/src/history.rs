//! `git log` and `git show`: commits as git prints them (`medium`,
//! `--oneline`, `--format`), walked newest first, with their patches,
//! and a file's contents at a commit (`git show REV:PATH`).

use std::io::Write;
use std::path::Path;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::diff::{self, Shown, Snapshot};
use crate::failure::{Failure, OrFatal};
use crate::revisions::resolve;

/// How a commit's header is printed.
enum Style {
    /// `commit`, `Merge`, `Author`, `Date` and the indented message.
    Medium,
    /// The short id and the subject.
    Oneline,
    /// The full id and the subject.
    OnelineFull,
    /// A `--format` template; `true` ends every commit with a newline
    /// (`tformat:`), `false` puts one between commits (`format:`).
    Template(String, bool),
}

/// What `log` and `show` were asked.
struct Request {
    style: Style,
    shown: Option<Shown>,
    limit: Option<usize>,
    reverse: bool,
    revisions: Vec<String>,
    paths: Vec<String>,
}

fn parse(repo: &gix::Repository, args: &[String], command: &str) -> Result<Request, Failure> {
    let mut request = Request {
        style: Style::Medium,
        shown: None,
        limit: None,
        reverse: false,
        revisions: Vec::new(),
        paths: Vec::new(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let number = |text: &str| {
            text.parse::<usize>()
                .map_err(|_| Failure::usage(format!("'{text}': not a number of commits")))
        };
        match arg.as_str() {
            "--oneline" => request.style = Style::Oneline,
            "--reverse" => request.reverse = true,
            "-p" | "--patch" | "-u" => request.shown = Some(Shown::Patch),
            "--stat" => request.shown = Some(Shown::Stat),
            "--name-only" => request.shown = Some(Shown::NameOnly),
            "--name-status" => request.shown = Some(Shown::NameStatus),
            "-s" | "--no-patch" => request.shown = Some(Shown::Nothing),
            "--no-color" | "--no-decorate" | "--decorate" | "--abbrev-commit" => {}
            "-n" | "--max-count" => {
                let count = args
                    .next()
                    .ok_or_else(|| Failure::usage("-n needs a number"))?;
                request.limit = Some(number(count)?);
            }
            "--" => request.paths.extend(args.by_ref().cloned()),
            _ => {
                if let Some(count) = arg.strip_prefix("--max-count=") {
                    request.limit = Some(number(count)?);
                } else if let Some(count) = arg.strip_prefix("-n") {
                    request.limit = Some(number(count)?);
                } else if let Some(format) = arg
                    .strip_prefix("--format=")
                    .or_else(|| arg.strip_prefix("--pretty="))
                {
                    request.style = style(format, arg.starts_with("--pretty="))?;
                } else if arg.len() > 1
                    && arg.starts_with('-')
                    && arg[1..].bytes().all(|b| b.is_ascii_digit())
                {
                    request.limit = Some(number(&arg[1..])?);
                } else if arg.starts_with('-') {
                    return Err(Failure::usage(format!(
                        "unknown option {arg} for git {command} here"
                    )));
                } else if repo.rev_parse_single(arg.as_str()).is_err()
                    && !arg.contains(':')
                    && Path::new(arg).exists()
                {
                    // Like git, a word that names no revision but a path
                    // of the working tree is a path.
                    request.paths.push(arg.clone());
                } else {
                    request.revisions.push(arg.clone());
                }
            }
        }
    }
    Ok(request)
}

fn style(format: &str, pretty: bool) -> Result<Style, Failure> {
    Ok(match format {
        "medium" => Style::Medium,
        "oneline" => Style::OnelineFull,
        _ => {
            if let Some(template) = format.strip_prefix("tformat:") {
                Style::Template(template.to_owned(), true)
            } else if let Some(template) = format.strip_prefix("format:") {
                Style::Template(template.to_owned(), false)
            } else if format.contains('%') {
                Style::Template(format.to_owned(), true)
            } else {
                let option = if pretty { "--pretty" } else { "--format" };
                return Err(Failure::usage(format!(
                    "{option}={format}: this git knows medium, oneline and format:"
                )));
            }
        }
    })
}

/// `git log [-n N] [--oneline | --format=F] [-p | --stat | --name-only]
/// [REV] [-- PATH...]`.
pub fn log(repo: &gix::Repository, args: &[String], out: &mut dyn Write) -> Result<i32, Failure> {
    let request = parse(repo, args, "log")?;
    let start = match request.revisions.as_slice() {
        [] => head(repo)?,
        [revision] => resolve(repo, revision)?,
        _ => return Err(Failure::usage("log here starts from one revision")),
    };
    let walk = repo
        .rev_walk([start])
        .sorting(gix::revision::walk::Sorting::ByCommitTime(
            Default::default(),
        ))
        .all()
        .or_fatal()?;
    let mut selected = Vec::new();
    for info in walk {
        if request.limit.is_some_and(|limit| selected.len() >= limit) {
            break;
        }
        let info = info.or_fatal()?;
        let parent = info.parent_ids.first().copied();
        if !request.paths.is_empty() && !touches(repo, info.id, parent, &request.paths)? {
            continue;
        }
        selected.push(info.id);
    }
    if request.reverse {
        selected.reverse();
    }
    let printed = selected.len();
    for (index, id) in selected.into_iter().enumerate() {
        print_commit(repo, id, &request, index > 0, out)?;
    }
    if let Style::Template(_, false) = request.style
        && printed > 0
    {
        // `format:` puts newlines between commits and none after the last;
        // git still ends the output with one.
        writeln!(out)?;
    }
    Ok(0)
}

/// `git show [REV | REV:PATH]...`.
pub fn show(repo: &gix::Repository, args: &[String], out: &mut dyn Write) -> Result<i32, Failure> {
    let mut request = parse(repo, args, "show")?;
    if request.revisions.is_empty() {
        request.revisions.push("HEAD".to_owned());
    }
    if request.shown.is_none() {
        request.shown = Some(Shown::Patch);
    }
    for (index, revision) in request.revisions.iter().enumerate() {
        if let Some((commit, path)) = revision.split_once(':') {
            let commit = resolve(repo, if commit.is_empty() { "HEAD" } else { commit })?;
            let files = diff::commit_files(repo, commit)?;
            let version = files.get(path).ok_or_else(|| {
                Failure::fatal(format!(
                    "path '{path}' does not exist in '{}'",
                    &revision[..revision.len() - path.len() - 1]
                ))
            })?;
            let blob = repo.find_object(version.id).or_fatal()?;
            out.write_all(&blob.data)?;
            continue;
        }
        let id = resolve(repo, revision)?;
        print_commit(repo, id, &request, index > 0, out)?;
    }
    Ok(0)
}

/// The commit `HEAD` points at, or git's message for a branch without one.
fn head(repo: &gix::Repository) -> Result<ObjectId, Failure> {
    match repo.head_id() {
        Ok(id) => Ok(id.detach()),
        Err(_) => {
            let branch = repo
                .head_name()
                .ok()
                .flatten()
                .map(|name| name.shorten().to_string())
                .unwrap_or_else(|| "HEAD".to_owned());
            Err(Failure::fatal(format!(
                "your current branch '{branch}' does not have any commits yet"
            )))
        }
    }
}

/// Whether `commit` changes anything under `paths` against `parent`.
fn touches(
    repo: &gix::Repository,
    commit: ObjectId,
    parent: Option<ObjectId>,
    paths: &[String],
) -> Result<bool, Failure> {
    let after = diff::commit_files(repo, commit)?;
    let before = match parent {
        Some(parent) => diff::commit_files(repo, parent)?,
        None => Snapshot::new(),
    };
    let mut sink = std::io::sink();
    diff::write_changes(repo, &before, &after, paths, Shown::Nothing, &mut sink)
}

fn print_commit(
    repo: &gix::Repository,
    id: ObjectId,
    request: &Request,
    separate: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let commit = repo.find_commit(id).or_fatal()?;
    let message = commit.message_raw().or_fatal()?.to_str_lossy().into_owned();
    let (subject, body) = split_message(&message);
    let author = commit.author().or_fatal()?;
    let parents: Vec<ObjectId> = commit.parent_ids().map(|id| id.detach()).collect();
    let shown = request.shown.unwrap_or(Shown::Nothing);
    match &request.style {
        Style::Medium => {
            if separate {
                writeln!(out)?;
            }
            writeln!(out, "commit {id}")?;
            if parents.len() > 1 {
                let short: Vec<String> = parents
                    .iter()
                    .map(|parent| parent.to_hex_with_len(7).to_string())
                    .collect();
                writeln!(out, "Merge: {}", short.join(" "))?;
            }
            writeln!(out, "Author: {} <{}>", author.name, author.email)?;
            let date = author
                .time()
                .or_fatal()?
                .format(gix::date::time::format::DEFAULT)
                .or_fatal()?;
            writeln!(out, "Date:   {date}")?;
            writeln!(out)?;
            for line in message.trim_end().lines() {
                writeln!(out, "    {line}")?;
            }
            if shown != Shown::Nothing && parents.len() <= 1 {
                writeln!(out)?;
            }
        }
        Style::Oneline => writeln!(out, "{} {subject}", id.to_hex_with_len(7))?,
        Style::OnelineFull => writeln!(out, "{id} {subject}")?,
        Style::Template(template, terminated) => {
            if separate && !terminated {
                writeln!(out)?;
            }
            let committer = commit.committer().or_fatal()?;
            let fields = Fields {
                id,
                tree: commit.tree_id().or_fatal()?.detach(),
                parents: &parents,
                author: (
                    &author.name.to_string(),
                    &author.email.to_string(),
                    author.time().or_fatal()?,
                ),
                committer: (
                    &committer.name.to_string(),
                    &committer.email.to_string(),
                    committer.time().or_fatal()?,
                ),
                subject: &subject,
                body: &body,
                message: &message,
            };
            write!(out, "{}", expand(template, &fields)?)?;
            if *terminated {
                writeln!(out)?;
            }
        }
    }
    // Git shows no patch for a merge unless asked how.
    if shown != Shown::Nothing && parents.len() <= 1 {
        let after = diff::commit_files(repo, id)?;
        let before = match parents.first() {
            Some(parent) => diff::commit_files(repo, *parent)?,
            None => Snapshot::new(),
        };
        diff::write_changes(repo, &before, &after, &request.paths, shown, out)?;
    }
    Ok(())
}

/// The subject (the first paragraph, its lines joined by spaces) and the
/// body (the rest) of a commit message.
fn split_message(message: &str) -> (String, String) {
    let message = message.trim_start_matches('\n');
    let (first, rest) = match message.find("\n\n") {
        Some(at) => (&message[..at], &message[at + 2..]),
        None => (message, ""),
    };
    let subject = first.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    (subject, rest.trim_start_matches('\n').to_owned())
}

/// What a `--format` template can name.
struct Fields<'a> {
    id: ObjectId,
    tree: ObjectId,
    parents: &'a [ObjectId],
    author: (&'a String, &'a String, gix::date::Time),
    committer: (&'a String, &'a String, gix::date::Time),
    subject: &'a str,
    body: &'a str,
    message: &'a str,
}

fn expand(template: &str, fields: &Fields) -> Result<String, Failure> {
    use gix::date::time::format;
    let mut text = String::new();
    let mut rest = template;
    while let Some(at) = rest.find('%') {
        text.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        let two = rest.get(..2).unwrap_or_default();
        let person = match rest.chars().next() {
            Some('a') => Some(fields.author),
            Some('c') => Some(fields.committer),
            _ => None,
        };
        let (value, used): (String, usize) = match (person, two) {
            (Some((name, _, _)), "an" | "cn") => (name.clone(), 2),
            (Some((_, email, _)), "ae" | "ce") => (email.clone(), 2),
            (Some((_, _, time)), "ad" | "cd") => (time.format(format::DEFAULT).or_fatal()?, 2),
            (Some((_, _, time)), "aI" | "cI") => {
                (time.format(format::ISO8601_STRICT).or_fatal()?, 2)
            }
            (Some((_, _, time)), "ai" | "ci") => (time.format(format::ISO8601).or_fatal()?, 2),
            (Some((_, _, time)), "as" | "cs") => (time.format(format::SHORT).or_fatal()?, 2),
            (Some((_, _, time)), "at" | "ct") => (time.seconds.to_string(), 2),
            (Some((_, _, time)), "ar" | "cr") => (relative(time.seconds), 2),
            _ => match rest.chars().next() {
                Some('H') => (fields.id.to_string(), 1),
                Some('h') => (fields.id.to_hex_with_len(7).to_string(), 1),
                Some('T') => (fields.tree.to_string(), 1),
                Some('t') => (fields.tree.to_hex_with_len(7).to_string(), 1),
                Some('P') => (join(fields.parents, 40), 1),
                Some('p') => (join(fields.parents, 7), 1),
                Some('s') => (fields.subject.to_owned(), 1),
                Some('b') => (fields.body.to_owned(), 1),
                Some('B') => (fields.message.to_owned(), 1),
                Some('n') => ("\n".to_owned(), 1),
                Some('%') => ("%".to_owned(), 1),
                Some('d' | 'D') => (String::new(), 1),
                _ => ("%".to_owned(), 0),
            },
        };
        text.push_str(&value);
        rest = &rest[used..];
    }
    text.push_str(rest);
    Ok(text)
}

fn join(ids: &[ObjectId], length: usize) -> String {
    ids.iter()
        .map(|id| id.to_hex_with_len(length).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How long ago `seconds` (since the epoch) was, in git's words.
fn relative(seconds: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() as i64);
    let ago = (now - seconds).max(0);
    let plural = |n: i64, unit: &str| format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" });
    let (minutes, hours, days) = (ago / 60, ago / 3600, ago / 86_400);
    if ago < 90 {
        plural(ago, "second")
    } else if minutes < 90 {
        plural((ago + 30) / 60, "minute")
    } else if hours < 36 {
        plural((ago + 1800) / 3600, "hour")
    } else if days < 14 {
        plural((ago + 43_200) / 86_400, "day")
    } else if days < 70 {
        plural((days + 3) / 7, "week")
    } else if days < 365 {
        plural((days + 15) / 30, "month")
    } else {
        plural((days + 183) / 365, "year")
    }
}
