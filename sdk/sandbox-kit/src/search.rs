//! Finding the lines a regular expression matches in a whole buffer: the
//! expression runs over the buffer once and line bounds and numbers are only
//! worked out around the matches, which is what keeps searches fast.

use memchr::{memchr, memchr_iter, memrchr};
use regex::bytes::Regex;
use std::ops::ControlFlow;

/// How much of a file's start is checked for a NUL byte.
const BINARY_PROBE: usize = 8 * 1024;

/// Whether `data` looks binary: a NUL byte in its first 8 KiB.
pub(crate) fn is_binary(data: &[u8]) -> bool {
    memchr(0, &data[..data.len().min(BINARY_PROBE)]).is_some()
}

/// Calls `visit` with the 1-based number and the text (without `\n`) of each
/// line of `data` that `regex` matches, in order, until it breaks.
pub(crate) fn matching_lines(
    regex: &Regex,
    data: &[u8],
    mut visit: impl FnMut(usize, &[u8]) -> ControlFlow<()>,
) {
    let mut from = 0;
    let mut number = 1;
    let mut counted_to = 0;
    while from <= data.len() {
        let Some(found) = regex.find_at(data, from) else {
            return;
        };
        let start = memrchr(b'\n', &data[..found.start()]).map_or(0, |newline| newline + 1);
        let end = memchr(b'\n', &data[found.start()..]).map_or(data.len(), |at| found.start() + at);
        if start == data.len() {
            return;
        }
        number += memchr_iter(b'\n', &data[counted_to..start]).count();
        counted_to = start;
        if visit(number, &data[start..end]).is_break() {
            return;
        }
        from = end + 1;
    }
}

/// `line` without a trailing carriage return.
pub(crate) fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(pattern: &str, data: &str) -> Vec<(usize, String)> {
        let regex = regex::bytes::RegexBuilder::new(pattern)
            .multi_line(true)
            .build()
            .unwrap();
        let mut found = Vec::new();
        matching_lines(&regex, data.as_bytes(), |number, line| {
            found.push((number, String::from_utf8_lossy(line).into_owned()));
            ControlFlow::Continue(())
        });
        found
    }

    #[test]
    fn numbers_matching_lines_once_each() {
        assert_eq!(
            lines("o", "one\ntwo two\nthree\nfour"),
            [(1, "one".into()), (2, "two two".into()), (4, "four".into())]
        );
        assert_eq!(lines("^$", "a\n\nb\n"), [(2, String::new())]);
        assert_eq!(lines("^", "a\nb\n").len(), 2);
        assert_eq!(lines("x", ""), []);
        assert_eq!(
            lines("b$", "ab\ncd\neb"),
            [(1, "ab".into()), (3, "eb".into())]
        );
    }

    #[test]
    fn spots_binary_data() {
        assert!(is_binary(b"ab\0c"));
        assert!(!is_binary(b"abc"));
    }
}
