//! The workspace operations and the overlay's semantics, over a staged
//! workspace with an empty base and over a staging layer above a real folder.

use crate::common::memory_fs;
use cordon_sandbox_kit::workspace::{self, Entry, GrepMatch, GrepQuery};
use cordon_sandbox_kit::{
    DirBase, Error, FileSystem, MemoryStaging, NoInterpreters, Overlay, Staged, Staging,
};
use std::fs;

fn entry(path: &str, is_dir: bool, size: u64) -> Entry {
    Entry {
        path: path.into(),
        is_dir,
        size,
    }
}

fn query(pattern: &str, path: &str) -> GrepQuery {
    GrepQuery {
        pattern: pattern.into(),
        path: path.into(),
        file_glob: None,
        case_insensitive: false,
        max_matches: 100,
    }
}

fn found(path: &str, line: u32, text: &str) -> GrepMatch {
    GrepMatch {
        path: path.into(),
        line,
        text: text.into(),
    }
}

#[test]
fn read_write_and_stat() {
    let fs = memory_fs(&[]);
    workspace::write(&fs, "a/b/c.txt", b"hello").unwrap();
    assert_eq!(workspace::read(&fs, "a/b/c.txt").unwrap(), b"hello");
    assert_eq!(workspace::read(&fs, "a/b/../b/c.txt").unwrap(), b"hello");
    assert_eq!(workspace::stat(&fs, "a/b").unwrap(), entry("a/b", true, 0));
    assert_eq!(
        workspace::stat(&fs, "a/b/c.txt").unwrap(),
        entry("a/b/c.txt", false, 5)
    );
    assert_eq!(workspace::stat(&fs, "").unwrap(), entry("", true, 0));
    assert_eq!(
        fs.staging().get("a").unwrap(),
        Some(Staged::Directory),
        "missing parents are staged as directories"
    );
    assert!(matches!(workspace::read(&fs, "a"), Err(Error::Invalid(_))));
    assert!(matches!(
        workspace::read(&fs, "nope"),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        workspace::write(&fs, "a", b"x"),
        Err(Error::Invalid(_))
    ));
    assert!(matches!(
        workspace::write(&fs, "a/b/c.txt/d", b"x"),
        Err(Error::Invalid(_))
    ));
    assert!(matches!(
        workspace::stat(&fs, "nope"),
        Err(Error::NotFound(_))
    ));
}

#[test]
fn paths_may_not_leave_the_workspace() {
    let fs = memory_fs(&[("a.txt", "a")]);
    assert_eq!(
        workspace::read(&fs, "/etc/passwd"),
        Err(Error::Denied(
            "/etc/passwd: absolute paths are outside the workspace".into()
        ))
    );
    assert_eq!(
        workspace::read(&fs, "../a.txt"),
        Err(Error::Denied("../a.txt leaves the workspace".into()))
    );
    assert!(matches!(
        workspace::write(&fs, "x/../../y", b""),
        Err(Error::Denied(_))
    ));
    assert!(matches!(
        workspace::glob(&fs, "/etc/*"),
        Err(Error::Denied(_))
    ));
    assert!(matches!(
        workspace::grep(&fs, &query("a", "..")),
        Err(Error::Denied(_))
    ));
    assert!(matches!(
        workspace::rename(&fs, "a.txt", "../b"),
        Err(Error::Denied(_))
    ));
    assert!(matches!(workspace::remove(&fs, ""), Err(Error::Denied(_))));
}

