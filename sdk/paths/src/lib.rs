//! Workspace paths as every part of Cordon accepts them: relative to the
//! workspace root, `/`-separated, normalized (no `.`, `..` or empty
//! components), with `""` for the root. The host (its built-in tools and the
//! staging import) and the sandbox kit inside a backend both pass every path
//! through [`resolve`], so a path one side accepts the other accepts too.
//!
//! Sandbox backends also accept the folders of a run's active skills, which
//! they see read-only at `/skills/NAME` ([`resolve_mounted`]).
//!
//! A path is refused when it is absolute, when `..` climbs above the root,
//! when it holds a NUL, a backslash or any other control character (which no
//! file name an agent should see holds, and which could forge a line of a
//! diff or a log), and when it leads into Cordon's own [`RESERVED`] folder.

/// The folder at the workspace root where Cordon keeps its run store. No
/// component reaches it and no listing shows it.
pub const RESERVED: &str = ".cordon";

/// Where a sandbox backend sees the folder of each of a run's active skills,
/// read-only: `/skills/NAME`. Besides workspace paths, a backend accepts
/// these absolute paths ([`resolve_mounted`]), and nothing else absolute.
pub const SKILLS_ROOT: &str = "/skills";
/// Where a sandboxed interpreter finds the active skills' Python packages,
/// each skill's at `/packages/NAME`.
pub const PACKAGES_ROOT: &str = "/packages";

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

/// `path` resolved against `cwd` in normal form, where either may also be a
/// skill's mounted folder or a path in it (`/skills/NAME/...`): a workspace
/// path as [`resolve`] gives it, or an absolute path under
/// [`SKILLS_ROOT`]`/NAME`, which `..` may not climb out of. Any other
/// absolute path is refused.
pub fn resolve_mounted(cwd: &str, path: &str) -> Result<String, PathError> {
    if is_malformed(path) {
        return Err(PathError::Malformed(path.to_owned()));
    }
    let start = if path.starts_with('/') {
        ""
    } else if cwd.starts_with('/') {
        cwd
    } else {
        return resolve(cwd, path);
    };
    let mut parts: Vec<&str> = start.split('/').filter(|part| !part.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.len() <= 2 {
                    return Err(PathError::Escapes(path.to_owned()));
                }
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    let root = SKILLS_ROOT.trim_start_matches('/');
    if parts.len() < 2 || parts[0] != root {
        return Err(PathError::Absolute(path.to_owned()));
    }
    Ok(format!("/{}", parts.join("/")))
}

/// The skill whose mounted folder `path` (as [`resolve_mounted`] gives it)
/// lies in, and the path relative to that folder (`""` for the folder
/// itself); `None` for a workspace path.
pub fn mount_of(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix(SKILLS_ROOT)?.strip_prefix('/')?;
    let (name, inner) = rest.split_once('/').unwrap_or((rest, ""));
    (!name.is_empty()).then_some((name, inner))
}

/// The skill whose package folder `path` mounts (`/packages/NAME`).
pub fn package_mount_of(path: &str) -> Option<&str> {
    let name = path.strip_prefix(PACKAGES_ROOT)?.strip_prefix('/')?;
    (!name.is_empty() && !name.contains('/')).then_some(name)
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
    fn mounted_skill_folders_resolve_and_cannot_be_climbed_out_of() {
        assert_eq!(resolve_mounted("", "src/a").unwrap(), "src/a");
        assert_eq!(
            resolve_mounted("", "/skills/report/scripts/../SKILL.md").unwrap(),
            "/skills/report/SKILL.md"
        );
        assert_eq!(
            resolve_mounted("/skills/report", "scripts/x.py").unwrap(),
            "/skills/report/scripts/x.py"
        );
        assert_eq!(
            resolve_mounted("/skills/report/scripts", "..").unwrap(),
            "/skills/report"
        );
        assert_eq!(resolve_mounted("src", "/skills/a").unwrap(), "/skills/a");
        for (cwd, path) in [
            ("", "/etc/passwd"),
            ("", "/skills"),
            ("", "/skills/"),
            ("/skills/report", ".."),
            ("/skills/report", "../other/x"),
            ("", "/skills/report/../../etc"),
        ] {
            assert!(resolve_mounted(cwd, path).is_err(), "{cwd} {path}");
        }
        assert!(matches!(
            resolve_mounted("", "/skills/a\nb"),
            Err(PathError::Malformed(_))
        ));
        assert!(
            normalize("/skills/report").is_err(),
            "workspace paths stay relative"
        );
        assert_eq!(mount_of("/skills/report/a/b"), Some(("report", "a/b")));
        assert_eq!(mount_of("/skills/report"), Some(("report", "")));
        assert_eq!(mount_of("skills/report"), None);
        assert_eq!(mount_of("/skillsx/a"), None);
    }

    #[test]
    fn under_respects_component_boundaries() {
        assert!(is_under("src/a.rs", "src"));
        assert!(is_under("src", "src"));
        assert!(!is_under("srcx/a.rs", "src"));
        assert!(is_under("anything", ""));
    }
}
