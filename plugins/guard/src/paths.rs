//! Whether a path argument leaves the workspace. The check is lexical: the
//! guard cannot see the file system, so symbolic links are the sandbox's
//! business; what it refuses is any path written to point elsewhere.

/// Whether `path` is absolute (`/`, `\`, `~` or a drive letter) or climbs
/// above where it starts with `..`.
pub(crate) fn leaves_workspace(path: &str) -> bool {
    is_absolute(path) || climbs_out(path)
}

fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    path.starts_with(['/', '\\', '~'])
        || (bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':')
}

fn climbs_out(path: &str) -> bool {
    let mut depth = 0_usize;
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => match depth.checked_sub(1) {
                Some(up) => depth = up,
                None => return true,
            },
            _ => depth += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::leaves_workspace;

    #[test]
    fn absolute_paths_leave() {
        for path in [
            "/etc/passwd",
            "~/.ssh/id_rsa",
            "~",
            "C:\\Windows",
            "d:/x",
            "\\\\server\\share",
        ] {
            assert!(leaves_workspace(path), "{path}");
        }
    }

    #[test]
    fn climbing_above_the_start_leaves() {
        for path in ["..", "../x", "a/../../x", "a/./../..", "a\\..\\..\\b"] {
            assert!(leaves_workspace(path), "{path}");
        }
    }

    #[test]
    fn relative_paths_inside_stay() {
        for path in [
            "",
            ".",
            "src/lib.rs",
            "a/../b",
            "./a/./b/..",
            "a..b/c",
            "...",
            "notes.txt",
        ] {
            assert!(!leaves_workspace(path), "{path}");
        }
    }
}
