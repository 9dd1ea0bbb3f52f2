//! Redirections, applied in the order written: `<`, `>`, `>>`, `>|`, `&>`,
//! `&>>`, `N>&M`, `N>&-`, here-documents and here-strings. Written files
//! go through the workspace file system when their command ends; the
//! streams they replace are the command's only. `/dev/null`, `/dev/stdin`,
//! `/dev/stdout` and `/dev/stderr` are the paths outside the workspace a
//! redirection accepts.

use brush_parser::ast::{IoFileRedirectKind, IoFileRedirectTarget, IoRedirect};

use crate::error::Error;
use crate::shell::context::{Ctx, Status, report};
use crate::shell::expand::Expander;
use crate::shell::io::{Buffer, Input, Io, PIPE_LIMIT, Sink, sink};

/// A file a redirection writes when its command ends.
struct FileSink {
    /// The target as written, for messages.
    shown: String,
    /// Its workspace path.
    path: String,
    append: bool,
    sink: Sink,
}

/// Runs `body` with `redirects` applied to `io`; a redirection that fails
/// is reported and the body does not run (status 1).
pub(super) fn around(
    ctx: &mut Ctx,
    redirects: Option<&[IoRedirect]>,
    io: &Io,
    body: impl FnOnce(&mut Ctx, &Io) -> Status,
) -> Status {
    let Some(redirects) = redirects.filter(|list| !list.is_empty()) else {
        return body(ctx, io);
    };
    let mut redirected = io.clone();
    let mut files = Vec::new();
    for redirect in redirects {
        if !apply(ctx, redirect, &mut redirected, &mut files)? {
            return Ok(1);
        }
    }
    let status = body(ctx, &redirected);
    let mut failed = false;
    for file in files {
        if let Err(message) = write(ctx, file) {
            io.stderr
                .borrow_mut()
                .push(format!("sh: {message}\n").as_bytes());
            failed = true;
        }
    }
    match status {
        Ok(_) if failed => Ok(1),
        other => other,
    }
}

/// Applies one redirection; false after reporting why it failed.
fn apply(
    ctx: &mut Ctx,
    redirect: &IoRedirect,
    io: &mut Io,
    files: &mut Vec<FileSink>,
) -> Result<bool, crate::shell::context::Interrupt> {
    match redirect {
        IoRedirect::HereDocument(fd, here) => {
            let body = if here.requires_expansion {
                Expander::new(ctx, io).here_document(&here.doc.value)?
            } else {
                here.doc.value.clone()
            };
            input(io, fd.unwrap_or(0), body.into_bytes())
        }
        IoRedirect::HereString(fd, word) => {
            let mut text = Expander::new(ctx, io).string(&word.value)?;
            text.push('\n');
            input(io, fd.unwrap_or(0), text.into_bytes())
        }
        IoRedirect::OutputAndError(word, append) => {
            let target = Expander::new(ctx, io).string(&word.value)?;
            let Some(sink) = open(ctx, io, files, &target, *append) else {
                return Ok(false);
            };
            io.stdout = sink.clone();
            io.stderr = sink;
            Ok(true)
        }
        IoRedirect::File(fd, kind, target) => file(ctx, io, files, *fd, kind, target),
    }
}

