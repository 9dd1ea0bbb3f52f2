//! Each command with its main flags, asserting exact output.

use crate::common::{memory_fs, out, run, run_with};
use cordon_sandbox_kit::workspace;

fn tree() -> crate::common::MemoryFs {
    memory_fs(&[
        ("a.txt", "one\ntwo\nthree\nfour\nfive\n"),
        ("src/lib.rs", "fn main() {\n    println!(\"Hello\");\n}\n"),
        ("src/util/mod.rs", "pub fn hello() {}\n"),
        (".hidden", "h\n"),
        ("data.csv", "name,age,city\nann,31,oslo\nbob,4,rome\n"),
    ])
}

#[test]
fn ls_lists_entries() {
    let fs = tree();
    assert_eq!(out(&fs, "ls"), "a.txt\ndata.csv\nsrc\n");
    assert_eq!(out(&fs, "ls -a src"), ".\n..\nlib.rs\nutil\n");
    assert_eq!(out(&fs, "ls -A"), ".hidden\na.txt\ndata.csv\nsrc\n");
    assert_eq!(out(&fs, "ls -1F"), "a.txt\ndata.csv\nsrc/\n");
    assert_eq!(
        out(&fs, "ls -l src"),
        "-         37 lib.rs\nd          0 util\n"
    );
    assert_eq!(
        out(&fs, "ls -R src"),
        "src:\nlib.rs\nutil\n\nsrc/util:\nmod.rs\n"
    );
    assert_eq!(
        out(&fs, "ls a.txt src/util"),
        "a.txt\n\nsrc/util:\nmod.rs\n"
    );
    assert_eq!(out(&fs, "ls -d src"), "src\n");
    assert_eq!(
        run(&fs, "ls nope"),
        (
            2,
            String::new(),
            "ls: nope: No such file or directory\n".into()
        )
    );
}

#[test]
fn cat_and_its_errors() {
    let fs = tree();
    assert_eq!(
        out(&fs, "cat -n a.txt | head -n 2"),
        "     1\tone\n     2\ttwo\n"
    );
    assert_eq!(
        run(&fs, "cat missing.txt"),
        (
            1,
            String::new(),
            "cat: missing.txt: No such file or directory\n".into()
        )
    );
    assert_eq!(run(&fs, "cat src").2, "cat: src: Is a directory\n");
    assert_eq!(
        run_with(&fs, "cat - a.txt | head -2", "stdin\n").1,
        "stdin\none\n"
    );
}

#[test]
fn head_and_tail() {
    let fs = tree();
    assert_eq!(out(&fs, "head -n 2 a.txt"), "one\ntwo\n");
    assert_eq!(out(&fs, "head -3 a.txt"), "one\ntwo\nthree\n");
    assert_eq!(out(&fs, "head -c 5 a.txt"), "one\nt");
    assert_eq!(out(&fs, "tail -n 2 a.txt"), "four\nfive\n");
    assert_eq!(out(&fs, "tail -1 a.txt"), "five\n");
    assert_eq!(out(&fs, "tail -n +4 a.txt"), "four\nfive\n");
    assert_eq!(out(&fs, "tail -c 3 a.txt"), "ve\n");
    assert_eq!(
        out(&fs, "head -n 1 a.txt data.csv"),
        "==> a.txt <==\none\n\n==> data.csv <==\nname,age,city\n"
    );
    assert_eq!(run_with(&fs, "tail -n 1", "x\ny").1, "y");
    assert_eq!(run(&fs, "head -n x a.txt").0, 2);
}

#[test]
fn wc_counts() {
    let fs = tree();
    assert_eq!(out(&fs, "wc -l a.txt"), "5 a.txt\n");
    assert_eq!(out(&fs, "wc a.txt"), " 5  5 24 a.txt\n");
    assert_eq!(
        out(&fs, "wc -lw a.txt data.csv"),
        " 5  5 a.txt\n 3  3 data.csv\n 8  8 total\n"
    );
    assert_eq!(
        run_with(&fs, "wc", "a b\nc\n").1,
        "      2       3       6\n"
    );
    assert_eq!(run_with(&fs, "wc -c", "abc").1, "3\n");
}

