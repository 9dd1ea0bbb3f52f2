//! `wc`: line (`-l`), word (`-w`) and byte (`-c`) counts, all three by
//! default, with a total line for several files. Numbers are padded to a
//! common width unless a single count of a single input is printed.

use super::{Outcome, inputs, options};
use crate::shell::context::Ctx;
use crate::shell::io::Io;

/// `wc [-lwc] [FILE...]`.
pub(super) fn run(ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let args = options(io, "wc", args, "lwcm", "")?;
    let mut columns = [args.has('l'), args.has('w'), args.has('c') || args.has('m')];
    if columns.iter().all(|shown| !shown) {
        columns = [true; 3];
    }
    let (read, all_read) = inputs(ctx, io, "wc", &args.operands);
    let mut rows: Vec<([usize; 3], Option<String>)> = Vec::new();
    let mut total = [0; 3];
    for (name, data) in &read {
        ctx.tick()?;
        let counts = [
            memchr::memchr_iter(b'\n', data).count(),
            data.split(|byte| byte.is_ascii_whitespace())
                .filter(|word| !word.is_empty())
                .count(),
            data.len(),
        ];
        for (sum, count) in total.iter_mut().zip(counts) {
            *sum += count;
        }
        rows.push((counts, (name != "-").then(|| name.clone())));
    }
    if rows.len() > 1 {
        rows.push((total, Some("total".to_owned())));
    }
    let shown_count = columns.iter().filter(|shown| **shown).count();
    let width = if shown_count == 1 && rows.len() == 1 {
        0
    } else {
        let widest = total.iter().max().copied().unwrap_or(0).to_string().len();
        if args.operands.is_empty() {
            widest.max(7)
        } else {
            widest
        }
    };
    for (counts, name) in rows {
        let mut fields: Vec<String> = counts
            .iter()
            .zip(columns)
            .filter(|(_, shown)| *shown)
            .map(|(count, _)| format!("{count:>width$}"))
            .collect();
        fields.extend(name);
        io.outln(fields.join(" "));
    }
    Ok(if all_read { 0 } else { 1 })
}
