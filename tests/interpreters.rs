//! Scripts in the sandbox: a backend's `bash` runs `python3` in the bundled
//! Python interpreter, a component of its own that sees the command's
//! workspace and the active skills' folders read-only and nothing else, with
//! its own limits; a language without an interpreter fails the call, and
//! nothing ever runs on the host.

use std::path::Path;

use cordon_tests::{Fixture, Rig, artifacts, built_bundle};
use cordon_wasm::{Safeguards, WorkspaceOptions};

/// Copy the built bundle in `dir` into the fixture's plugins.
fn copy_bundle(fixture: &Fixture, dir: &Path) {
    let to = fixture.plugins.path().join(dir.file_name().unwrap());
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// The dir backend over a workspace `seed` fills, with the Python interpreter.
async fn rig(transactional: bool, seed: impl FnOnce(&Path)) -> Rig {
    let options = WorkspaceOptions {
        transactional,
        seed: true,
    };
    Rig::bind("dir", options, Safeguards::default(), |fixture, _| {
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
        copy_bundle(fixture, &built_bundle(artifacts::PLUGINS_DIR, "python"));
        seed(fixture.workspace.path());
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn python_runs_a_script_of_the_workspace_in_its_own_sandbox() {
    let rig = rig(true, |root| {
        std::fs::write(root.join("data.csv"), "a,b\n1,2\n3,4\n").unwrap();
        std::fs::write(
            root.join("sum.py"),
            "import csv, sys\nrows = list(csv.DictReader(open(sys.argv[1])))\nprint(sum(int(r['b']) for r in rows))\n",
        )
        .unwrap();
    })
    .await;
    let (code, out, err) = rig.sh("python3 -c 'print(6 * 7)'").await;
    assert_eq!((code, out.as_str()), (0, "42\n"), "{err}");
    let (code, out, err) = rig.sh("python3 sum.py data.csv").await;
    assert_eq!((code, out.as_str()), (0, "6\n"), "{err}");
}