#[test]
fn edit_needs_exactly_one_occurrence() {
    let fs = memory_fs(&[("f.txt", "one two two")]);
    workspace::edit(&fs, "f.txt", "one", "1").unwrap();
    assert_eq!(workspace::read(&fs, "f.txt").unwrap(), b"1 two two");
    assert_eq!(
        workspace::edit(&fs, "f.txt", "two", "2"),
        Err(Error::Invalid(
            "the text to replace occurs 2 times in f.txt; it must occur exactly once".into()
        ))
    );
    assert_eq!(
        workspace::edit(&fs, "f.txt", "three", "3"),
        Err(Error::Invalid(
            "the text to replace occurs 0 times in f.txt; it must occur exactly once".into()
        ))
    );
    assert!(matches!(
        workspace::edit(&fs, "f.txt", "", "x"),
        Err(Error::Invalid(_))
    ));
    assert!(matches!(
        workspace::edit(&fs, "missing", "a", "b"),
        Err(Error::NotFound(_))
    ));
}

#[test]
fn list_dir_merges_layers_and_sorts() {
    let base = tempfile::tempdir().unwrap();
    fs::create_dir(base.path().join("src")).unwrap();
    fs::write(base.path().join("src/old.rs"), "old").unwrap();
    fs::write(base.path().join("src/gone.rs"), "gone").unwrap();
    let overlay = Overlay::new(DirBase::new(base.path()), MemoryStaging::new());
    workspace::write(&overlay, "src/new.rs", b"new!").unwrap();
    workspace::remove(&overlay, "src/gone.rs").unwrap();
    workspace::write(&overlay, "src/old.rs", b"changed").unwrap();
    assert_eq!(
        workspace::list_dir(&overlay, "src").unwrap(),
        [entry("src/new.rs", false, 4), entry("src/old.rs", false, 7)]
    );
    assert_eq!(workspace::read(&overlay, "src/old.rs").unwrap(), b"changed");
    assert_eq!(
        fs::read(base.path().join("src/old.rs")).unwrap(),
        b"old",
        "the base is untouched"
    );
    assert!(base.path().join("src/gone.rs").exists());
    assert!(matches!(
        workspace::list_dir(&overlay, "src/new.rs"),
        Err(Error::Invalid(_))
    ));
    assert!(matches!(
        workspace::list_dir(&overlay, "nope"),
        Err(Error::NotFound(_))
    ));
    assert_eq!(
        workspace::list_dir(&overlay, "").unwrap(),
        [entry("src", true, 0)]
    );
}

#[test]
fn removing_a_directory_hides_its_children() {
    let base = tempfile::tempdir().unwrap();
    fs::create_dir_all(base.path().join("d/e")).unwrap();
    fs::write(base.path().join("d/e/f.txt"), "f").unwrap();
    fs::write(base.path().join("d/g.txt"), "g").unwrap();
    let overlay = Overlay::new(DirBase::new(base.path()), MemoryStaging::new());
    let (code, _, stderr) = crate::common::run(&overlay, "rm -r d && mkdir d");
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(workspace::list_dir(&overlay, "d").unwrap(), []);
    assert!(matches!(
        workspace::read(&overlay, "d/g.txt"),
        Err(Error::NotFound(_))
    ));
    assert_eq!(workspace::glob(&overlay, "d/**/*").unwrap(), []);
    assert_eq!(
        overlay.staging().get("d/e/f.txt").unwrap(),
        Some(Staged::Removed)
    );
    assert_eq!(overlay.staging().get("d/e").unwrap(), Some(Staged::Removed));
    assert_eq!(overlay.staging().get("d").unwrap(), Some(Staged::Directory));
    assert!(base.path().join("d/e/f.txt").exists());
}

#[test]
fn remove_takes_files_and_empty_directories() {
    let fs = memory_fs(&[("d/f.txt", "f")]);
    assert_eq!(
        workspace::remove(&fs, "d"),
        Err(Error::Invalid("directory d is not empty".into()))
    );
    workspace::remove(&fs, "d/f.txt").unwrap();
    workspace::remove(&fs, "d").unwrap();
    assert_eq!(workspace::list_dir(&fs, "").unwrap(), []);
    assert!(matches!(
        workspace::remove(&fs, "d"),
        Err(Error::NotFound(_))
    ));
}

