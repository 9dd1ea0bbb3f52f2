//! POSIX basic regular expressions (grep and sed without `-E`) rewritten as
//! the extended syntax the `regex` crate reads: `\(`, `\)`, `\{`, `\}`, `\|`,
//! `\+`, `\?` become operators and their bare forms become literals.

/// `pattern`, a basic regular expression, in extended syntax.
pub(super) fn basic_to_extended(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        if in_class {
            out.push(c);
            if c == ']' {
                in_class = false;
            }
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                out.push(c);
                for first in ['^', ']'] {
                    if chars.peek() == Some(&first) {
                        out.push(first);
                        chars.next();
                    }
                }
            }
            '\\' => match chars.next() {
                Some(op @ ('(' | ')' | '{' | '}' | '|' | '+' | '?')) => out.push(op),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push_str("\\\\"),
            },
            '(' | ')' | '{' | '}' | '|' | '+' | '?' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_escaped_operators() {
        assert_eq!(basic_to_extended(r"\(ab\)\+"), "(ab)+");
        assert_eq!(basic_to_extended("a+b?(c)"), r"a\+b\?\(c\)");
        assert_eq!(basic_to_extended(r"x\{2\}"), "x{2}");
        assert_eq!(basic_to_extended("[(]"), "[(]");
        assert_eq!(basic_to_extended(r"a\.b"), r"a\.b");
    }
}