#[test]
fn grep_flags_and_exit_codes() {
    let fs = tree();
    assert_eq!(out(&fs, "grep -n o a.txt"), "1:one\n2:two\n4:four\n");
    assert_eq!(out(&fs, "grep -c o a.txt"), "3\n");
    assert_eq!(out(&fs, "grep -v o a.txt"), "three\nfive\n");
    assert_eq!(
        out(&fs, "grep -in HELLO src/lib.rs"),
        "2:    println!(\"Hello\");\n"
    );
    assert_eq!(out(&fs, "grep -rl hello src"), "src/util/mod.rs\n");
    assert_eq!(
        out(&fs, "grep -ril hello ."),
        "./src/lib.rs\n./src/util/mod.rs\n"
    );
    assert_eq!(
        out(&fs, "grep -rn fn"),
        "src/lib.rs:1:fn main() {\nsrc/util/mod.rs:1:pub fn hello() {}\n"
    );
    assert_eq!(
        out(&fs, "grep -rh fn src"),
        "fn main() {\npub fn hello() {}\n"
    );
    assert_eq!(out(&fs, "grep -o 'o.' a.txt"), "on\nou\n");
    assert_eq!(
        out(&fs, "grep -rn --include='*.rs' fn ."),
        "./src/lib.rs:1:fn main() {\n./src/util/mod.rs:1:pub fn hello() {}\n"
    );
    assert_eq!(
        out(
            &fs,
            "grep -rl --exclude-dir=util --exclude '*.txt' -e o --ignore-case ."
        ),
        "./data.csv\n./src/lib.rs\n"
    );
    assert_eq!(out(&fs, "grep --count --fixed-strings o a.txt"), "3\n");
    assert_eq!(out(&fs, "grep -w on a.txt; grep -x two a.txt"), "two\n");
    assert_eq!(out(&fs, "grep -E 't(wo|hree)' a.txt"), "two\nthree\n");
    assert_eq!(out(&fs, "grep 't\\(wo\\|hree\\)' a.txt"), "two\nthree\n");
    assert_eq!(
        out(&fs, "grep -F '(\"' src/lib.rs"),
        "    println!(\"Hello\");\n"
    );
    assert_eq!(out(&fs, "grep -e one -e five a.txt"), "one\nfive\n");
    assert_eq!(out(&fs, "grep -H one a.txt"), "a.txt:one\n");
    assert_eq!(out(&fs, "grep one a.txt data.csv"), "a.txt:one\n");
    assert_eq!(out(&fs, "grep -q one a.txt && echo found"), "found\n");
    assert_eq!(
        run(&fs, "grep nothing a.txt"),
        (1, String::new(), String::new())
    );
    assert_eq!(
        run(&fs, "grep one missing"),
        (
            2,
            String::new(),
            "grep: missing: No such file or directory\n".into()
        )
    );
    assert_eq!(run(&fs, "grep x src").2, "grep: src: Is a directory\n");
    assert_eq!(run(&fs, "grep '(' src/lib.rs").0, 0);
    let (code, _, stderr) = run(&fs, "grep -E '(' a.txt");
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("grep: invalid regular expression \"(\""),
        "{stderr}"
    );
    assert_eq!(run_with(&fs, "grep -c b", "ab\nb\nc\n").1, "2\n");
    workspace::write(&fs, "bin.dat", b"one\0two").unwrap();
    assert_eq!(
        out(&fs, "grep one bin.dat"),
        "Binary file bin.dat matches\n"
    );
}

