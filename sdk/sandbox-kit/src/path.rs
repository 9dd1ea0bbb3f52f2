//! Workspace paths: relative to the workspace root, `/`-separated, normalized
//! (no `.`, `..` or empty components), with `""` for the root; and the
//! folders of the run's active skills, mounted read-only at `/skills/NAME`
//! (the only absolute paths). Every path that enters the kit goes through
//! [`normalize`] or [`resolve`], which apply the rule the host applies too
//! ([`cordon_paths`]): no other absolute paths, no `..` above the root or out
//! of a skill's folder, no backslashes or control characters, and never
//! Cordon's own [`RESERVED`] folder.

use crate::error::{Error, Result};

pub use cordon_paths::{RESERVED, SKILLS_ROOT, mount_of};

/// `path`, relative to the workspace root, in normal form.
pub fn normalize(path: &str) -> Result<String> {
    resolve("", path)
}

/// `path` resolved against `cwd` (itself a normalized path), in normal form.
pub fn resolve(cwd: &str, path: &str) -> Result<String> {
    cordon_paths::resolve_mounted(cwd, path).map_err(|error| Error::Denied(error.to_string()))
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
    fn skill_folders_are_the_only_absolute_paths() {
        assert_eq!(normalize("/skills/a/./b").unwrap(), "/skills/a/b");
        assert_eq!(resolve("/skills/a", "b/../c").unwrap(), "/skills/a/c");
        assert!(matches!(resolve("/skills/a", ".."), Err(Error::Denied(_))));
    }

    #[test]
    fn refuses_escapes() {
        for path in ["/etc/passwd", "../x", "a/../../b", "a\nb", ".cordon/x"] {
            assert!(matches!(normalize(path), Err(Error::Denied(_))), "{path:?}");
        }
        assert!(matches!(resolve("src", "../../x"), Err(Error::Denied(_))));
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
