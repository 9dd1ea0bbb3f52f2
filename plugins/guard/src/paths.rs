//! Whether a path argument leaves the workspace. The check is lexical: the
//! guard cannot see the file system, so symbolic links are the sandbox's
//! business; what it refuses is any path written to point elsewhere. The
//! folder of an active skill, which a sandbox backend mounts read-only at
//! `/skills/NAME`, is no elsewhere: a path inside it stays.

/// Whether `path` is absolute (`/`, `\`, `~` or a drive letter) or climbs
/// above where it starts with `..`, and is not a path in a skill's folder.
pub(crate) fn leaves_workspace(path: &str) -> bool {
    let in_skill = cordon_paths::resolve_mounted("", path)
        .is_ok_and(|resolved| cordon_paths::mount_of(&resolved).is_some());
    !in_skill && (is_absolute(path) || climbs_out(path))
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
    fn a_skills_folder_stays_and_climbing_out_of_it_leaves() {
        assert!(!leaves_workspace("/skills/report/references/format.md"));
        assert!(!leaves_workspace("/skills/report"));
        assert!(leaves_workspace("/skills/report/../../etc/passwd"));
        assert!(leaves_workspace("/skills"));
        assert!(leaves_workspace("/skillsx/a"));
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