#[test]
fn rename_moves_files_and_directories() {
    let base = tempfile::tempdir().unwrap();
    fs::create_dir_all(base.path().join("a/b")).unwrap();
    fs::write(base.path().join("a/b/c.txt"), "c").unwrap();
    fs::write(base.path().join("a/top.txt"), "top").unwrap();
    let overlay = Overlay::new(DirBase::new(base.path()), MemoryStaging::new());
    workspace::rename(&overlay, "a", "z").unwrap();
    assert_eq!(workspace::read(&overlay, "z/b/c.txt").unwrap(), b"c");
    assert_eq!(workspace::read(&overlay, "z/top.txt").unwrap(), b"top");
    assert!(matches!(
        workspace::stat(&overlay, "a"),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        workspace::stat(&overlay, "a/b/c.txt"),
        Err(Error::NotFound(_))
    ));
    assert_eq!(
        workspace::list_dir(&overlay, "").unwrap(),
        [entry("z", true, 0)]
    );
    workspace::rename(&overlay, "z/top.txt", "top.txt").unwrap();
    assert_eq!(workspace::read(&overlay, "top.txt").unwrap(), b"top");
    assert!(matches!(
        workspace::rename(&overlay, "top.txt", "no/such/dir"),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        workspace::rename(&overlay, "missing", "x"),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        workspace::rename(&overlay, "z", "z/b/inner"),
        Err(Error::Invalid(_))
    ));
    workspace::mkdir(&overlay, "other").unwrap();
    assert!(matches!(
        workspace::rename(&overlay, "top.txt", "other"),
        Err(Error::Invalid(_))
    ));
}

#[test]
fn mkdir_creates_parents() {
    let fs = memory_fs(&[("file", "x")]);
    workspace::mkdir(&fs, "a/b/c").unwrap();
    workspace::mkdir(&fs, "a/b").unwrap();
    assert!(workspace::stat(&fs, "a/b/c").unwrap().is_dir);
    assert_eq!(
        workspace::mkdir(&fs, "file"),
        Err(Error::Invalid("file exists and is not a directory".into()))
    );
    assert!(matches!(
        workspace::mkdir(&fs, "file/sub"),
        Err(Error::Invalid(_))
    ));
}

#[test]
fn glob_returns_sorted_files() {
    let fs = memory_fs(&[
        ("src/lib.rs", ""),
        ("src/a/b.rs", "bb"),
        ("src/a/c.txt", ""),
        ("top.rs", ""),
        (".git/x.rs", ""),
    ]);
    let paths = |pattern| {
        workspace::glob(&fs, pattern)
            .unwrap()
            .into_iter()
            .map(|entry| entry.path)
            .collect::<Vec<_>>()
    };
    assert_eq!(paths("src/**/*.rs"), ["src/a/b.rs", "src/lib.rs"]);
    assert_eq!(paths("**/*.rs"), ["src/a/b.rs", "src/lib.rs", "top.rs"]);
    assert_eq!(paths("*.rs"), ["top.rs"]);
    assert_eq!(paths("src/*"), ["src/lib.rs"]);
    assert_eq!(paths("src/a/b.rs"), ["src/a/b.rs"]);
    assert_eq!(paths("./src/../top.rs"), ["top.rs"]);
    assert!(paths("nothing/**").is_empty());
    assert_eq!(
        workspace::glob(&fs, "src/a/*.rs").unwrap(),
        [entry("src/a/b.rs", false, 2)]
    );
    assert!(matches!(
        workspace::glob(&fs, "src/[a"),
        Err(Error::Invalid(_))
    ));
}

