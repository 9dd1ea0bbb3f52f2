//! The command language: quoting, lists, pipelines, redirections, globs,
//! variables, refusals, limits and the deadline.

use crate::common::{memory_fs, out, run, run_with, sh};
use cordon_sandbox_kit::NoInterpreters;
use cordon_sandbox_kit::shell::{self, OUTPUT_LIMIT};
use cordon_sandbox_kit::workspace;

#[test]
fn quoting_and_variables() {
    let fs = memory_fs(&[]);
    let env = [("X".to_owned(), "ex".to_owned())];
    let output = shell::run(
        &fs,
        &NoInterpreters,
        r#"echo 'a  b' "c $X" d\ e"#,
        "",
        &env,
        b"",
        0,
    )
    .unwrap();
    assert_eq!(output.stdout, b"a  b c ex d e\n");
    assert_eq!(
        out(&fs, r#"echo "q\"uote \$X \\ ${HOME}end""#),
        "q\"uote $X \\ end\n"
    );
    assert_eq!(
        out(&fs, "V='one two'; echo $V; echo \"[$V]\""),
        "one two\n[one two]\n"
    );
    assert_eq!(out(&fs, "A=1 B=2; echo $A$B ${A}x"), "12 1x\n");
    assert_eq!(out(&fs, "echo a # a comment"), "a\n");
    assert_eq!(out(&fs, "echo '#not' a#b"), "#not a#b\n");
    assert_eq!(out(&fs, "E=; echo x${E}y \"$E\" end"), "xy  end\n");
    assert_eq!(
        out(&fs, "cat -A 2>/dev/null || echo fallback </dev/null"),
        "fallback\n"
    );
    assert_eq!(out(&fs, "E=; echo [$E] \"$E\"z"), "[] z\n");
    assert_eq!(out(&fs, "echo $"), "$\n");
}

#[test]
fn empty_lines_do_nothing() {
    let fs = memory_fs(&[]);
    assert_eq!(run(&fs, ""), (0, String::new(), String::new()));
    assert_eq!(
        run(&fs, "  \n # only a comment\n"),
        (0, String::new(), String::new())
    );
}

#[test]
fn lists_follow_bash_precedence() {
    let fs = memory_fs(&[]);
    assert_eq!(out(&fs, "false && echo no || echo yes"), "yes\n");
    assert_eq!(out(&fs, "true || echo no && echo yes"), "yes\n");
    assert_eq!(out(&fs, "false; echo $?; true; echo $?"), "1\n0\n");
    assert_eq!(run(&fs, "true && false").0, 1);
    assert_eq!(out(&fs, "false || false || echo third"), "third\n");
    assert_eq!(out(&fs, "echo a\necho b"), "a\nb\n");
    assert_eq!(out(&fs, "! false && echo negated"), "negated\n");
    assert_eq!(out(&fs, "nope 2>/dev/null; echo $?").trim_end(), "127");
}

#[test]
fn pipelines_take_the_last_status() {
    let fs = memory_fs(&[]);
    assert_eq!(out(&fs, "echo b; echo a | cat"), "b\na\n");
    assert_eq!(
        out(&fs, "printf 'c\\nb\\na\\n' | sort | head -n 2"),
        "a\nb\n"
    );
    assert_eq!(run(&fs, "false | true").0, 0);
    assert_eq!(run(&fs, "true | false").0, 1);
    assert_eq!(run(&fs, "echo x | grep y").0, 1);
}

#[test]
fn redirections_write_through_the_workspace() {
    let fs = memory_fs(&[("in.txt", "from file\n")]);
    assert_eq!(
        out(&fs, "echo one > f.txt; echo two >> f.txt; cat f.txt"),
        "one\ntwo\n"
    );
    assert_eq!(workspace::read(&fs, "f.txt").unwrap(), b"one\ntwo\n");
    assert_eq!(out(&fs, "echo replaced > f.txt; cat < f.txt"), "replaced\n");
    assert_eq!(out(&fs, "cat < in.txt"), "from file\n");
    assert_eq!(
        out(&fs, "cat missing 2> err.txt; cat err.txt"),
        "cat: missing: No such file or directory\n"
    );
    assert_eq!(
        out(&fs, "cat missing 2>/dev/null; cat missing 2>&1 | wc -l"),
        "1\n"
    );
    assert_eq!(
        out(&fs, "cat in.txt missing > both.txt 2>&1; cat both.txt"),
        "from file\ncat: missing: No such file or directory\n"
    );
    assert_eq!(
        out(&fs, "cat in.txt missing &> all.txt; cat all.txt"),
        "from file\ncat: missing: No such file or directory\n"
    );
    assert_eq!(
        run(&fs, "echo to-err >&2"),
        (0, String::new(), "to-err\n".into())
    );
    assert_eq!(out(&fs, "> empty.txt; wc -c empty.txt"), "0 empty.txt\n");
    assert_eq!(
        out(
            &fs,
            "mkdir d; echo x > d/y; cd d; cat y; echo z >> ../d/y; cat y"
        ),
        "x\nx\nz\n"
    );
    assert_eq!(
        run(&fs, "echo x > nodir/f.txt"),
        (
            1,
            String::new(),
            "sh: nodir/f.txt: No such file or directory\n".into()
        )
    );
    assert_eq!(run(&fs, "echo x > d").2, "sh: d: Is a directory\n");
    assert_eq!(
        run(&fs, "cat < nope").2,
        "sh: nope: No such file or directory\n"
    );
    assert_eq!(
        run(&fs, "echo x > /etc/x").2,
        "sh: /etc/x: absolute paths are outside the workspace\n"
    );
}

#[test]
fn stdin_feeds_commands() {
    let fs = memory_fs(&[]);
    assert_eq!(run_with(&fs, "cat", "in\n").1, "in\n");
    assert_eq!(run_with(&fs, "wc -l", "a\nb\n").1, "2\n");
    assert_eq!(run_with(&fs, "grep b", "a\nb\n").1, "b\n");
}

#[test]
fn globs_expand_sorted_or_stay_as_written() {
    let fs = memory_fs(&[
        ("b.txt", ""),
        ("a.txt", ""),
        (".hidden.txt", ""),
        ("src/x.rs", ""),
        ("src/y.rs", ""),
        ("c.md", ""),
    ]);
    assert_eq!(out(&fs, "echo *.txt"), "a.txt b.txt\n");
    assert_eq!(out(&fs, "echo src/*.rs"), "src/x.rs src/y.rs\n");
    assert_eq!(out(&fs, "echo ?.md [ab].txt"), "c.md a.txt b.txt\n");
    assert_eq!(out(&fs, "echo *.none"), "*.none\n");
    assert_eq!(
        out(&fs, "echo '*.txt' \\*.txt \"*\".txt"),
        "*.txt *.txt *.txt\n"
    );
    assert_eq!(out(&fs, "echo .*.txt"), ".hidden.txt\n");
    assert_eq!(out(&fs, "echo */"), "src/\n");
    assert_eq!(
        out(&fs, "cd src; echo *; echo ../*.md"),
        "x.rs y.rs\n../c.md\n"
    );
    assert_eq!(out(&fs, "echo {a,b}.txt x{1..3}"), "a.txt b.txt x1 x2 x3\n");
    assert_eq!(out(&fs, "echo '{a,b}'"), "{a,b}\n");
}

#[test]
fn unknown_commands_exit_127() {
    let fs = memory_fs(&[]);
    assert_eq!(
        run(&fs, "frobnicate --x"),
        (127, String::new(), "frobnicate: command not found\n".into())
    );
    let refused = shell::run(
        &fs,
        &NoInterpreters,
        "python3 -c 'print(1)'",
        "",
        &[],
        b"",
        0,
    )
    .unwrap_err();
    assert!(
        refused
            .message()
            .contains("no sandboxed interpreter for .py"),
        "{refused}"
    );
}

#[test]
fn syntax_errors_exit_2_saying_where() {
    let fs = memory_fs(&[]);
    let error = |line| {
        let (code, stdout, stderr) = run(&fs, line);
        assert_eq!((code, stdout.as_str()), (2, ""), "{line}");
        stderr
    };
    assert!(error("echo 'open").contains("unterminated single quote"));
    assert!(error("echo \"open").contains("unterminated double quote"));
    assert_eq!(error("echo a |"), "sh: syntax error at end of input\n");
    assert_eq!(
        error("if true; then echo x"),
        "sh: syntax error at end of input\n"
    );
    assert!(error("echo a ; ; echo b").starts_with("sh: syntax error at line 1"));
    assert!(error("fi").starts_with("sh: syntax error"));
    assert_eq!(out(&fs, "echo for done if"), "for done if\n");
}

#[test]
fn the_deadline_stops_with_124() {
    let mut files = Vec::new();
    let line = "x\n".repeat(1000);
    for index in 0..200 {
        files.push((format!("f{index}.txt"), line.clone()));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let fs = memory_fs(&refs);
    let script = "cat *.txt | sort | uniq -c > /dev/null; ".repeat(500);
    let output = shell::run(&fs, &NoInterpreters, &script, "", &[], b"", 50).unwrap();
    assert_eq!(output.exit_code, 124);
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .ends_with("sh: timed out after 50 ms\n"),
    );
}

#[test]
fn output_is_capped_with_flags() {
    let big = "y".repeat(OUTPUT_LIMIT + 10);
    let fs = memory_fs(&[("big.txt", &big)]);
    let output = sh(&fs, "cat big.txt; cat big.txt >&2");
    assert_eq!(output.exit_code, 0);
    assert_eq!(output.stdout.len(), OUTPUT_LIMIT);
    assert_eq!(output.stderr.len(), OUTPUT_LIMIT);
    assert!(output.stdout_truncated && output.stderr_truncated);
    let small = sh(&fs, "head -c 5 big.txt");
    assert_eq!(small.stdout, b"yyyyy");
    assert!(!small.stdout_truncated && !small.stderr_truncated);
    assert_eq!(
        out(&fs, "cat big.txt | wc -c"),
        format!("{}\n", OUTPUT_LIMIT + 10)
    );
}

#[test]
fn cd_and_pwd_stay_inside() {
    let fs = memory_fs(&[("src/a/f.txt", "f")]);
    assert_eq!(
        out(&fs, "pwd; cd src/a; pwd; cat f.txt; cd ..; pwd; cd; pwd"),
        "/\n/src/a\nf/src\n/\n"
    );
    assert_eq!(
        run(&fs, "cd ..; pwd"),
        (0, "/\n".into(), "cd: .. leaves the workspace\n".into())
    );
    assert_eq!(
        run(&fs, "cd nope").2,
        "cd: nope: No such file or directory\n"
    );
    assert_eq!(
        run(&fs, "cd src/a/f.txt").2,
        "cd: src/a/f.txt is not a directory\n"
    );
}

#[test]
fn runaway_lines_stop_at_a_limit_with_137_saying_which() {
    let fs = memory_fs(&[]);
    let (code, _, stderr) = run(&fs, ":(){ :|:& };:");
    assert_eq!(code, 137, "a fork bomb: {stderr}");
    assert!(
        stderr.contains("limit exceeded: functions, subshells and scripts nest"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&fs, "f() { f; }; f");
    assert_eq!(code, 137, "deep recursion: {stderr}");
    let (code, _, stderr) = run(&fs, "while true; do :; done");
    assert_eq!(code, 137, "an endless loop: {stderr}");
    assert!(
        stderr.contains("more than 2000000 commands run"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&fs, "x=$(x=$(x=$(f() { echo $(f); }; f)))");
    assert_eq!(code, 137, "substitutions within substitutions: {stderr}");
    assert_eq!(out(&fs, "echo still here"), "still here\n");
}

#[test]
fn a_huge_here_document_and_brace_expansion_stay_bounded() {
    let fs = memory_fs(&[]);
    let body = "x".repeat(80) + "\n";
    let line = format!(
        "cat > big.txt <<'EOF'\n{}EOF\nwc -l < big.txt",
        body.repeat(100_000)
    );
    assert_eq!(out(&fs, &line), "100000\n");
    let (code, _, stderr) = run(&fs, "echo {1..999999999}; echo unreachable");
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("brace expansion makes more than"),
        "{stderr}"
    );
}

#[test]
fn a_writer_into_a_full_pipe_is_stopped() {
    let fs = memory_fs(&[]);
    // The stages of a pipeline run one after another, so an endless writer
    // runs until its pipe is full (64 MiB), then stops as if the reader had
    // gone.
    let (code, stdout, stderr) = run(
        &fs,
        "line=$(printf '%01000d' 0); set -o pipefail; while true; do echo $line; done | head -c 3; echo \" $?\"",
    );
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(stdout, "000 141\n");
}

#[test]
fn xargs_runs_commands_in_the_shell_within_its_limits() {
    let fs = memory_fs(&[("a.txt", ""), ("b.txt", ""), ("notes.md", "")]);
    assert_eq!(
        out(&fs, "printf 'a b\\nc\\n' | xargs echo got"),
        "got a b c\n"
    );
    assert_eq!(out(&fs, "echo 1 2 3 | xargs -n1 echo n"), "n 1\nn 2\nn 3\n");
    assert_eq!(
        out(&fs, "ls *.txt | xargs -I{} echo file {} done"),
        "file a.txt done\nfile b.txt done\n"
    );
    assert_eq!(out(&fs, "printf '' | xargs -r echo none"), "");
    assert_eq!(
        out(&fs, "echo \"'one two' three\" | xargs -n1"),
        "one two\nthree\n"
    );
    assert_eq!(run(&fs, "echo x | xargs false").0, 123);
    assert_eq!(run(&fs, "echo x | xargs nosuchcommand").0, 127);
    assert_eq!(
        out(&fs, "shout() { echo \"$1!\"; }; echo hi | xargs shout"),
        "hi!\n",
        "a function of the line runs under xargs like any command"
    );
    let (code, _, stderr) = run(
        &fs,
        "printf '%s\\n' {1..1000000} {1..1000000} | xargs -n1 true",
    );
    assert_eq!(code, 137, "{stderr}");
    assert!(
        stderr.contains("more than 2000000 commands run"),
        "{stderr}"
    );
}

#[test]
fn a_glob_over_a_hundred_thousand_files_answers_in_full() {
    let names: Vec<String> = (0..100_000).map(|n| format!("f{n:06}.txt")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), "")).collect();
    let fs = memory_fs(&files);
    assert_eq!(out(&fs, "ls | wc -l"), "100000\n");
    assert_eq!(
        out(&fs, "for f in *.txt; do :; done; echo $f"),
        "f099999.txt\n"
    );
    assert_eq!(out(&fs, "echo f0999*.txt | wc -w"), "100\n");
}