#[test]
fn find_walks_like_gnu_find() {
    let fs = tree();
    assert_eq!(
        out(&fs, "find ."),
        ".\n./.hidden\n./a.txt\n./data.csv\n./src\n./src/lib.rs\n./src/util\n./src/util/mod.rs\n"
    );
    assert_eq!(
        out(&fs, "find src -name '*.rs'"),
        "src/lib.rs\nsrc/util/mod.rs\n"
    );
    assert_eq!(out(&fs, "find . -type d"), ".\n./src\n./src/util\n");
    assert_eq!(
        out(&fs, "find . -maxdepth 1 -type f -name '*.txt'"),
        "./a.txt\n"
    );
    assert_eq!(out(&fs, "find src -mindepth 2"), "src/util/mod.rs\n");
    assert_eq!(out(&fs, "find . -iname 'LIB.RS'"), "./src/lib.rs\n");
    assert_eq!(
        out(&fs, "find . -path '*util*' -type f"),
        "./src/util/mod.rs\n"
    );
    assert_eq!(out(&fs, "cd src; find . -name mod.rs"), "./util/mod.rs\n");
    assert_eq!(out(&fs, "find a.txt"), "a.txt\n");
    assert_eq!(
        run(&fs, "find nope"),
        (
            1,
            String::new(),
            "find: 'nope': No such file or directory\n".into()
        )
    );
    assert_eq!(
        out(&fs, "find . -name '*.rs' -o -name '*.txt'"),
        "./a.txt\n./src/lib.rs\n./src/util/mod.rs\n"
    );
    assert_eq!(
        out(&fs, "find . -type f ! -name '*.rs' -not -path './.hidden'"),
        "./a.txt\n./data.csv\n"
    );
    assert_eq!(
        out(&fs, "find . \\( -name a.txt -o -name data.csv \\) -print"),
        "./a.txt\n./data.csv\n"
    );
    assert_eq!(
        out(&fs, "find src -name '*.rs' -exec wc -l {} \\;"),
        "3 src/lib.rs\n1 src/util/mod.rs\n"
    );
    assert_eq!(
        out(&fs, "find src -name '*.rs' -exec echo found {} +"),
        "found src/lib.rs src/util/mod.rs\n"
    );
    assert_eq!(
        run(&fs, "find . -frobnicate").2,
        "find: `-frobnicate' is not supported\n"
    );
    assert_eq!(
        out(&fs, "find src -name mod.rs -delete; find src -type f"),
        "src/lib.rs\n"
    );
    assert_eq!(out(&fs, "find src -type d -empty"), "src/util\n");
}

#[test]
fn sort_orders_lines() {
    let fs = memory_fs(&[("n.txt", "10\n9\nb\n-1\n2.5\na\n10\n")]);
    assert_eq!(out(&fs, "sort n.txt"), "-1\n10\n10\n2.5\n9\na\nb\n");
    assert_eq!(out(&fs, "sort -n n.txt"), "-1\na\nb\n2.5\n9\n10\n10\n");
    assert_eq!(out(&fs, "sort -nr n.txt"), "10\n10\n9\n2.5\nb\na\n-1\n");
    assert_eq!(out(&fs, "sort -u n.txt"), "-1\n10\n2.5\n9\na\nb\n");
    assert_eq!(run_with(&fs, "sort -f", "b\nA\na\nB\n").1, "A\na\nB\nb\n");
    assert_eq!(
        run_with(&fs, "sort -t, -k2 -n", "x,3\ny,1\nz,2\n").1,
        "y,1\nz,2\nx,3\n"
    );
    assert_eq!(
        run_with(&fs, "sort -k 2,2", "a c\nb b\nc a\n").1,
        "c a\nb b\na c\n"
    );
}