#[test]
fn grep_finds_lines_in_path_order() {
    let fs = memory_fs(&[
        ("b.txt", "alpha\nbeta\r\ngamma beta\n"),
        ("a/x.rs", "fn beta() {}\n"),
        ("a/bin.dat", "beta\0binary"),
        (".git/config", "beta"),
    ]);
    let result = workspace::grep(&fs, &query("beta", "")).unwrap();
    assert_eq!(
        result.matches,
        [
            found("a/x.rs", 1, "fn beta() {}"),
            found("b.txt", 2, "beta"),
            found("b.txt", 3, "gamma beta")
        ]
    );
    assert!(!result.truncated);
    let single = workspace::grep(&fs, &query("^gamma", "b.txt")).unwrap();
    assert_eq!(single.matches, [found("b.txt", 3, "gamma beta")]);
    let mut limited = query("a", "");
    limited.max_matches = 2;
    let result = workspace::grep(&fs, &limited).unwrap();
    assert_eq!(result.matches.len(), 2);
    assert!(result.truncated);
    let mut insensitive = query("BETA", "a");
    insensitive.case_insensitive = true;
    insensitive.file_glob = Some("*.rs".into());
    assert_eq!(
        workspace::grep(&fs, &insensitive).unwrap().matches,
        [found("a/x.rs", 1, "fn beta() {}")]
    );
    let mut by_path = query("beta", "");
    by_path.file_glob = Some("a/**".into());
    assert_eq!(workspace::grep(&fs, &by_path).unwrap().matches.len(), 1);
    assert_eq!(
        workspace::grep(&fs, &query("(", "")),
        Err(Error::Invalid(
            "invalid regular expression \"(\": regex parse error:\n    (\n    ^\nerror: unclosed group"
                .into()
        ))
    );
    assert!(matches!(
        workspace::grep(&fs, &query("x", "missing")),
        Err(Error::NotFound(_))
    ));
}

#[test]
fn exec_runs_in_the_working_directory() {
    let fs = memory_fs(&[("src/a.txt", "a")]);
    let command = workspace::Command {
        line: "pwd; cat a.txt; echo \" $GREETING\"; cat".into(),
        cwd: "src".into(),
        env: vec![("GREETING".into(), "hi".into())],
        stdin: b"in".to_vec(),
        timeout_ms: 10_000,
    };
    let result = workspace::exec(&fs, &NoInterpreters, &command).unwrap();
    assert_eq!(String::from_utf8(result.stdout).unwrap(), "/src\na hi\nin");
    assert_eq!(result.exit_code, 0);
    let nowhere = workspace::Command {
        cwd: "missing".into(),
        ..command.clone()
    };
    assert!(matches!(
        workspace::exec(&fs, &NoInterpreters, &nowhere),
        Err(Error::NotFound(_))
    ));
    let outside = workspace::Command {
        cwd: "..".into(),
        ..command
    };
    assert!(matches!(
        workspace::exec(&fs, &NoInterpreters, &outside),
        Err(Error::Denied(_))
    ));
}

#[test]
fn whole_tree_operations_fetch_staging_once() {
    struct Counting {
        inner: MemoryStaging,
        gets: std::cell::Cell<usize>,
    }
    impl Staging for Counting {
        fn get(&self, path: &str) -> cordon_sandbox_kit::Result<Option<Staged>> {
            self.gets.set(self.gets.get() + 1);
            self.inner.get(path)
        }
        fn put(&self, path: &str, entry: Staged) -> cordon_sandbox_kit::Result<()> {
            self.inner.put(path, entry)
        }
        fn under(&self, prefix: &str) -> Vec<(String, Staged)> {
            self.inner.under(prefix)
        }
    }
    let staging = Counting {
        inner: MemoryStaging::new(),
        gets: 0.into(),
    };
    for index in 0..50 {
        staging
            .put(&format!("f{index}.txt"), Staged::File(b"needle\n".to_vec()))
            .unwrap();
    }
    let fs = Overlay::new(cordon_sandbox_kit::EmptyBase, staging);
    let result = workspace::grep(&fs, &query("needle", "")).unwrap();
    assert_eq!(result.matches.len(), 50);
    assert!(
        fs.staging().gets.get() <= 2,
        "{} gets",
        fs.staging().gets.get()
    );
    assert_eq!(
        fs.walk("", cordon_sandbox_kit::Prune::Nothing)
            .unwrap()
            .len(),
        50
    );
}
