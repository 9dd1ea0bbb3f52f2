//! Tool-name globs: `*` matches any run of characters, everything else itself.

/// Whether `name` matches `pattern`.
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0, 0);
    // Where the last `*` was, and how much of `name` it has taken so far; on a
    // mismatch it takes one more character and matching resumes after it.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    star = Some((star_p, star_n + 1));
                    p = star_p + 1;
                    n = star_n + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn literal_and_wildcards() {
        assert!(matches("shell.run", "shell.run"));
        assert!(!matches("shell.run", "shell.runner"));
        assert!(matches("shell.*", "shell.run"));
        assert!(matches("*", "anything"));
        assert!(matches("*.delete", "notes.delete"));
        assert!(!matches("*.delete", "notes.deleted"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYbZ"));
        assert!(matches("files.**", "files."));
        assert!(!matches("", "x"));
        assert!(matches("", ""));
    }
}