#[test]
fn uniq_collapses_runs() {
    let fs = memory_fs(&[]);
    let input = "a\na\nb\nc\nc\nc\na\n";
    assert_eq!(run_with(&fs, "uniq", input).1, "a\nb\nc\na\n");
    assert_eq!(
        run_with(&fs, "uniq -c", input).1,
        "      2 a\n      1 b\n      3 c\n      1 a\n"
    );
    assert_eq!(run_with(&fs, "uniq -d", input).1, "a\nc\n");
    assert_eq!(run_with(&fs, "uniq -u", input).1, "b\na\n");
    assert_eq!(
        run_with(&fs, "sort | uniq -c | sort -rn | head -1", input).1,
        "      3 c\n"
    );
}

#[test]
fn cut_fields_and_ranges() {
    let fs = tree();
    assert_eq!(out(&fs, "cut -d, -f1 data.csv"), "name\nann\nbob\n");
    assert_eq!(
        out(&fs, "cut -d , -f 1,3 data.csv"),
        "name,city\nann,oslo\nbob,rome\n"
    );
    assert_eq!(out(&fs, "cut -d, -f2- data.csv | tail -1"), "4,rome\n");
    assert_eq!(out(&fs, "cut -c 1-2,4 a.txt | head -3"), "on\ntw\nthe\n");
    assert_eq!(out(&fs, "cut -c -2 a.txt | tail -1"), "fi\n");
    assert_eq!(
        run_with(&fs, "cut -f2", "a\tb\tc\nnodelim\n").1,
        "b\nnodelim\n"
    );
    assert_eq!(run_with(&fs, "cut -s -f2", "a\tb\nnodelim\n").1, "b\n");
    assert_eq!(run(&fs, "cut -f 0 a.txt").2, "cut: invalid list: '0'\n");
}

#[test]
fn sed_substitutes_and_addresses() {
    let fs = tree();
    assert_eq!(run_with(&fs, "sed 's/o/0/'", "foo boo\n").1, "f0o boo\n");
    assert_eq!(run_with(&fs, "sed 's/o/0/g'", "foo boo\n").1, "f00 b00\n");
    assert_eq!(run_with(&fs, "sed 's/o/0/3'", "foo boo\n").1, "foo b0o\n");
    assert_eq!(
        run_with(&fs, "sed 's|/usr|/opt|'", "/usr/bin\n").1,
        "/opt/bin\n"
    );
    assert_eq!(
        run_with(&fs, "sed 's/[a-z]*/<&>/'", "abc def\n").1,
        "<abc> def\n"
    );
    assert_eq!(
        run_with(&fs, "sed 's/\\(a\\)\\(b\\)/\\2\\1/'", "abc\n").1,
        "bac\n"
    );
    assert_eq!(
        run_with(&fs, "sed -E 's/(a)(b)/\\2\\1/g'", "abab\n").1,
        "baba\n"
    );
    assert_eq!(run_with(&fs, "sed 's/A/x/gi'", "aAa\n").1, "xxx\n");
    assert_eq!(run_with(&fs, "sed -e 's/a/b/' -e 's/b/c/'", "a\n").1, "c\n");
    assert_eq!(run_with(&fs, "sed 's/a/b/; s/b/c/'", "a\n").1, "c\n");
    assert_eq!(out(&fs, "sed -n 's/two/2/p' a.txt"), "2\n");
    assert_eq!(out(&fs, "sed -n '2p' a.txt"), "two\n");
    assert_eq!(out(&fs, "sed '2,4d' a.txt"), "one\nfive\n");
    assert_eq!(out(&fs, "sed '/o/d' a.txt"), "three\nfive\n");
    assert_eq!(out(&fs, "sed '$d' a.txt | tail -1"), "four\n");
    assert_eq!(
        out(&fs, "sed -n '/two/,/four/p' a.txt"),
        "two\nthree\nfour\n"
    );
    assert_eq!(out(&fs, "sed '2q' a.txt"), "one\ntwo\n");
    assert_eq!(out(&fs, "sed -n '/t/!p' a.txt"), "one\nfour\nfive\n");
    assert_eq!(run_with(&fs, "sed 's/x/y/'", "no newline").1, "no newline");
    assert_eq!(
        out(&fs, "sed -i 's/one/ONE/' a.txt; head -1 a.txt"),
        "ONE\n"
    );
    assert_eq!(
        workspace::read(&fs, "a.txt").unwrap(),
        b"ONE\ntwo\nthree\nfour\nfive\n"
    );
    assert_eq!(
        run(&fs, "sed 's/a/b' a.txt").2,
        "sed: -e expression #1: unterminated `s' command\n"
    );
    assert_eq!(run(&fs, "sed 'y/a/b/' a.txt").0, 1);
}

