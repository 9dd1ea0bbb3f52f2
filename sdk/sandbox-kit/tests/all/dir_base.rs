//! The folder-backed base layer: direct writes, and walks that never follow a
//! symbolic link out of the workspace.

use cordon_sandbox_kit::workspace::{self, GrepQuery};
use cordon_sandbox_kit::{DirBase, Direct, Error, FileSystem, Kind, Prune};
use std::fs;

fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src/deep")).unwrap();
    fs::write(dir.path().join("src/lib.rs"), "pub fn lib() {}\n").unwrap();
    fs::write(dir.path().join("src/deep/x.rs"), "// needle\n").unwrap();
    fs::write(dir.path().join("README.md"), "# readme\n").unwrap();
    dir
}

#[test]
fn direct_writes_reach_the_folder() {
    let dir = folder();
    let fs = Direct::new(DirBase::new(dir.path()));
    workspace::write(&fs, "new/file.txt", b"data").unwrap();
    assert_eq!(fs::read(dir.path().join("new/file.txt")).unwrap(), b"data");
    workspace::edit(&fs, "README.md", "readme", "README").unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("README.md")).unwrap(),
        "# README\n"
    );
    workspace::rename(&fs, "src", "source").unwrap();
    assert!(dir.path().join("source/deep/x.rs").exists());
    workspace::mkdir(&fs, "a/b").unwrap();
    workspace::remove(&fs, "a/b").unwrap();
    assert!(!dir.path().join("a/b").exists());
    assert!(matches!(
        workspace::remove(&fs, "source"),
        Err(Error::Invalid(_))
    ));
    let (code, _, stderr) = crate::common::run(&fs, "rm -r source && echo done > log.txt");
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(!dir.path().join("source").exists());
    assert_eq!(fs::read(dir.path().join("log.txt")).unwrap(), b"done\n");
}

#[test]
fn reads_and_lists_the_folder() {
    let dir = folder();
    let fs = Direct::new(DirBase::new(dir.path()));
    assert_eq!(
        workspace::read(&fs, "src/lib.rs").unwrap(),
        b"pub fn lib() {}\n"
    );
    let names: Vec<String> = workspace::list_dir(&fs, "")
        .unwrap()
        .into_iter()
        .map(|entry| entry.path)
        .collect();
    assert_eq!(names, ["README.md", "src"]);
    assert!(matches!(
        workspace::read(&fs, "src"),
        Err(Error::Invalid(_))
    ));
    assert!(matches!(
        workspace::read(&fs, "nope.txt"),
        Err(Error::NotFound(_))
    ));
    let walked: Vec<String> = fs
        .walk("", Prune::Nothing)
        .unwrap()
        .into_iter()
        .map(|node| node.path)
        .collect();
    assert_eq!(
        walked,
        [
            "README.md",
            "src",
            "src/deep",
            "src/deep/x.rs",
            "src/lib.rs"
        ]
    );
}

#[cfg(unix)]
#[test]
fn walks_do_not_follow_symlinks_out() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.txt"), "needle secret\n").unwrap();
    let dir = folder();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("link.txt"),
    )
    .unwrap();
    let fs = Direct::new(DirBase::new(dir.path()));
    let nodes = fs.walk("", Prune::Nothing).unwrap();
    assert!(nodes.iter().all(|node| !node.path.starts_with("escape/")));
    let escape = nodes.iter().find(|node| node.path == "escape").unwrap();
    assert_eq!(escape.meta.kind, Kind::Symlink);
    let result = workspace::grep(
        &fs,
        &GrepQuery {
            pattern: "needle".into(),
            path: String::new(),
            file_glob: None,
            case_insensitive: false,
            max_matches: 10,
        },
    )
    .unwrap();
    let paths: Vec<&str> = result.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["src/deep/x.rs"]);
    assert!(workspace::glob(&fs, "**/*.txt").unwrap().is_empty());
    assert_eq!(crate::common::out(&fs, "find . -name 'secret*'"), "");
    assert_eq!(
        crate::common::out(&fs, "find . -name '*.txt'"),
        "./link.txt\n"
    );
    assert_eq!(crate::common::out(&fs, "find . -type f -name '*.txt'"), "");
    assert_eq!(
        crate::common::out(&fs, "grep -rl needle ."),
        "./src/deep/x.rs\n"
    );
}

#[cfg(unix)]
#[test]
fn writing_over_a_link_replaces_the_link() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    let dir = folder();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("planted"),
    )
    .unwrap();
    let direct = Direct::new(DirBase::new(dir.path()));
    workspace::write(&direct, "planted", b"replaced").unwrap();
    assert_eq!(
        fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "secret"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("planted")).unwrap(),
        "replaced"
    );
    std::os::unix::fs::symlink(outside.path().join("gone"), dir.path().join("dangling")).unwrap();
    assert_eq!(
        direct.meta("dangling").unwrap().map(|meta| meta.kind),
        Some(Kind::Symlink)
    );
    let (code, _, stderr) = crate::common::run(&direct, "ls dangling");
    assert_eq!(
        (code, stderr.as_str()),
        (2, "ls: dangling: No such file or directory\n")
    );
}

#[test]
fn git_directories_are_pruned_from_searches() {
    let dir = folder();
    fs::create_dir(dir.path().join(".git")).unwrap();
    fs::write(dir.path().join(".git/HEAD"), "needle\n").unwrap();
    let fs = Direct::new(DirBase::new(dir.path()));
    let nodes = fs.walk("", Prune::GitDirs).unwrap();
    assert!(nodes.iter().all(|node| !node.path.starts_with(".git")));
    assert_eq!(fs.walk("", Prune::Nothing).unwrap().len(), nodes.len() + 2);
}

#[test]
fn the_run_store_folder_is_neither_reached_nor_listed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".cordon")).unwrap();
    std::fs::write(dir.path().join(".cordon/cordon.db"), "runs").unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let fs = Direct::new(DirBase::new(dir.path()));
    let read = workspace::read(&fs, "src/../.cordon/cordon.db");
    assert!(matches!(read, Err(Error::Denied(_))), "{read:?}");
    let listed = workspace::list_dir(&fs, "").unwrap();
    let names: Vec<&str> = listed.iter().map(|entry| entry.path.as_str()).collect();
    assert_eq!(names, ["a.txt"]);
    let shell = |line: &str| {
        cordon_sandbox_kit::shell::run(
            &fs,
            &cordon_sandbox_kit::NoInterpreters,
            line,
            "",
            &[],
            b"",
            0,
        )
        .unwrap()
    };
    assert_ne!(shell("cat .cordon/cordon.db").exit_code, 0);
    assert_ne!(shell("echo x > .cordon/cordon.db").exit_code, 0);
    shell("rm -rf *; rm -rf .cordon; find . > found.txt");
    assert!(dir.path().join(".cordon/cordon.db").is_file());
    assert!(
        !fs::read_to_string(dir.path().join("found.txt"))
            .unwrap()
            .contains("cordon")
    );
}
