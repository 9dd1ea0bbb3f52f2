//! Read-only `git` from the `git` command bundle (gitoxide) in a backend's
//! shell, compared with git itself on two copies of one repository: the
//! same history made by git with fixed names and dates, then the same
//! staged, unstaged, deleted and untracked changes. Every entry must give
//! git's exit status and output. A subcommand that would change the
//! repository is refused, and the repository stays as it was.

use std::path::Path;
use std::process::Command;

use cordon_tests::{Rig, artifacts, built_bundle};
use cordon_wasm::{Safeguards, WorkspaceOptions};

/// What both sides run, in order.
const ENTRIES: &[&str] = &[
    "git status",
    "git status --short",
    "git status -sb",
    "git log",
    "git log --oneline",
    "git log -n 1 --format='%h %an <%ae> %s'",
    "git log --format='%H %P' -2",
    "git log --oneline -- src/app.py",
    "git log --format=%s --reverse | head -n 1",
    "git log -1 --stat",
    "git show",
    "git show --stat HEAD~1",
    "git show --name-only --oneline HEAD",
    "git show HEAD~1:src/app.py",
    "git show HEAD:missing.txt; echo \"status $?\"",
    "git diff",
    "git diff --cached",
    "git diff --stat",
    "git diff --name-only",
    "git diff --name-status HEAD~1 HEAD",
    "git diff HEAD~2 HEAD -- src",
    "git diff HEAD",
    "git diff --quiet; echo \"changed $?\"",
    "git diff --cached --quiet src/app.py; echo \"changed $?\"",
    "git ls-files",
    "git ls-files src",
    "git blame HEAD src/app.py",
    "git blame HEAD~2 -- src/util.py",
    "git blame -L 2,3 src/app.py",
    "git rev-parse HEAD",
    "git rev-parse --short HEAD~1",
    "git rev-parse --abbrev-ref HEAD",
    "git rev-parse --is-inside-work-tree",
    "git rev-parse nope; echo \"status $?\"",
    "git log --oneline | wc -l",
    "cd src && git log --oneline -1",
];

