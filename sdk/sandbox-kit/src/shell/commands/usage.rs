//! `du` and `stat`: what files take and what they are. The sandbox's file
//! system keeps sizes and kinds but no owners, modes or times, so space is
//! counted the way a disk with 4 KiB blocks would hold it (a directory one
//! block, a file its size rounded up to whole blocks) and `stat` formats
//! only what is kept: `%n`, `%s`, `%F`, `%b`, `%B`, `%o` and `%%`.

use super::{Outcome, Stop, options};
use crate::error::Error;
use crate::fs::{Kind, Meta, Prune};
use crate::path;
use crate::shell::context::{Ctx, report};
use crate::shell::io::Io;

/// The block size space is counted in.
const BLOCK: u64 = 4096;

/// The bytes of disk an entry would take.
fn footprint(meta: &Meta) -> u64 {
    match meta.kind {
        Kind::Dir => BLOCK,
        Kind::File => meta.size.div_ceil(BLOCK) * BLOCK,
        Kind::Symlink => 0,
    }
}

/// `du [-a] [-s] [-c] [-h] [-k] [-d N] [PATH...]`: the space of each
/// directory beneath each path (with `-a` each file too; with `-s` only the
/// paths), in KiB or, with `-h`, in human units.
pub(super) fn du(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args: Vec<String> = args
        .iter()
        .map(|arg| match arg.strip_prefix("--max-depth=") {
            Some(depth) => format!("-d{depth}"),
            None => match arg.as_str() {
                "--summarize" => "-s".to_owned(),
                "--all" => "-a".to_owned(),
                "--total" => "-c".to_owned(),
                "--human-readable" => "-h".to_owned(),
                _ => arg.clone(),
            },
        })
        .collect();
    let args = options(io, "du", &args, "asckh", "d")?;
    let max_depth = match args.values('d').last() {
        Some(depth) => Some(super::count(io, "du", depth)?),
        None if args.has('s') => Some(0),
        None => None,
    };
    let human = args.has('h');
    let operands = if args.operands.is_empty() {
        vec![".".to_owned()]
    } else {
        args.operands.clone()
    };
    let mut status = 0;
    let mut total = 0;
    for operand in &operands {
        match usage(ctx, operand) {
            Ok(entries) => {
                for (shown, depth, bytes, is_dir) in entries {
                    let listed = max_depth.is_none_or(|max| depth <= max)
                        && (is_dir || args.has('a') || depth == 0);
                    if listed {
                        io.outln(format_args!("{}\t{shown}", size(bytes, human)));
                    }
                    if depth == 0 {
                        total += bytes;
                    }
                }
            }
            Err(error) => {
                report(io, "du", operand, &error);
                status = 1;
            }
        }
        ctx.tick()?;
    }
    if args.has('c') {
        io.outln(format_args!("{}\ttotal", size(total, human)));
    }
    Ok(status)
}

/// Every entry at or beneath `operand`, children before their directory:
/// its name as shown, its depth, its space with all it holds, and whether
/// it is a directory.
fn usage(ctx: &mut Ctx, operand: &str) -> crate::error::Result<Vec<(String, usize, u64, bool)>> {
    let root = ctx.resolve(operand)?;
    let meta = ctx.fs.meta(&root)?.ok_or_else(|| Error::not_found(&root))?;
    if !meta.is_dir() {
        return Ok(vec![(operand.to_owned(), 0, footprint(&meta), false)]);
    }
    let shown_root = operand.trim_end_matches('/');
    let shown_root = if shown_root.is_empty() {
        "/"
    } else {
        shown_root
    };
    // Directories waiting for their children's space, outermost first.
    let mut open: Vec<(String, usize, u64)> = vec![(String::new(), 0, BLOCK)];
    let mut done = Vec::new();
    let close = |open: &mut Vec<(String, usize, u64)>, done: &mut Vec<_>| {
        let (relative, depth, bytes) = open.pop().expect("a directory is open");
        if let Some(parent) = open.last_mut() {
            parent.2 += bytes;
        }
        let shown = if relative.is_empty() {
            shown_root.to_owned()
        } else {
            format!("{shown_root}/{relative}")
        };
        done.push((shown, depth, bytes, true));
    };
    for node in ctx.fs.walk(&root, Prune::Nothing)? {
        ctx.tick().map_err(|_| Error::Invalid("stopped".into()))?;
        let relative = path::strip_dir(&node.path, &root)
            .unwrap_or_default()
            .to_owned();
        let parent = path::parent(&relative).unwrap_or_default();
        while open.last().is_some_and(|(dir, _, _)| *dir != parent) {
            close(&mut open, &mut done);
        }
        let depth = relative.split('/').count();
        if node.meta.kind == Kind::Dir {
            open.push((relative, depth, BLOCK));
        } else {
            let bytes = footprint(&node.meta);
            if let Some(dir) = open.last_mut() {
                dir.2 += bytes;
            }
            done.push((format!("{shown_root}/{relative}"), depth, bytes, false));
        }
    }
    while !open.is_empty() {
        close(&mut open, &mut done);
    }
    Ok(done)
}

