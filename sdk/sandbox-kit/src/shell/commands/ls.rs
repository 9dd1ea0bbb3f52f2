//! `ls`: one entry per line, as GNU ls prints when not writing to a terminal.
//! `-a` adds hidden entries with `.` and `..`, `-A` hidden entries alone,
//! `-l` prints a kind letter (`d`, `-`, `l`), the size and the name, `-F`
//! marks directories with `/`, `-d` lists directories themselves, `-R` lists
//! subdirectories too (`-1` is accepted; output is always one per line). A
//! symbolic link the system will not follow is listed through, so a link out
//! of the workspace is an error.

use super::{Outcome, options};
use crate::error::Error;
use crate::fs::{Kind, Meta, Prune};
use crate::path;
use crate::shell::args::Args;
use crate::shell::context::{Ctx, report};
use crate::shell::io::Io;
use std::collections::BTreeMap;

/// Directories with their entries, each under the heading it is listed with.
type Listing = Vec<(String, Vec<(String, Meta)>)>;

/// `ls [-aAlFdR1] [PATH...]`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "ls", args, "aAlFdR1h", "")?;
    let operands = if args.operands.is_empty() {
        vec![".".to_owned()]
    } else {
        args.operands.clone()
    };
    let mut status = 0;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for operand in &operands {
        let found = ctx.resolve(operand).and_then(|resolved| {
            let meta = ctx
                .fs
                .meta(&resolved)?
                .ok_or_else(|| Error::not_found(&resolved))?;
            Ok((resolved, meta))
        });
        match found {
            Ok((resolved, meta)) if meta.is_dir() && !args.has('d') => {
                dirs.push((operand.clone(), resolved));
            }
            Ok((resolved, meta)) if meta.kind == Kind::Symlink && !args.has('d') => {
                match ctx.fs.list(&resolved) {
                    Ok(_) => dirs.push((operand.clone(), resolved)),
                    Err(Error::Invalid(_)) => files.push((operand.clone(), meta)),
                    Err(error) => {
                        report(io, "ls", operand, &error);
                        status = 2;
                    }
                }
            }
            Ok((_, meta)) => files.push((operand.clone(), meta)),
            Err(error) => {
                report(io, "ls", operand, &error);
                status = 2;
            }
        }
    }
    for (name, meta) in &files {
        print_entry(io, &args, name, *meta);
    }
    let headers = operands.len() > 1 || args.has('R');
    let mut first = files.is_empty();
    for (shown, dir) in dirs {
        ctx.tick()?;
        let listing = if args.has('R') {
            recursive(ctx, &args, &shown, &dir)
        } else {
            ctx.fs
                .list(&dir)
                .map(|entries| vec![(shown.clone(), entries)])
        };
        match listing {
            Ok(listing) => {
                for (heading, entries) in listing {
                    if !first {
                        io.out(b"\n");
                    }
                    first = false;
                    if headers {
                        io.outln(format_args!("{heading}:"));
                    }
                    print_dir(io, &args, entries);
                }
            }
            Err(error) => {
                report(io, "ls", &shown, &error);
                status = 2;
            }
        }
    }
    Ok(status)
}

/// Whether an entry named `name` is shown.
fn visible(args: &Args, name: &str) -> bool {
    !name.starts_with('.') || args.has('a') || args.has('A')
}

/// Every directory at or beneath `dir` (shown as `shown`) with its entries,
/// from one walk; hidden directories are left out unless asked for.
fn recursive(ctx: &Ctx, args: &Args, shown: &str, dir: &str) -> crate::error::Result<Listing> {
    let mut listing: BTreeMap<String, Vec<(String, Meta)>> = BTreeMap::new();
    listing.insert(String::new(), Vec::new());
    for node in ctx.fs.walk(dir, Prune::Nothing)? {
        let relative = path::strip_dir(&node.path, dir).unwrap_or_default();
        if !relative.split('/').all(|name| visible(args, name)) {
            continue;
        }
        let parent = path::parent(relative).unwrap_or_default();
        if node.meta.kind == Kind::Dir {
            listing.entry(relative.to_owned()).or_default();
        }
        listing
            .entry(parent.to_owned())
            .or_default()
            .push((path::file_name(relative).to_owned(), node.meta));
    }
    let mut ordered: Listing = listing.into_iter().collect();
    ordered.sort_by(|left, right| path::walk_order(&left.0, &right.0));
    Ok(ordered
        .into_iter()
        .map(|(relative, entries)| {
            let heading = if relative.is_empty() {
                shown.to_owned()
            } else {
                format!("{}/{relative}", shown.trim_end_matches('/'))
            };
            (heading, entries)
        })
        .collect())
}

/// Prints a directory's entries.
fn print_dir(io: &mut Io, args: &Args, entries: Vec<(String, Meta)>) {
    if args.has('a') {
        print_entry(io, args, ".", Meta::DIR);
        print_entry(io, args, "..", Meta::DIR);
    }
    for (name, meta) in entries {
        if visible(args, &name) {
            print_entry(io, args, &name, meta);
        }
    }
}

/// Prints one entry as the flags ask.
fn print_entry(io: &mut Io, args: &Args, name: &str, meta: Meta) {
    let mark = if args.has('F') && meta.is_dir() && !name.ends_with('/') {
        "/"
    } else {
        ""
    };
    if args.has('l') {
        let kind = match meta.kind {
            Kind::Dir => 'd',
            Kind::File => '-',
            Kind::Symlink => 'l',
        };
        io.outln(format_args!("{kind} {:>10} {name}{mark}", meta.size));
    } else {
        io.outln(format_args!("{name}{mark}"));
    }
}
