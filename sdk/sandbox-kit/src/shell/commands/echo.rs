//! `echo` (`-n`, `-e` for backslash escapes, `-E`) and `printf` (`%s`, `%d`,
//! `%i`, `%x`, `%o`, `%c`, `%f`, `%%` with flags `-` and `0`, width and
//! precision; the format is reused while arguments remain).

use super::Outcome;
use crate::shell::context::Ctx;
use crate::shell::io::Io;

/// `echo [-neE] [ARG...]`.
pub(super) fn echo(_ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let mut newline = true;
    let mut escapes = false;
    let mut rest = args;
    while let Some((first, others)) = rest.split_first() {
        let Some(letters) = first.strip_prefix('-') else {
            break;
        };
        if letters.is_empty() || !letters.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for letter in letters.chars() {
            match letter {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        rest = others;
    }
    let text = rest.join(" ");
    let (text, stop) = if escapes {
        unescape(&text)
    } else {
        (text, false)
    };
    io.out(text.as_bytes());
    if newline && !stop {
        io.out(b"\n");
    }
    Ok(0)
}

/// `text` with backslash escapes replaced, and whether `\c` cut it short.
fn unescape(text: &str) -> (String, bool) {
    crate::shell::escapes::decode(text, crate::shell::escapes::Dialect::Echo)
}

/// `printf FORMAT [ARG...]`.
pub(super) fn printf(_ctx: &mut Ctx, args: &[String], io: &mut Io) -> Outcome {
    let Some((format, mut rest)) = args.split_first() else {
        io.errln("printf: usage: printf FORMAT [ARGUMENT...]");
        return Ok(2);
    };
    let (format, _) = unescape(format);
    let mut status = 0;
    loop {
        let mut used = 0;
        let out = render(&format, rest, &mut used, &mut status, io);
        io.out(out.as_bytes());
        rest = &rest[used.min(rest.len())..];
        if used == 0 || rest.is_empty() {
            return Ok(status);
        }
    }
}

/// One pass of `format` over `args`, counting the arguments it took.
fn render(
    format: &str,
    args: &[String],
    used: &mut usize,
    status: &mut i32,
    io: &mut Io,
) -> String {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&next) = chars.peek() {
            if matches!(next, '-' | '0' | '.' | '+' | ' ' | '#') || next.is_ascii_digit() {
                spec.push(next);
                chars.next();
            } else {
                break;
            }
        }
        let Some(conversion) = chars.next() else {
            out.push('%');
            out.push_str(&spec);
            break;
        };
        if conversion == '%' {
            out.push('%');
            continue;
        }
        let arg = args.get(*used).map_or("", String::as_str);
        *used += 1;
        let left = spec.starts_with('-');
        let zero = spec.trim_start_matches('-').starts_with('0') && !left;
        let mut numbers = spec
            .trim_start_matches(['-', '0', '+', ' ', '#'])
            .splitn(2, '.');
        let width: usize = numbers.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        let precision: Option<usize> = numbers.next().map(|p| p.parse().unwrap_or(0));
        let mut integer = || {
            arg.trim().parse::<i64>().unwrap_or_else(|_| {
                if !arg.is_empty() {
                    io.errln(format_args!("printf: {arg}: invalid number"));
                    *status = 1;
                }
                0
            })
        };
        let text = match conversion {
            's' => match precision {
                Some(p) => arg.chars().take(p).collect(),
                None => arg.to_owned(),
            },
            'd' | 'i' => integer().to_string(),
            'x' => format!("{:x}", integer()),
            'X' => format!("{:X}", integer()),
            'o' => format!("{:o}", integer()),
            'c' => arg.chars().next().map(String::from).unwrap_or_default(),
            'f' => format!(
                "{:.*}",
                precision.unwrap_or(6),
                arg.trim().parse::<f64>().unwrap_or(0.0)
            ),
            other => format!("%{spec}{other}"),
        };
        let pad = width.saturating_sub(text.chars().count());
        if left {
            out.push_str(&text);
            out.extend(std::iter::repeat_n(' ', pad));
        } else if zero && conversion != 's' {
            let (sign, digits) = text
                .strip_prefix('-')
                .map_or(("", text.as_str()), |d| ("-", d));
            out.push_str(sign);
            out.extend(std::iter::repeat_n('0', pad));
            out.push_str(digits);
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(&text);
        }
    }
    out
}
