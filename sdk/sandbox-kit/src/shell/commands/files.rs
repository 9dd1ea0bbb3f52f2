//! Changing the tree: `mkdir` (`-p`), `rm` (`-r`/`-R`, `-f`; never the
//! workspace root), `mv` (into a directory when the last operand is one),
//! `cp` (`-r` for directories) and `touch` (creates missing files; there are
//! no timestamps to update).

use super::{Outcome, options};
use crate::error::Error;
use crate::fs::{Kind, Prune};
use crate::path;
use crate::shell::context::{Ctx, report};
use crate::shell::io::Io;
use crate::workspace;

/// `mkdir [-p] DIR...`.
pub(super) fn mkdir(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "mkdir", args, "pv", "m")?;
    let mut status = 0;
    for operand in &args.operands {
        let made = ctx.resolve(operand).and_then(|dir| {
            if args.has('p') {
                return workspace::mkdir(ctx.fs, &dir);
            }
            if ctx.fs.meta(&dir)?.is_some() {
                return Err(Error::Invalid("File exists".into()));
            }
            workspace::expect_dir(ctx.fs, path::parent(&dir).unwrap_or_default())
                .map_err(|_| Error::not_found(&dir))?;
            ctx.fs.create_dir(&dir)
        });
        if let Err(error) = made {
            report(io, "mkdir", operand, &error);
            status = 1;
        }
    }
    Ok(status)
}

/// `rm [-rf] PATH...`.
pub(super) fn rm(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "rm", args, "rRfdv", "")?;
    let recursive = args.has('r') || args.has('R');
    let force = args.has('f');
    let mut status = 0;
    for operand in &args.operands {
        ctx.tick()?;
        let removed = ctx.resolve(operand).and_then(|target| {
            if target.is_empty() {
                return Err(Error::Denied(format!(
                    "{operand}: refusing to remove the workspace root"
                )));
            }
            match ctx.fs.meta(&target)? {
                None => Err(Error::not_found(&target)),
                Some(meta) if meta.is_dir() && !recursive => {
                    Err(Error::Invalid("Is a directory".into()))
                }
                Some(_) => ctx.fs.remove(&target),
            }
        });
        match removed {
            Err(Error::NotFound(_)) if force => {}
            Err(error) => {
                report(io, "rm", operand, &error);
                status = 1;
            }
            Ok(()) => {}
        }
    }
    if args.operands.is_empty() && !force {
        io.errln("rm: missing operand");
        status = 1;
    }
    Ok(status)
}

/// Where `source` goes when copied or moved to `dest`: inside it if it is a
/// directory.
fn destination(ctx: &Ctx, source: &str, dest: &str) -> crate::error::Result<String> {
    let dest = ctx.resolve(dest)?;
    Ok(match ctx.fs.meta(&dest)? {
        Some(meta) if meta.is_dir() => path::join(&dest, path::file_name(source)),
        _ => dest,
    })
}

/// Splits operands into sources and a target, reporting a missing target.
fn sources_and_target<'a>(
    io: &mut Io,
    name: &str,
    operands: &'a [String],
) -> Option<(&'a [String], &'a String)> {
    match operands.split_last() {
        Some((target, sources)) if !sources.is_empty() => Some((sources, target)),
        _ => {
            io.errln(format_args!("{name}: missing destination file operand"));
            None
        }
    }
}

/// `mv SOURCE... DEST`.
pub(super) fn mv(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "mv", args, "fnv", "")?;
    let Some((sources, target)) = sources_and_target(io, "mv", &args.operands) else {
        return Ok(1);
    };
    let mut status = 0;
    for source in sources {
        let moved = ctx.resolve(source).and_then(|from| {
            let to = destination(ctx, &from, target)?;
            workspace::rename(ctx.fs, &from, &to)
        });
        if let Err(error) = moved {
            report(io, "mv", source, &error);
            status = 1;
        }
    }
    Ok(status)
}

/// `cp [-r] SOURCE... DEST`.
pub(super) fn cp(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "cp", args, "rRafnpv", "")?;
    let recursive = args.has('r') || args.has('R') || args.has('a');
    let Some((sources, target)) = sources_and_target(io, "cp", &args.operands) else {
        return Ok(1);
    };
    let mut status = 0;
    for source in sources {
        ctx.tick()?;
        let copied = ctx.resolve(source).and_then(|from| {
            let to = destination(ctx, &from, target)?;
            copy(ctx, &from, &to, recursive)
        });
        if let Err(error) = copied {
            report(io, "cp", source, &error);
            status = 1;
        }
    }
    Ok(status)
}

/// Copies `from` to `to`, a whole tree if `recursive`.
fn copy(ctx: &Ctx, from: &str, to: &str, recursive: bool) -> crate::error::Result<()> {
    let meta = ctx.fs.meta(from)?.ok_or_else(|| Error::not_found(from))?;
    if !meta.is_dir() {
        if ctx.fs.meta(to)?.is_some_and(|meta| meta.is_dir()) {
            return Err(Error::Invalid(format!("cannot overwrite directory {to}")));
        }
        workspace::expect_dir(ctx.fs, path::parent(to).unwrap_or_default())?;
        return ctx.fs.write(to, &ctx.fs.read(from)?);
    }
    if !recursive {
        return Err(Error::Invalid(
            "-r not specified; omitting directory".into(),
        ));
    }
    if path::strip_dir(to, from).is_some() {
        return Err(Error::Invalid(format!(
            "cannot copy a directory into itself, {to}"
        )));
    }
    workspace::mkdir(ctx.fs, to)?;
    let mut buf = Vec::new();
    for node in ctx.fs.walk(from, Prune::Nothing)? {
        let rest = path::strip_dir(&node.path, from).unwrap_or_default();
        let copy = path::join(to, rest);
        match node.meta.kind {
            Kind::Dir => workspace::mkdir(ctx.fs, &copy)?,
            Kind::File | Kind::Symlink => {
                let data = ctx.fs.contents(&node, &mut buf)?;
                ctx.fs.write(&copy, data)?;
            }
        }
    }
    Ok(())
}

/// `touch FILE...`.
pub(super) fn touch(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "touch", args, "acm", "")?;
    let mut status = 0;
    for operand in &args.operands {
        let touched = ctx.resolve(operand).and_then(|file| {
            if ctx.fs.meta(&file)?.is_some() {
                return Ok(());
            }
            workspace::expect_dir(ctx.fs, path::parent(&file).unwrap_or_default())
                .map_err(|_| Error::not_found(&file))?;
            ctx.fs.write(&file, b"")
        });
        if let Err(error) = touched {
            report(io, "touch", operand, &error);
            status = 1;
        }
    }
    Ok(status)
}
