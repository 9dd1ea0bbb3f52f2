//! Backslash escapes, decoded once for every place the language has them:
//! `echo -e` and `printf` formats (`\0NNN` octal, `\c` stops the output),
//! `$'...'` quoting (`\NNN` octal, `\'`, `\"`, `\?`), and the plain form
//! where a backslash only makes the next character literal (`read` without
//! `-r`, glob patterns). An escape a dialect does not know stays as written.

/// Which escapes a text takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    /// `echo -e` and `printf`.
    Echo,
    /// `$'...'`.
    AnsiC,
}

/// `text` with its escapes decoded as `dialect` reads them, and whether
/// `\c` cut it short (`echo` only).
pub(super) fn decode(text: &str, dialect: Dialect) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        match (escape, dialect) {
            ('n', _) => out.push('\n'),
            ('t', _) => out.push('\t'),
            ('r', _) => out.push('\r'),
            ('a', _) => out.push('\x07'),
            ('b', _) => out.push('\x08'),
            ('f', _) => out.push('\x0c'),
            ('v', _) => out.push('\x0b'),
            ('e' | 'E', _) => out.push('\x1b'),
            ('\\', _) => out.push('\\'),
            ('x', _) => match digits(&mut chars, 16, 2) {
                Some(value) => out.extend(char::from_u32(value)),
                None => out.push_str("\\x"),
            },
            ('c', Dialect::Echo) => return (out, true),
            ('0', Dialect::Echo) => {
                out.extend(char::from_u32(digits(&mut chars, 8, 3).unwrap_or(0)))
            }
            ('0'..='7', Dialect::AnsiC) => {
                let mut value = escape.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    let Some(digit) = chars.peek().and_then(|c| c.to_digit(8)) else {
                        break;
                    };
                    chars.next();
                    value = value * 8 + digit;
                }
                out.extend(char::from_u32(value));
            }
            ('\'' | '"' | '?', Dialect::AnsiC) => out.push(escape),
            (other, _) => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    (out, false)
}

/// Up to `most` digits of `radix` read from `chars`, as a number.
fn digits(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    radix: u32,
    most: usize,
) -> Option<u32> {
    let mut value = None;
    for _ in 0..most {
        let Some(digit) = chars.peek().and_then(|c| c.to_digit(radix)) else {
            break;
        };
        chars.next();
        value = Some(value.unwrap_or(0) * radix + digit);
    }
    value
}

/// `text` with each backslash removed and the character after it kept.
pub(super) fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}