/// The variables both sides run with: no user or system configuration.
const ENV: &[(&str, &str)] = &[
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("LC_ALL", "C"),
    ("TZ", "UTC"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("HOME", "/nonexistent"),
];

/// Runs git itself in `root`, with fixed names and dates.
fn git(root: &Path, args: &[&str], date: &str) {
    let status = Command::new("git")
        .args(args)
        .current_dir(root)
        .env_clear()
        .envs(ENV.iter().copied())
        .envs([
            ("GIT_AUTHOR_NAME", "Ann Author"),
            ("GIT_AUTHOR_EMAIL", "ann@example.com"),
            ("GIT_COMMITTER_NAME", "Cy Committer"),
            ("GIT_COMMITTER_EMAIL", "cy@example.com"),
            ("GIT_AUTHOR_DATE", date),
            ("GIT_COMMITTER_DATE", date),
        ])
        .status()
        .expect("git runs: this test compares the sandbox's git with it");
    assert!(status.success(), "git {args:?}");
}

fn write(root: &Path, path: &str, contents: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

/// A repository with three commits, then changes of every kind.
fn repository(root: &Path) {
    git(root, &["init", "-q", "-b", "main"], "");
    write(root, "README.md", "# Demo\n\nA demo project.\n");
    write(
        root,
        "src/app.py",
        "import sys\n\ndef main():\n    print('hi')\n",
    );
    write(root, "src/util.py", "def helper():\n    return 1\n");
    git(root, &["add", "."], "");
    git(
        root,
        &["commit", "-q", "-m", "Start the project"],
        "1704103200 +0000",
    );
    write(
        root,
        "src/app.py",
        "import sys\n\ndef main():\n    print('hello')\n    return 0\n",
    );
    write(root, "notes.txt", "first note\n");
    git(root, &["add", "."], "");
    git(
        root,
        &[
            "commit",
            "-q",
            "-m",
            "Say hello\n\nThe greeting was too short.\nIt returns now.",
        ],
        "1706781600 +0100",
    );
    write(
        root,
        "README.md",
        "# Demo\n\nA demo project.\n\n## Usage\n\nRun it.\n",
    );
    std::fs::remove_file(root.join("src/util.py")).unwrap();
    git(root, &["add", "-A"], "");
    git(
        root,
        &["commit", "-q", "-m", "Document usage, drop util"],
        "1709287200 -0500",
    );
    // Staged, unstaged, deleted and untracked changes.
    write(root, "src/new.py", "print('new')\n");
    git(root, &["add", "src/new.py"], "");
    write(
        root,
        "src/app.py",
        "import sys\n\ndef main():\n    print('hello, world')\n    return 0\n",
    );
    std::fs::remove_file(root.join("notes.txt")).unwrap();
    write(root, "scratch/todo.txt", "later\n");
}

fn run_git_itself(root: &Path, line: &str) -> (i64, String) {
    let output = Command::new("bash")
        .arg("-c")
        .arg(line)
        .current_dir(root)
        .env_clear()
        .envs(ENV.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        i64::from(output.status.code().unwrap_or(128)),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The dir backend with the git bundle over a workspace `prepare` fills
/// (given the workspace and a folder outside it).
async fn rig_with(prepare: impl FnOnce(&Path, &Path)) -> Rig {
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    Rig::bind("dir", options, Safeguards::default(), |fixture, outside| {
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
        let bundle = built_bundle(artifacts::PLUGINS_DIR, "git");
        let to = fixture.plugins.path().join("git");
        std::fs::create_dir_all(&to).unwrap();
        for file in ["plugin.toml", "git.wasm"] {
            std::fs::copy(bundle.join(file), to.join(file)).unwrap();
        }
        prepare(fixture.workspace.path(), outside);
    })
    .await
}

async fn rig() -> Rig {
    rig_with(|workspace, _| repository(workspace)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sandboxs_git_reads_a_repository_as_git_does() {
    let rig = rig().await;
    let theirs = tempfile::tempdir().unwrap();
    repository(theirs.path());
    let mut differences = Vec::new();
    for line in ENTRIES {
        let expected = run_git_itself(theirs.path(), line);
        let (code, out, err) = rig.sh(line).await;
        if expected != (code, out.clone()) {
            differences.push(format!(
                "--- {line}\n    git:  {} {:?}\n    ours: {code} {out:?} {err:?}",
                expected.0, expected.1
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} entries differ from git:\n{}",
        differences.len(),
        ENTRIES.len(),
        differences.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_git_command_that_would_change_the_repository_is_refused_and_changes_nothing() {
    let rig = rig().await;
    let head = std::fs::read(rig.fixture.workspace.path().join(".git/HEAD")).unwrap();
    let index = std::fs::read(rig.fixture.workspace.path().join(".git/index")).unwrap();
    for line in [
        "git commit -am 'sneak in'",
        "git add scratch/todo.txt",
        "git checkout -- src/app.py",
        "git reset --hard",
        "git push origin main",
    ] {
        let (code, _, err) = rig.sh(line).await;
        assert_eq!(code, 1, "{line}: {err}");
        assert!(
            err.contains("git here only reads the repository"),
            "{line}: {err}"
        );
    }
    let (code, out, err) = rig.sh("git status --short").await;
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            " D notes.txt\n M src/app.py\nA  src/new.py\n?? scratch/\n"
        ),
        "{err}"
    );
    rig.commit();
    let root = rig.fixture.workspace.path();
    assert_eq!(std::fs::read(root.join(".git/HEAD")).unwrap(), head);
    assert_eq!(std::fs::read(root.join(".git/index")).unwrap(), index);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_planted_repository_pointing_out_of_the_workspace_reads_nothing_there() {
    // A repository outside the workspace, and a workspace whose `.git`
    // points at it, by a relative and by an absolute path, and whose own
    // object store borrows that repository's objects.
    let rig = rig_with(|workspace, outside| {
        let secret = outside.join("secret-repo");
        std::fs::create_dir_all(&secret).unwrap();
        git(&secret, &["init", "-q", "-b", "main"], "");
        write(&secret, "key.txt", "the host's secret\n");
        git(&secret, &["add", "."], "");
        git(
            &secret,
            &["commit", "-q", "-m", "host secret commit"],
            "1704103200 +0000",
        );
        write(
            workspace,
            "linked/.git",
            &format!("gitdir: {}\n", secret.join(".git").display()),
        );
        write(
            workspace,
            "climbing/.git",
            "gitdir: ../../../../../../../../secret-repo/.git\n",
        );
        git(workspace, &["init", "-q", "-b", "main"], "");
        write(
            workspace,
            ".git/objects/info/alternates",
            &format!("{}\n", secret.join(".git/objects").display()),
        );
    })
    .await;
    for line in [
        "cd linked && git log",
        "cd climbing && git log",
        "cd linked && git show HEAD:key.txt",
    ] {
        let (code, out, err) = rig.sh(line).await;
        assert_eq!(code, 128, "{line}: {out} {err}");
        assert!(!out.contains("secret"), "{line}: {out}");
    }
    let secret_head = {
        let output = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(rig.outside.path().join("secret-repo"))
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    let (code, out, err) = rig.sh(&format!("git show {secret_head}:key.txt")).await;
    assert_eq!(
        code, 128,
        "the alternates' objects stay out of reach: {out} {err}"
    );
    assert!(!out.contains("secret"), "{out}");
    // The host keeps serving the run.
    let (code, out, _) = rig.sh("git rev-parse --is-inside-work-tree").await;
    assert_eq!((code, out.as_str()), (0, "true\n"));
}