/// `bytes` as `du` prints it: whole KiB, or with `-h` GNU's human units
/// (one decimal below 10, rounded up).
fn size(bytes: u64, human: bool) -> String {
    if !human {
        return bytes.div_ceil(1024).to_string();
    }
    if bytes < 1024 {
        return bytes.to_string();
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    const UNITS: [char; 6] = ['K', 'M', 'G', 'T', 'P', 'E'];
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        let tenths = (value * 10.0).ceil() / 10.0;
        if tenths < 10.0 {
            return format!("{tenths:.1}{}", UNITS[unit]);
        }
    }
    format!("{}{}", value.ceil() as u64, UNITS[unit])
}

/// `stat [-c FORMAT | --format=FORMAT | --printf=FORMAT] FILE...`.
pub(super) fn stat(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let mut format = None;
    let mut newline = true;
    let mut rest = Vec::new();
    let mut given = args.iter();
    while let Some(arg) = given.next() {
        if arg == "-c" || arg == "--format" || arg == "--printf" {
            newline = arg != "--printf";
            format = Some(given.next().cloned().ok_or_else(|| {
                io.errln(format_args!("stat: option '{arg}' requires an argument"));
                Stop::Code(1)
            })?);
        } else if let Some(text) = arg.strip_prefix("--format=") {
            format = Some(text.to_owned());
        } else if let Some(text) = arg.strip_prefix("--printf=") {
            (format, newline) = (Some(text.to_owned()), false);
        } else if let Some(text) = arg.strip_prefix("-c").filter(|text| !text.is_empty()) {
            format = Some(text.to_owned());
        } else {
            rest.push(arg.clone());
        }
    }
    if rest.is_empty() {
        io.errln("stat: missing operand");
        return Ok(1);
    }
    let mut status = 0;
    for operand in &rest {
        ctx.tick()?;
        let found = ctx.resolve(operand).and_then(|resolved| {
            ctx.fs
                .meta(&resolved)?
                .ok_or_else(|| Error::not_found(&resolved))
        });
        let meta = match found {
            Ok(meta) => meta,
            Err(error) => {
                report(io, "stat", operand, &error);
                status = 1;
                continue;
            }
        };
        let text = match &format {
            Some(format) => match formatted(format, operand, &meta) {
                Ok(text) => text,
                Err(directive) => {
                    io.errln(format_args!(
                        "stat: {directive}: the sandbox keeps no owners, modes or times; \
                         it has %n, %s, %F, %b, %B, %o"
                    ));
                    return Ok(1);
                }
            },
            None => format!(
                "  File: {operand}\n  Size: {:<15} Blocks: {:<10} IO Block: {BLOCK}   {}",
                meta.size,
                footprint(&meta) / 512,
                kind_name(&meta)
            ),
        };
        io.out(text.as_bytes());
        if newline {
            io.out(b"\n");
        }
    }
    Ok(status)
}

/// `format` with its directives filled in for `name`, or the first
/// directive the sandbox cannot fill.
fn formatted(format: &str, name: &str, meta: &Meta) -> Result<String, String> {
    let mut text = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            text.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => text.push_str(name),
            Some('s') => text.push_str(&meta.size.to_string()),
            Some('F') => text.push_str(kind_name(meta)),
            Some('b') => text.push_str(&(footprint(meta) / 512).to_string()),
            Some('B') => text.push_str("512"),
            Some('o') => text.push_str(&BLOCK.to_string()),
            Some('%') => text.push('%'),
            Some(other) => return Err(format!("%{other}")),
            None => text.push('%'),
        }
    }
    Ok(text)
}

fn kind_name(meta: &Meta) -> &'static str {
    match meta.kind {
        Kind::Dir => "directory",
        Kind::Symlink => "symbolic link",
        Kind::File if meta.size == 0 => "regular empty file",
        Kind::File => "regular file",
    }
}
