//! What the sandboxed shell costs, each beside its baseline in the same run:
//! `echo`, a 10-stage pipeline and a 1,000-iteration loop through the dir
//! backend's `bash` (a fresh backend instance per command) against the same
//! lines through GNU bash as a process; and a Python script writing 1,000
//! files through the interpreter's view of the workspace against the
//! machine's own `python3` writing them to disk.
//!
//! Run with `cargo bench -p cordon-tests --bench shell` (after `cordon build
//! plugins/python`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cordon_tests::{Rig, artifacts, built_bundle};
use cordon_wasm::{Safeguards, WorkspaceOptions};

const ROUNDS: usize = 15;

const PIPELINE: &str = "cat words.txt | grep a | sort | uniq | sort -r | head -n 500 | cut -c1-4 | sort | uniq -c | wc -l";
const LOOP: &str = "i=0; while [ $i -lt 1000 ]; do i=$((i + 1)); done; echo $i";
const WRITER: &str = "import os, sys\n\
    os.makedirs(sys.argv[1], exist_ok=True)\n\
    for n in range(1000):\n\
    \x20   with open(os.path.join(sys.argv[1], f'{n}.txt'), 'w') as f:\n\
    \x20       f.write('line of text\\n' * 8)\n\
    print(len(os.listdir(sys.argv[1])))\n";

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

/// The median of `times`.
fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}

fn words() -> String {
    (0..5_000)
        .map(|n| format!("{}word{}\n", ["a", "b", "c", "d"][n % 4], n % 700))
        .collect()
}

async fn run() {
    let bundle = built_bundle(artifacts::PLUGINS_DIR, "python");
    let options = WorkspaceOptions {
        transactional: true,
        seed: true,
    };
    let rig = Rig::bind("dir", options, Safeguards::default(), |fixture, _| {
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
        let to = fixture.plugins.path().join("python");
        std::fs::create_dir_all(&to).expect("python bundle");
        for file in ["plugin.toml", "python.wasm"] {
            std::fs::copy(bundle.join(file), to.join(file)).expect("copy");
        }
        let workspace = fixture.workspace.path();
        std::fs::write(workspace.join("words.txt"), words()).expect("words");
        std::fs::write(workspace.join("write.py"), WRITER).expect("script");
    })
    .await;
    let native_dir = tempfile::tempdir().expect("scratch");
    std::fs::write(native_dir.path().join("words.txt"), words()).expect("words");
    std::fs::write(native_dir.path().join("write.py"), WRITER).expect("script");

    for (name, line) in [
        ("echo", "echo hi"),
        ("10-stage pipeline", PIPELINE),
        ("1,000-iteration loop", LOOP),
    ] {
        let expected = gnu_bash(native_dir.path(), line).1;
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for round in 0..ROUNDS + 2 {
            let started = Instant::now();
            let (code, out, err) = rig.sh(line).await;
            let elapsed = started.elapsed();
            assert_eq!((code, &out), (0, &expected), "{line}: {err}");
            let (elapsed_bash, _) = gnu_bash(native_dir.path(), line);
            if round > 1 {
                ours.push(elapsed);
                theirs.push(elapsed_bash);
            }
        }
        let (ours, theirs) = (median(&mut ours), median(&mut theirs));
        println!(
            "{name}: Cordon's bash {:.2} ms, GNU bash as a process {:.2} ms; {:.2}x",
            ms(ours),
            ms(theirs),
            ours.as_secs_f64() / theirs.as_secs_f64()
        );
    }

    let mut through_view = Vec::new();
    let mut on_disk = Vec::new();
    for round in 0..7 {
        let target = format!("out{round}");
        let line = format!("python3 write.py {target}");
        let started = Instant::now();
        let (code, out, err) = rig.sh(&line).await;
        through_view.push(started.elapsed());
        assert_eq!((code, out.trim()), (0, "1000"), "{err}");
        let started = Instant::now();
        let native = Command::new("python3")
            .args(["-S", "write.py", &target])
            .current_dir(native_dir.path())
            .output()
            .expect("python3");
        on_disk.push(started.elapsed());
        assert!(native.status.success());
    }
    let (view, disk) = (median(&mut through_view), median(&mut on_disk));
    println!(
        "python writing 1,000 files: through the sandbox's view {:.1} ms, the machine's python3 on disk {:.1} ms; {:.2}x",
        ms(view),
        ms(disk),
        view.as_secs_f64() / disk.as_secs_f64()
    );
}

/// How long `line` takes through GNU bash in `dir`, and its stdout.
fn gnu_bash(dir: &Path, line: &str) -> (Duration, String) {
    let started = Instant::now();
    let output = Command::new("bash")
        .args(["-c", line])
        .current_dir(dir)
        .env("LC_ALL", "C")
        .output()
        .expect("GNU bash");
    let elapsed = started.elapsed();
    (
        elapsed,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}
