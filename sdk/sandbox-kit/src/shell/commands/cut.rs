//! `cut`: selected fields (`-f LIST` split at `-d DELIM`, a tab by default)
//! or characters (`-c LIST`, or bytes with `-b`) of each line. A LIST is
//! comma-separated numbers and ranges: `1,3-5`, `-2`, `4-`. With `-f`, lines
//! without the delimiter print whole unless `-s`.

use super::{Outcome, inputs, lines, options};
use crate::shell::context::Ctx;
use crate::shell::io::Io;

/// Inclusive 1-based ranges; `usize::MAX` for an open end.
type List = Vec<(usize, usize)>;

/// `cut -f LIST [-d DELIM] [-s] | -c LIST | -b LIST [FILE...]`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "cut", args, "s", "fcbd")?;
    let (mode, spec) = match (args.value('f'), args.value('c'), args.value('b')) {
        (Some(spec), None, None) => ('f', spec),
        (None, Some(spec), None) => ('c', spec),
        (None, None, Some(spec)) => ('b', spec),
        _ => {
            io.errln("cut: you must specify exactly one of -f, -c or -b");
            return Ok(1);
        }
    };
    let Some(list) = parse_list(spec) else {
        io.errln(format_args!("cut: invalid list: '{spec}'"));
        return Ok(1);
    };
    let delimiter = args.value('d').unwrap_or("\t");
    if delimiter.chars().count() != 1 {
        io.errln("cut: the delimiter must be a single character");
        return Ok(1);
    }
    let selected = |index: usize| list.iter().any(|&(from, to)| from <= index && index <= to);
    let (read, all_read) = inputs(ctx, io, "cut", &args.operands);
    let mut out = String::new();
    for (_, data) in &read {
        for line in lines(data) {
            ctx.tick()?;
            let line = String::from_utf8_lossy(line);
            match mode {
                'f' => {
                    if !line.contains(delimiter) {
                        if !args.has('s') {
                            out.push_str(&line);
                            out.push('\n');
                        }
                        continue;
                    }
                    let fields: Vec<&str> = line
                        .split(delimiter)
                        .enumerate()
                        .filter(|(index, _)| selected(index + 1))
                        .map(|(_, field)| field)
                        .collect();
                    out.push_str(&fields.join(delimiter));
                }
                'c' => out.extend(
                    line.chars()
                        .enumerate()
                        .filter(|(index, _)| selected(index + 1))
                        .map(|(_, c)| c),
                ),
                _ => {
                    let bytes: Vec<u8> = line
                        .bytes()
                        .enumerate()
                        .filter(|(index, _)| selected(index + 1))
                        .map(|(_, byte)| byte)
                        .collect();
                    out.push_str(&String::from_utf8_lossy(&bytes));
                }
            }
            out.push('\n');
        }
    }
    io.out(out.as_bytes());
    Ok(if all_read { 0 } else { 1 })
}

/// Parses a LIST such as `1,3-5,7-`.
fn parse_list(spec: &str) -> Option<List> {
    spec.split(',')
        .map(|part| {
            let number = |text: &str, open: usize| -> Option<usize> {
                if text.is_empty() {
                    Some(open)
                } else {
                    text.parse().ok().filter(|&n| n > 0)
                }
            };
            match part.split_once('-') {
                Some((from, to)) if !(from.is_empty() && to.is_empty()) => {
                    Some((number(from, 1)?, number(to, usize::MAX)?))
                }
                Some(_) => None,
                None => {
                    let at = number(part, 0).filter(|&n| n > 0)?;
                    Some((at, at))
                }
            }
        })
        .collect()
}
