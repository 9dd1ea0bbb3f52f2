//! Command bundles in the sandbox: a backend's `bash` hands a command it
//! does not have (`tr`, `seq`, `tee`...) to the bundled `commands` bundle, a
//! component of its own that sees the command's view of the workspace
//! (writing through the command's layer), with the command's streams and
//! its whole exit status; a write where no program may is refused and
//! audited.

use std::path::Path;

use cordon_kernel::Capability;
use cordon_tests::{Rig, artifacts, built_bundle};
use cordon_wasm::{Safeguards, WorkspaceOptions};

/// The dir backend over a small workspace, with the commands bundle.
async fn rig(transactional: bool) -> Rig {
    let options = WorkspaceOptions {
        transactional,
        seed: true,
    };
    Rig::bind("dir", options, Safeguards::default(), |fixture, _| {
        fixture.bundled_plugin("dir", Path::new(artifacts::DIR));
        let bundle = built_bundle(artifacts::PLUGINS_DIR, "commands");
        let to = fixture.plugins.path().join("commands");
        std::fs::create_dir_all(&to).unwrap();
        for file in ["plugin.toml", "commands.wasm"] {
            std::fs::copy(bundle.join(file), to.join(file)).unwrap();
        }
        std::fs::write(
            fixture.workspace.path().join("data.csv"),
            "id,name\n1,ann\n2,bob\n",
        )
        .unwrap();
        std::fs::create_dir_all(fixture.workspace.path().join(".cordon")).unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn everyday_commands_run_in_a_command_bundle_with_their_exit_status() {
    let rig = rig(true).await;
    for (line, expected) in [
        ("echo 'a,b,c' | tr , '\\n'", "a\nb\nc\n"),
        ("seq 3 | paste -sd+ -", "1+2+3\n"),
        (
            "basename /srv/report.txt .txt; dirname /srv/report.txt",
            "report\n/srv\n",
        ),
        (
            "cut -d, -f2 data.csv | tail -n +2 | paste -sd, -",
            "ann,bob\n",
        ),
        ("nl -ba data.csv | head -n 1", "     1\tid,name\n"),
        ("date -u -d @0 +%Y", "1970\n"),
        (
            "sha256sum data.csv",
            "2899abcddd15dba58459f556b000f74de871b5e569e4c170cf8017cffe08fb62  data.csv\n",
        ),
    ] {
        let (code, out, err) = rig.sh(line).await;
        assert_eq!((code, out.as_str()), (0, expected), "{line}: {err}");
    }
    let (code, _, err) = rig.sh("expr 1 +").await;
    assert_eq!(code, 2, "the whole exit status comes back: {err}");
    assert!(err.contains("expr: syntax error"), "{err}");
    let (code, out, err) = rig.sh("expr 6 \\* 7; echo $?").await;
    assert_eq!((code, out.as_str()), (0, "42\n0\n"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_writes_through_its_commands_layer_and_is_refused_where_no_program_may() {
    for transactional in [true, false] {
        let rig = rig(transactional).await;
        let (code, out, err) = rig
            .sh("echo kept | tee notes.txt | tr a-z A-Z; cat notes.txt")
            .await;
        assert_eq!((code, out.as_str()), (0, "KEPT\nkept\n"), "{err}");
        if transactional {
            assert_eq!(
                rig.on_disk("notes.txt"),
                None,
                "staged until the step commits"
            );
            rig.commit();
        }
        assert_eq!(rig.on_disk("notes.txt").as_deref(), Some("kept\n"));
        for target in [".cordon/planted", "/etc/planted"] {
            let (code, _, err) = rig.sh(&format!("echo x | tee {target}")).await;
            assert_ne!(code, 0, "{target}: {err}");
        }
        let refused: Vec<String> = rig
            .loaded
            .events
            .denials()
            .into_iter()
            .filter(|denial| {
                denial.bundle == "commands" && denial.capability == Capability::Filesystem
            })
            .map(|denial| denial.target)
            .collect();
        for target in ["/workspace/.cordon/planted", "/etc/planted"] {
            assert!(
                refused.iter().any(|denied| denied == target),
                "{target}: {refused:?}"
            );
        }
        rig.commit();
        assert!(
            !rig.fixture
                .workspace
                .path()
                .join(".cordon/planted")
                .exists()
        );
        assert_eq!(rig.sh("echo alive").await.1, "alive\n");
    }
}
