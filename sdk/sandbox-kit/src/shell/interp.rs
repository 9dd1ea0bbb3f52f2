//! Running a parsed [`Script`]: chains with `&&`/`||`, pipelines through
//! in-memory buffers, redirections through the workspace file system, and the
//! deadline checked before every command.

use super::commands;
use super::context::{Ctx, Status, report};
use super::expand;
use super::io::{Buffer, Io, PIPE_LIMIT};
use super::syntax::{Connector, Pipeline, Redirect, Script, Simple, Stream};
use crate::error::Error;

/// Index of the command's stdout buffer among its sinks.
const OUT: usize = 0;
/// Index of the caller's stderr buffer among a command's sinks.
const ERR: usize = 1;

/// The one path outside the workspace a redirection may name: it reads as
/// empty and swallows what is written to it.
const DEV_NULL: &str = "/dev/null";

/// A file a redirection writes when its command ends.
struct FileSink {
    /// The target as written, for messages.
    shown: String,
    /// Its workspace path.
    path: String,
    append: bool,
}

/// Runs `script`, writing to `out` and `err`; the exit status of the last
/// pipeline run.
pub(super) fn run(
    ctx: &mut Ctx,
    script: &Script,
    stdin: &[u8],
    out: &mut Buffer,
    err: &mut Buffer,
) -> Status {
    for chain in &script.chains {
        ctx.status = pipeline(ctx, &chain.first, stdin, out, err)?;
        for (connector, next) in &chain.rest {
            let run_next = match connector {
                Connector::And => ctx.status == 0,
                Connector::Or => ctx.status != 0,
            };
            if run_next {
                ctx.status = pipeline(ctx, next, stdin, out, err)?;
            }
        }
    }
    Ok(ctx.status)
}

fn pipeline(
    ctx: &mut Ctx,
    pipeline: &Pipeline,
    stdin: &[u8],
    out: &mut Buffer,
    err: &mut Buffer,
) -> Status {
    let mut input = stdin.to_vec();
    let mut status = 0;
    let last = pipeline.commands.len() - 1;
    for (index, command) in pipeline.commands.iter().enumerate() {
        ctx.check()?;
        if index == last {
            status = simple(ctx, command, &input, out, err)?;
        } else {
            let mut pipe = Buffer::new(PIPE_LIMIT);
            status = simple(ctx, command, &input, &mut pipe, err)?;
            if pipe.truncated() {
                err.push(b"sh: a pipe's contents exceeded the 64 MiB limit and were cut\n");
            }
            input = pipe.into_bytes();
        }
    }
    Ok(if pipeline.negated {
        i32::from(status == 0)
    } else {
        status
    })
}

/// Runs one simple command with `stdin`, its stdout going to `out`.
fn simple(
    ctx: &mut Ctx,
    command: &Simple,
    stdin: &[u8],
    out: &mut Buffer,
    err: &mut Buffer,
) -> Status {
    let mut words = Vec::new();
    for word in &command.words {
        words.extend(expand::fields(ctx, word));
    }
    let mut io = Io {
        stdin,
        sinks: vec![std::mem::take(out), std::mem::take(err)],
        out: OUT,
        err: ERR,
    };
    let mut files = Vec::new();
    let mut input = None;
    let status = match redirect(ctx, command, &mut io, &mut files, &mut input) {
        Ok(()) => {
            if let Some(data) = &input {
                io.stdin = data;
            }
            match words.split_first() {
                Some((name, args)) if command.assignments.is_empty() => {
                    commands::run(ctx, name, args, &mut io)
                }
                Some((name, args)) => {
                    // `NAME=value command`: the variables hold for that
                    // command alone.
                    let saved = ctx.vars.clone();
                    for (var, value) in &command.assignments {
                        let value = expand::plain(ctx, value);
                        ctx.vars.insert(var.clone(), value);
                    }
                    let status = commands::run(ctx, name, args, &mut io);
                    ctx.vars = saved;
                    status
                }
                None => {
                    for (name, value) in &command.assignments {
                        let value = expand::plain(ctx, value);
                        ctx.vars.insert(name.clone(), value);
                    }
                    Ok(0)
                }
            }
        }
        Err(()) => Ok(1),
    };
    let mut sinks = io.sinks.into_iter();
    *out = sinks.next().unwrap_or_default();
    *err = sinks.next().unwrap_or_default();
    let mut status = status?;
    for (file, buffer) in files.iter().zip(sinks) {
        let Some(file) = file else {
            continue;
        };
        if let Err(message) = write_file(ctx, file, buffer) {
            err.push(format!("sh: {message}\n").as_bytes());
            status = 1;
        }
    }
    Ok(status)
}

/// Applies `command`'s redirections to `io`, in order: files to write go to
/// `files` (`None` for `/dev/null`; their buffers to `io.sinks`), a file to
/// read to `input`. Reports a failure on stderr.
fn redirect(
    ctx: &mut Ctx,
    command: &Simple,
    io: &mut Io,
    files: &mut Vec<Option<FileSink>>,
    input: &mut Option<Vec<u8>>,
) -> Result<(), ()> {
    for redirect in &command.redirects {
        match redirect {
            Redirect::Input(target) => {
                let shown = expand::plain(ctx, target);
                *input = Some(if shown == DEV_NULL {
                    Vec::new()
                } else {
                    ctx.input(io, "sh", &shown).ok_or(())?
                });
            }
            Redirect::Output {
                stream,
                target,
                append,
            } => {
                let sink = open(ctx, io, files, &expand::plain(ctx, target), *append)?;
                match stream {
                    Stream::Out => io.out = sink,
                    Stream::Err => io.err = sink,
                }
            }
            Redirect::Both { target, append } => {
                let sink = open(ctx, io, files, &expand::plain(ctx, target), *append)?;
                io.out = sink;
                io.err = sink;
            }
            Redirect::Duplicate { from: Stream::Err } => io.err = io.out,
            Redirect::Duplicate { from: Stream::Out } => io.out = io.err,
        }
    }
    Ok(())
}

/// Checks that `shown` can be written as a file and adds a sink for it;
/// the sink's index.
fn open(
    ctx: &mut Ctx,
    io: &mut Io,
    files: &mut Vec<Option<FileSink>>,
    shown: &str,
    append: bool,
) -> Result<usize, ()> {
    if shown == DEV_NULL {
        files.push(None);
        io.sinks.push(Buffer::new(0));
        return Ok(io.sinks.len() - 1);
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
            files.push(Some(FileSink {
                shown: shown.to_owned(),
                path,
                append,
            }));
            io.sinks.push(Buffer::new(PIPE_LIMIT));
            Ok(io.sinks.len() - 1)
        }
        Err(error) => {
            report(io, "sh", shown, &error);
            Err(())
        }
    }
}

/// Writes a redirection's buffer to its file.
fn write_file(ctx: &Ctx, file: &FileSink, buffer: Buffer) -> Result<(), String> {
    if buffer.truncated() {
        return Err(format!("{}: output exceeded the 64 MiB limit", file.shown));
    }
    let mut data = buffer.into_bytes();
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

/// The message for a command line stopped by a time limit of `timeout_ms`.
pub(super) fn timed_out(timeout_ms: u32) -> String {
    format!("sh: timed out after {timeout_ms} ms\n")
}
