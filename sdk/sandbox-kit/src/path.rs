//! Workspace paths: relative to the workspace root, `/`-separated, normalized
//! (no `.`, `..` or empty components), with `""` for the root. Every path that
//! enters the kit goes through [`normalize`] or [`resolve`], which refuse
//! absolute paths, `..` that climbs above the root, and Cordon's own
//! [`RESERVED`] folder.

use crate::error::{Error, Result};

/// The folder at the workspace root where Cordon keeps its run store. No
/// operation reaches it, and listings never show it.
pub const RESERVED: &str = ".cordon";

/// `path`, relative to the workspace root, in normal form.
pub fn normalize(path: &str) -> Result<String> {
    resolve("", path)
}

/// `path` resolved against `cwd` (itself a normalized workspace path), in
/// normal form.
pub fn resolve(cwd: &str, path: &str) -> Result<String> {
    if path.starts_with('/') {
        return Err(Error::Denied(format!(
            "{path}: absolute paths are outside the workspace"
        )));
    }
    let mut parts: Vec<&str> = cwd.split('/').filter(|part| !part.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(Error::Denied(format!("{path} leaves the workspace")));
                }
            }
            name => parts.push(name),
        }
    }
    if parts.first() == Some(&RESERVED) {
        return Err(Error::Denied(format!(
            "{path}: `{RESERVED}` belongs to Cordon"
        )));
    }
    Ok(parts.join("/"))
}

/// The path of `name` inside the directory `dir`.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else if name.is_empty() {
        dir.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The directory holding `path`; `None` for the root.
pub fn parent(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    Some(path.rfind('/').map_or("", |slash| &path[..slash]))
}

/// The last component of `path`; `""` for the root.
pub fn file_name(path: &str) -> &str {
    path.rfind('/').map_or(path, |slash| &path[slash + 1..])
}

/// Every proper ancestor of `path` except the root, outermost first:
/// `a`, `a/b` for `a/b/c`.
pub fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/')
        .map(move |(slash, _)| &path[..slash])
}

/// `path` relative to `dir` when it is `dir` or lies beneath it: `Some("")`
/// for `dir` itself.
pub fn strip_dir<'p>(path: &'p str, dir: &str) -> Option<&'p str> {
    if dir.is_empty() {
        return Some(path);
    }
    let rest = path.strip_prefix(dir)?;
    if rest.is_empty() {
        Some(rest)
    } else {
        rest.strip_prefix('/')
    }
}

/// Orders paths as a depth-first walk visits them: component by component, so
/// a directory's entries follow it directly (`a`, `a/b`, `a.txt`).
pub fn walk_order(left: &str, right: &str) -> std::cmp::Ordering {
    left.split('/').cmp(right.split('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_inside_paths() {
        assert_eq!(normalize("").unwrap(), "");
        assert_eq!(normalize(".").unwrap(), "");
        assert_eq!(normalize("./src//lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(normalize("src/../README.md").unwrap(), "README.md");
        assert_eq!(normalize("a/b/").unwrap(), "a/b");
        assert_eq!(resolve("src", "../x").unwrap(), "x");
        assert_eq!(resolve("src/a", "b/./c").unwrap(), "src/a/b/c");
    }

    #[test]
    fn refuses_escapes() {
        assert_eq!(
            normalize("/etc/passwd"),
            Err(Error::Denied(
                "/etc/passwd: absolute paths are outside the workspace".into()
            ))
        );
        assert_eq!(
            normalize("../x"),
            Err(Error::Denied("../x leaves the workspace".into()))
        );
        assert_eq!(
            resolve("src", "../../x"),
            Err(Error::Denied("../../x leaves the workspace".into()))
        );
        assert!(normalize("a/../../b").is_err());
    }

    #[test]
    fn splits_paths() {
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("a", "b"), "a/b");
        assert_eq!(parent("a/b"), Some("a"));
        assert_eq!(parent("a"), Some(""));
        assert_eq!(parent(""), None);
        assert_eq!(file_name("a/b.rs"), "b.rs");
        assert_eq!(ancestors("a/b/c").collect::<Vec<_>>(), ["a", "a/b"]);
        assert_eq!(strip_dir("a/b", "a"), Some("b"));
        assert_eq!(strip_dir("ab", "a"), None);
        assert_eq!(strip_dir("a", "a"), Some(""));
        let mut paths = vec!["a.txt", "a/b", "a"];
        paths.sort_by(|l, r| walk_order(l, r));
        assert_eq!(paths, ["a", "a/b", "a.txt"]);
    }
}