/// A file system that counts directory listings.
struct Counting {
    inner: crate::common::MemoryFs,
    lists: std::cell::Cell<usize>,
}

impl cordon_sandbox_kit::FileSystem for Counting {
    fn meta(&self, path: &str) -> cordon_sandbox_kit::Result<Option<cordon_sandbox_kit::Meta>> {
        self.inner.meta(path)
    }
    fn read(&self, path: &str) -> cordon_sandbox_kit::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn list(
        &self,
        dir: &str,
    ) -> cordon_sandbox_kit::Result<Vec<(String, cordon_sandbox_kit::Meta)>> {
        self.lists.set(self.lists.get() + 1);
        self.inner.list(dir)
    }
    fn walk(
        &self,
        dir: &str,
        prune: cordon_sandbox_kit::Prune,
    ) -> cordon_sandbox_kit::Result<Vec<cordon_sandbox_kit::Node>> {
        self.inner.walk(dir, prune)
    }
    fn contents<'a>(
        &self,
        node: &'a cordon_sandbox_kit::Node,
        buf: &'a mut Vec<u8>,
    ) -> cordon_sandbox_kit::Result<&'a [u8]> {
        self.inner.contents(node, buf)
    }
    fn write(&self, path: &str, data: &[u8]) -> cordon_sandbox_kit::Result<()> {
        self.inner.write(path, data)
    }
    fn create_dir(&self, path: &str) -> cordon_sandbox_kit::Result<()> {
        self.inner.create_dir(path)
    }
    fn remove(&self, path: &str) -> cordon_sandbox_kit::Result<()> {
        self.inner.remove(path)
    }
    fn rename(&self, from: &str, to: &str) -> cordon_sandbox_kit::Result<()> {
        self.inner.rename(from, to)
    }
}

