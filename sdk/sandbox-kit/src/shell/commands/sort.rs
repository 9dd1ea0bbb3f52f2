//! `sort`: lines in byte order (the C locale). `-r` reverses, `-n` compares
//! leading numbers (lines without one count as 0), `-f` folds case, `-u`
//! keeps the first of equal lines, `-k N[,M]` compares from field N (to field
//! M), `-t SEP` splits fields at SEP instead of at blank runs. Ties are broken
//! by the whole line unless `-u`.

use super::{Outcome, inputs, lines, options};
use crate::shell::context::Ctx;
use crate::shell::io::Io;
use std::cmp::Ordering;

/// The comparison the flags ask for.
struct Order {
    numeric: bool,
    fold: bool,
    key: Option<(usize, Option<usize>)>,
    separator: Option<u8>,
}

/// `sort [-rnufs] [-k N[,M]] [-t SEP] [FILE...]`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "sort", args, "rnufsb", "kto")?;
    let key = match args.value('k').map(parse_key) {
        None => None,
        Some(Some(key)) => Some(key),
        Some(None) => {
            io.errln(format_args!(
                "sort: invalid key: {}",
                args.value('k').unwrap_or("")
            ));
            return Ok(2);
        }
    };
    let separator = match args.value('t').map(str::as_bytes) {
        None => None,
        Some([byte]) => Some(*byte),
        Some(_) => {
            io.errln("sort: the field separator must be a single byte");
            return Ok(2);
        }
    };
    let order = Order {
        numeric: args.has('n'),
        fold: args.has('f'),
        key,
        separator,
    };
    let (read, all_read) = inputs(ctx, io, "sort", &args.operands);
    let mut all: Vec<&[u8]> = read.iter().flat_map(|(_, data)| lines(data)).collect();
    ctx.check()?;
    all.sort_by(|left, right| {
        let ordering = order.compare(left, right);
        if ordering == Ordering::Equal && !args.has('u') && !args.has('s') {
            left.cmp(right)
        } else {
            ordering
        }
    });
    if args.has('r') {
        all.reverse();
    }
    if args.has('u') {
        all.dedup_by(|next, kept| order.compare(kept, next) == Ordering::Equal);
    }
    let mut out = Vec::new();
    for line in all {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    io.out(&out);
    Ok(if all_read { 0 } else { 2 })
}

/// Parses `N` or `N,M` (options after the numbers, such as `2n`, are ignored).
fn parse_key(spec: &str) -> Option<(usize, Option<usize>)> {
    let number = |text: &str| -> Option<usize> {
        let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok().filter(|&field| field > 0)
    };
    match spec.split_once(',') {
        Some((start, end)) => Some((number(start)?, Some(number(end)?))),
        None => Some((number(spec)?, None)),
    }
}

impl Order {
    fn compare(&self, left: &[u8], right: &[u8]) -> Ordering {
        let (left, right) = (self.key_of(left), self.key_of(right));
        if self.numeric {
            number(left)
                .partial_cmp(&number(right))
                .unwrap_or(Ordering::Equal)
        } else if self.fold {
            left.iter()
                .map(u8::to_ascii_uppercase)
                .cmp(right.iter().map(u8::to_ascii_uppercase))
        } else {
            left.cmp(right)
        }
    }

    /// The part of `line` compared.
    fn key_of<'l>(&self, line: &'l [u8]) -> &'l [u8] {
        let Some((start, end)) = self.key else {
            return line;
        };
        let fields = field_bounds(line, self.separator);
        let Some(&(from, _)) = fields.get(start - 1) else {
            return &[];
        };
        let to = match end {
            Some(end) => fields.get(end - 1).map_or(line.len(), |&(_, to)| to),
            None => line.len(),
        };
        &line[from..to.max(from)]
    }
}

/// Start and end of each field of `line`: split at `separator`, or at runs of
/// blanks (a field keeps the blanks before it, as in GNU sort).
fn field_bounds(line: &[u8], separator: Option<u8>) -> Vec<(usize, usize)> {
    let mut bounds = Vec::new();
    match separator {
        Some(separator) => {
            let mut start = 0;
            for (at, &byte) in line.iter().enumerate() {
                if byte == separator {
                    bounds.push((start, at));
                    start = at + 1;
                }
            }
            bounds.push((start, line.len()));
        }
        None => {
            let mut at = 0;
            while at < line.len() {
                let start = at;
                while at < line.len() && line[at].is_ascii_whitespace() {
                    at += 1;
                }
                while at < line.len() && !line[at].is_ascii_whitespace() {
                    at += 1;
                }
                bounds.push((start, at));
            }
        }
    }
    bounds
}

/// The number at the start of `text` (after blanks), 0 if there is none.
fn number(text: &[u8]) -> f64 {
    let text = String::from_utf8_lossy(text);
    let text = text.trim_start();
    let end = text
        .char_indices()
        .find(|&(at, c)| !(c.is_ascii_digit() || c == '.' || (at == 0 && c == '-')))
        .map_or(text.len(), |(at, _)| at);
    text[..end].parse().unwrap_or(0.0)
}