fn file(
    ctx: &mut Ctx,
    io: &mut Io,
    files: &mut Vec<FileSink>,
    fd: Option<i32>,
    kind: &IoFileRedirectKind,
    target: &IoFileRedirectTarget,
) -> Result<bool, crate::shell::context::Interrupt> {
    let word = match target {
        IoFileRedirectTarget::Filename(word) | IoFileRedirectTarget::Duplicate(word) => {
            Expander::new(ctx, io).string(&word.value)?
        }
        IoFileRedirectTarget::Fd(number) => number.to_string(),
        IoFileRedirectTarget::ProcessSubstitution(..) => {
            io.errln("sh: process substitution: there are no processes to run one in");
            return Ok(false);
        }
    };
    match kind {
        IoFileRedirectKind::Read | IoFileRedirectKind::ReadAndWrite => {
            let data = match word.as_str() {
                "/dev/null" => Vec::new(),
                "/dev/stdin" => io.stdin(),
                _ => match ctx.input(io, "sh", &word) {
                    Some(data) => data,
                    None => return Ok(false),
                },
            };
            input(io, fd.unwrap_or(0), data)
        }
        IoFileRedirectKind::Write | IoFileRedirectKind::Clobber | IoFileRedirectKind::Append => {
            let Some(sink) = open(
                ctx,
                io,
                files,
                &word,
                matches!(kind, IoFileRedirectKind::Append),
            ) else {
                return Ok(false);
            };
            output(io, fd.unwrap_or(1), sink)
        }
        IoFileRedirectKind::DuplicateOutput => {
            let to = fd.unwrap_or(1);
            match word.as_str() {
                "1" => output(io, to, io.stdout.clone()),
                "2" => output(io, to, io.stderr.clone()),
                "-" => output(io, to, sink(0)),
                _ if word.chars().all(|c| c.is_ascii_digit()) => unsupported(io, &word),
                // `>& file` sends both streams to the file.
                _ => {
                    let Some(sink) = open(ctx, io, files, &word, false) else {
                        return Ok(false);
                    };
                    io.stdout = sink.clone();
                    io.stderr = sink;
                    Ok(true)
                }
            }
        }
        IoFileRedirectKind::DuplicateInput => match word.as_str() {
            "0" => Ok(true),
            "-" => input(io, fd.unwrap_or(0), Vec::new()),
            _ => unsupported(io, &word),
        },
    }
}

/// Replaces input descriptor `fd` with `data`.
fn input(io: &mut Io, fd: i32, data: Vec<u8>) -> Result<bool, crate::shell::context::Interrupt> {
    if fd != 0 {
        return unsupported(io, &fd.to_string());
    }
    io.stdin = Input::new(data);
    Ok(true)
}

/// Points output descriptor `fd` at `sink`.
fn output(io: &mut Io, fd: i32, sink: Sink) -> Result<bool, crate::shell::context::Interrupt> {
    match fd {
        1 => io.stdout = sink,
        2 => io.stderr = sink,
        other => return unsupported(io, &other.to_string()),
    }
    Ok(true)
}

fn unsupported(io: &mut Io, fd: &str) -> Result<bool, crate::shell::context::Interrupt> {
    io.errln(format_args!(
        "sh: {fd}: only descriptors 0, 1 and 2 can be redirected"
    ));
    Ok(false)
}

/// A sink for writing the file `shown`, checked now: its directory exists
/// and it is not a directory. `None` after reporting why not.
fn open(
    ctx: &mut Ctx,
    io: &mut Io,
    files: &mut Vec<FileSink>,
    shown: &str,
    append: bool,
) -> Option<Sink> {
    match shown {
        "/dev/null" => return Some(sink(0)),
        "/dev/stdout" => return Some(io.stdout.clone()),
        "/dev/stderr" => return Some(io.stderr.clone()),
        _ => {}
    }
    let checked = ctx.resolve(shown).and_then(|path| {
        let parent = crate::path::parent(&path).unwrap_or_default();
        match ctx.fs.meta(parent)? {
            Some(meta) if meta.is_dir() => {}
            _ => return Err(Error::not_found(&path)),
        }
        match ctx.fs.meta(&path)? {
            Some(meta) if meta.is_dir() => Err(Error::Invalid("Is a directory".into())),
            _ => Ok(path),
        }
    });
    match checked {
        Ok(path) => {
            let sink = std::rc::Rc::new(std::cell::RefCell::new(Buffer::new(PIPE_LIMIT)));
            files.push(FileSink {
                shown: shown.to_owned(),
                path,
                append,
                sink: sink.clone(),
            });
            Some(sink)
        }
        Err(error) => {
            report(io, "sh", shown, &error);
            None
        }
    }
}

/// Writes a redirection's buffer to its file.
fn write(ctx: &Ctx, file: FileSink) -> Result<(), String> {
    let mut buffer = file.sink.borrow_mut();
    if buffer.truncated() {
        return Err(format!("{}: output exceeded the 64 MiB limit", file.shown));
    }
    let mut data = buffer.take();
    if file.append
        && let Ok(mut existing) = ctx.fs.read(&file.path)
    {
        existing.append(&mut data);
        data = existing;
    }
    ctx.fs
        .write(&file.path, &data)
        .map_err(|error| format!("{}: {}", file.shown, error.message()))
}