#[test]
fn echo_and_printf() {
    let fs = memory_fs(&[]);
    assert_eq!(out(&fs, "echo -n a; echo b"), "ab\n");
    assert_eq!(out(&fs, "echo -e 'a\\tb\\nc'"), "a\tb\nc\n");
    assert_eq!(out(&fs, "echo 'a\\tb'"), "a\\tb\n");
    assert_eq!(out(&fs, "echo -x"), "-x\n");
    assert_eq!(out(&fs, "printf '%s=%d\\n' a 1 b 2"), "a=1\nb=2\n");
    assert_eq!(
        out(&fs, "printf '%05.1f|%x|%%\\n' 3.14159 255"),
        "003.1|ff|%\n"
    );
}

#[test]
fn file_commands_change_the_tree() {
    let fs = tree();
    assert_eq!(
        out(&fs, "mkdir -p x/y/z && touch x/y/z/f && ls x/y/z"),
        "f\n"
    );
    assert_eq!(run(&fs, "mkdir x").2, "mkdir: x: File exists\n");
    assert_eq!(
        run(&fs, "mkdir q/r").2,
        "mkdir: q/r: No such file or directory\n"
    );
    assert_eq!(run(&fs, "rm x").2, "rm: x: Is a directory\n");
    assert_eq!(out(&fs, "rm -r x; ls"), "a.txt\ndata.csv\nsrc\n");
    assert_eq!(
        run(&fs, "rm missing"),
        (
            1,
            String::new(),
            "rm: missing: No such file or directory\n".into()
        )
    );
    assert_eq!(run(&fs, "rm -f missing").0, 0);
    assert_eq!(
        run(&fs, "rm -rf ."),
        (
            1,
            String::new(),
            "rm: .: refusing to remove the workspace root\n".into()
        )
    );
    assert_eq!(
        run(&fs, "cd src; rm -rf ..").2,
        "rm: ..: refusing to remove the workspace root\n"
    );
    assert_eq!(out(&fs, "cp a.txt b.txt && cat b.txt | wc -l"), "5\n");
    assert_eq!(
        run(&fs, "cp src dst").2,
        "cp: src: -r not specified; omitting directory\n"
    );
    assert_eq!(
        out(&fs, "cp -r src dst && find dst"),
        "dst\ndst/lib.rs\ndst/util\ndst/util/mod.rs\n"
    );
    assert_eq!(
        out(&fs, "mv b.txt c.txt && mv c.txt dst && ls dst"),
        "c.txt\nlib.rs\nutil\n"
    );
    assert_eq!(
        out(&fs, "mv dst moved && ls"),
        "a.txt\ndata.csv\nmoved\nsrc\n"
    );
    assert_eq!(out(&fs, "touch a.txt && wc -l a.txt"), "5 a.txt\n");
}

#[test]
fn test_and_brackets() {
    let fs = tree();
    assert_eq!(out(&fs, "test -f a.txt && echo file"), "file\n");
    assert_eq!(out(&fs, "[ -d src ] && echo dir"), "dir\n");
    assert_eq!(out(&fs, "[ -e nope ] || echo none"), "none\n");
    assert_eq!(out(&fs, "[ 3 -gt 2 ] && [ a != b ] && echo yes"), "yes\n");
    assert_eq!(out(&fs, "X=1; [ \"$X\" = 1 ] && echo one"), "one\n");
    assert_eq!(out(&fs, "[ ! -z x ] && echo nonempty"), "nonempty\n");
    assert_eq!(run(&fs, "[ -f a.txt").0, 2);
}