#[test]
fn only_a_real_glob_lists_a_directory() {
    let fs = Counting {
        inner: memory_fs(&[("a.txt", ""), ("b.md", "")]),
        lists: std::cell::Cell::new(0),
    };
    assert_eq!(
        out(
            &fs,
            "i=0; while [ $i -lt 100 ]; do i=$((i + 1)); done; echo $i [x ]"
        ),
        "100 [x ]\n"
    );
    assert_eq!(fs.lists.get(), 0, "a lone `[` or `]` is no glob");
    assert_eq!(out(&fs, "echo *.txt [ab].md"), "a.txt b.md\n");
    assert_eq!(fs.lists.get(), 2);
}

#[test]
fn cd_dash_which_and_file_tests_answer_as_bash_does() {
    let fs = memory_fs(&[("src/a.rs", ""), ("README.md", "x")]);
    assert_eq!(
        out(&fs, "cd src && cd - && pwd && echo $OLDPWD"),
        "/\n/\n/src\n"
    );
    assert_eq!(run(&fs, "cd -").0, 1);
    assert_eq!(
        out(&fs, "which ls echo >/dev/null && echo found"),
        "found\n"
    );
    assert_eq!(run(&fs, "which frobnicate").0, 1);
    assert_eq!(
        out(
            &fs,
            "[ -r README.md ] && [ -w README.md ] && [ -x src ] && ! [ -L README.md ] && echo ok"
        ),
        "ok\n"
    );
}

#[test]
fn ansi_c_quotes_and_echo_share_their_escapes() {
    let fs = memory_fs(&[]);
    assert_eq!(out(&fs, r#"echo $'a\tb\101\x42\'\q'"#), "a\tbAB'\\q\n");
    assert_eq!(out(&fs, r#"echo -e 'x\0101y\cz'"#), "xAy");
    assert_eq!(out(&fs, r#"printf 'p\x41\n'"#), "pA\n");
    assert_eq!(
        out(&fs, r#"read -r a b <<< 'c\ d e'; echo "$a|$b""#),
        "c\\|d e\n"
    );
    assert_eq!(
        out(&fs, r#"read a b <<< 'c\ d e'; echo "$a|$b""#),
        "c d|e\n"
    );
}
