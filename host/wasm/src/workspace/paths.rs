//! Workspace paths as the host accepts them: relative, `/`-separated, no
//! `.`/`..` tricks once normalized, never absolute. Everything a model or a
//! backend hands the host passes through [`normalize`] first.

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path is absolute.
    #[error("{0:?} is absolute; paths are relative to the workspace root")]
    Absolute(String),
    /// The path climbs above the workspace root.
    #[error("{0:?} leaves the workspace")]
    Escapes(String),
    /// The path holds a NUL or backslash, which no workspace path holds.
    #[error("{0:?} is not a workspace path")]
    Malformed(String),
    /// The path is inside Cordon's own directory, which holds the run store.
    #[error("{0:?} is inside `{RESERVED}`, which belongs to Cordon")]
    Reserved(String),
}

/// The folder Cordon keeps its run store in; no agent reaches it.
pub const RESERVED: &str = ".cordon";

/// `path` normalized: `.` and empty components dropped, `..` applied; `""` is
/// the root.
pub fn normalize(path: &str) -> Result<String, PathError> {
    if path.starts_with('/') {
        return Err(PathError::Absolute(path.to_owned()));
    }
    if path.contains(['\0', '\\']) {
        return Err(PathError::Malformed(path.to_owned()));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(PathError::Escapes(path.to_owned()));
                }
            }
            part => parts.push(part),
        }
    }
    if parts.first() == Some(&RESERVED) {
        return Err(PathError::Reserved(path.to_owned()));
    }
    Ok(parts.join("/"))
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
    }

    #[test]
    fn escapes_and_absolute_paths_are_refused() {
        assert!(matches!(normalize("../x"), Err(PathError::Escapes(_))));
        assert!(matches!(normalize("a/../../x"), Err(PathError::Escapes(_))));
        assert!(matches!(
            normalize("/etc/passwd"),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(
            normalize("a\\..\\b"),
            Err(PathError::Malformed(_))
        ));
        assert!(matches!(
            normalize("src/../.cordon/cordon.db"),
            Err(PathError::Reserved(_))
        ));
    }

    #[test]
    fn under_respects_component_boundaries() {
        assert!(is_under("src/a.rs", "src"));
        assert!(is_under("src", "src"));
        assert!(!is_under("srcx/a.rs", "src"));
        assert!(is_under("anything", ""));
    }
}
