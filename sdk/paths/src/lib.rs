//! Workspace paths as every part of Cordon accepts them: relative to the
//! workspace root, `/`-separated, normalized (no `.`, `..` or empty
//! components), with `""` for the root. The host (its built-in tools and the
//! staging import) and the sandbox kit inside a backend both pass every path
//! through [`resolve`], so a path one side accepts the other accepts too.
//!
//! A path is refused when it is absolute, when `..` climbs above the root,
//! when it holds a NUL, a backslash or any other control character (which no
//! file name an agent should see holds, and which could forge a line of a
//! diff or a log), and when it leads into Cordon's own [`RESERVED`] folder.

/// The folder at the workspace root where Cordon keeps its run store. No
/// component reaches it and no listing shows it.
pub const RESERVED: &str = ".cordon";

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path is absolute.
    #[error("{0}: absolute paths are outside the workspace")]
    Absolute(String),
    /// The path climbs above the workspace root.
    #[error("{0} leaves the workspace")]
    Escapes(String),
    /// The path holds a NUL, a backslash or another control character. The
    /// message shows it escaped, so it cannot forge a line of its own.
    #[error("{0:?} holds a backslash or a control character, which no workspace path holds")]
    Malformed(String),
    /// The path is inside Cordon's own folder, which holds the run store.
    #[error("{0}: `{RESERVED}` belongs to Cordon")]
    Reserved(String),
}

/// `path`, relative to the workspace root, in normal form.
pub fn normalize(path: &str) -> Result<String, PathError> {
    resolve("", path)
}

/// `path` resolved against `cwd` (itself a normalized workspace path), in
/// normal form.
pub fn resolve(cwd: &str, path: &str) -> Result<String, PathError> {
    if path.starts_with('/') {
        return Err(PathError::Absolute(path.to_owned()));
    }
    if is_malformed(path) {
        return Err(PathError::Malformed(path.to_owned()));
    }
    let mut parts: Vec<&str> = cwd.split('/').filter(|part| !part.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(PathError::Escapes(path.to_owned()));
                }
            }
            name => parts.push(name),
        }
    }
    if parts.first() == Some(&RESERVED) {
        return Err(PathError::Reserved(path.to_owned()));
    }
    Ok(parts.join("/"))
}

/// Whether `text` holds a backslash or a control character (NUL, newline,
/// escape, DEL, the C1 controls...).
pub fn is_malformed(text: &str) -> bool {
    text.chars().any(|c| c == '\\' || c.is_control())
}

/// Whether `path` is `prefix` or lies beneath it (`""` holds everything).
pub fn is_under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_inside_the_root() {
        assert_eq!(normalize("a/./b//c").unwrap(), "a/b/c");
        assert_eq!(normalize("a/../b").unwrap(), "b");
        assert_eq!(normalize(".").unwrap(), "");
        assert_eq!(normalize("").unwrap(), "");
        assert_eq!(normalize("a/b/").unwrap(), "a/b");
        assert_eq!(resolve("src", "../x").unwrap(), "x");
        assert_eq!(resolve("src/a", "b/./c").unwrap(), "src/a/b/c");
    }

    #[test]
    fn escapes_and_absolute_paths_are_refused() {
        assert!(matches!(normalize("../x"), Err(PathError::Escapes(_))));
        assert!(matches!(normalize("a/../../x"), Err(PathError::Escapes(_))));
        assert!(matches!(
            resolve("src", "../../x"),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(
            normalize("/etc/passwd"),
            Err(PathError::Absolute(_))
        ));
    }

    #[test]
    fn backslashes_and_control_characters_are_refused() {
        for path in [
            "a\\..\\b",
            "a\0b",
            "a\nb",
            "x\r",
            "tab\there",
            "esc\u{1b}[2J",
            "c1\u{85}",
        ] {
            assert!(
                matches!(normalize(path), Err(PathError::Malformed(_))),
                "{path:?}"
            );
        }
        assert_eq!(normalize("ünïcode/名前.txt").unwrap(), "ünïcode/名前.txt");
    }

    #[test]
    fn the_reserved_folder_is_refused_however_it_is_reached() {
        for path in [
            ".cordon",
            ".cordon/cordon.db",
            "src/../.cordon/x",
            "./.cordon",
        ] {
            assert!(
                matches!(normalize(path), Err(PathError::Reserved(_))),
                "{path}"
            );
        }
        assert!(matches!(
            resolve("src", "../.cordon"),
            Err(PathError::Reserved(_))
        ));
        assert_eq!(normalize("src/.cordon").unwrap(), "src/.cordon");
    }

    #[test]
    fn under_respects_component_boundaries() {
        assert!(is_under("src/a.rs", "src"));
        assert!(is_under("src", "src"));
        assert!(!is_under("srcx/a.rs", "src"));
        assert!(is_under("anything", ""));
    }
}