#[test]
fn export_sets_variables() {
    let fs = memory_fs(&[]);
    assert_eq!(out(&fs, "export A=1 B; echo $A"), "1\n");
}

#[test]
fn grep_shows_context_around_selected_lines() {
    let fs = memory_fs(&[("log.txt", "a\nERR 1\nb\nc\nd\nERR 2\ne\n")]);
    assert_eq!(out(&fs, "grep -A1 ERR log.txt"), "ERR 1\nb\n--\nERR 2\ne\n");
    assert_eq!(
        out(&fs, "grep -B1 -n ERR log.txt"),
        "1-a\n2:ERR 1\n--\n5-d\n6:ERR 2\n"
    );
    assert_eq!(
        out(&fs, "grep --context=2 'ERR 2' log.txt"),
        "c\nd\nERR 2\ne\n"
    );
    assert_eq!(
        out(&fs, "grep -C3 ERR log.txt"),
        "a\nERR 1\nb\nc\nd\nERR 2\ne\n"
    );
    assert_eq!(
        run(&fs, "grep -A x ERR log.txt"),
        (2, String::new(), "grep: invalid number: 'x'\n".into())
    );
}

#[test]
fn tac_and_rev_reverse_lines_and_characters() {
    let fs = tree();
    assert_eq!(out(&fs, "tac a.txt | head -n 2"), "five\nfour\n");
    assert_eq!(out(&fs, "rev <<< 'abc déf'"), "féd cba\n");
    assert_eq!(out(&fs, "printf 'x\\ny' | tac"), "y\nx\n");
    assert_eq!(run(&fs, "tac nope").0, 1);
}

#[test]
fn env_prints_variables_and_runs_a_command_with_more() {
    let fs = tree();
    assert_eq!(out(&fs, "X=1; env | grep '^X='"), "X=1\n");
    assert_eq!(
        out(
            &fs,
            "env GREETING=hi sh -c 'echo $GREETING'; echo \"[$GREETING]\""
        ),
        "hi\n[]\n"
    );
    assert_eq!(out(&fs, "export Y=2; printenv Y"), "2\n");
    assert_eq!(run(&fs, "printenv NOT_SET").0, 1);
}

#[test]
fn yes_repeats_until_its_reader_stops() {
    let fs = tree();
    assert_eq!(out(&fs, "yes | head -n 2"), "y\ny\n");
    assert_eq!(out(&fs, "yes no | head -n 1"), "no\n");
}

#[test]
fn du_counts_four_kib_blocks_and_stat_formats_what_is_kept() {
    let fs = tree();
    // src: the folder, src/util and two small files, a block each.
    assert_eq!(out(&fs, "du -s src"), "16\tsrc\n");
    assert_eq!(out(&fs, "du src"), "8\tsrc/util\n16\tsrc\n");
    assert_eq!(out(&fs, "du -sh src"), "16K\tsrc\n");
    assert_eq!(
        out(&fs, "du -a src/util"),
        "4\tsrc/util/mod.rs\n8\tsrc/util\n"
    );
    assert_eq!(
        out(&fs, "du -c a.txt data.csv"),
        "4\ta.txt\n4\tdata.csv\n8\ttotal\n"
    );
    assert_eq!(
        out(&fs, "stat -c '%n %s %F' a.txt src"),
        "a.txt 24 regular file\nsrc 0 directory\n"
    );
    assert_eq!(out(&fs, "stat --printf='%s|' a.txt"), "24|");
    let (code, _, stderr) = run(&fs, "stat -c %y a.txt");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("%y: the sandbox keeps no owners, modes or times"),
        "{stderr}"
    );
    assert_eq!(run(&fs, "stat nope").0, 1);
}
