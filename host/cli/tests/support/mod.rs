//! A scratch project for driving the `cordon` binary as an operator would: a
//! working directory with a `plugins/` folder, a component cache of its own,
//! and an environment cleared of every setting that would change a command.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use cordon_test_artifacts as artifacts;
use serde_json::Value;
use tempfile::TempDir;

/// Environment variables `cordon` reads, cleared for every command.
const CLEARED: &[&str] = &[
    "CORDON_AGENT",
    "CORDON_MODEL",
    "CORDON_STORE",
    "CORDON_PLUGINS",
    "CORDON_BASE_URL",
    "CORDON_SANDBOX",
    "CORDON_WORKSPACE",
    "CORDON_THREAD",
    "CORDON_PERMISSIONS",
    "CORDON_CONFIG",
    "CORDON_MAX_INSTANCES",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
];

pub(crate) struct Project {
    pub dir: TempDir,
    pub cache: TempDir,
}

impl Project {
    /// An empty project.
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
        }
    }

    /// Add the repository's bundled plugin `name` with its own manifest and
    /// `component`.
    pub(crate) fn bundled(&self, name: &str, component: &str) {
        let bundle = self.path("plugins").join(name);
        std::fs::create_dir_all(&bundle).unwrap();
        let manifest = Path::new(artifacts::PLUGINS_DIR)
            .join(name)
            .join("plugin.toml");
        std::fs::copy(manifest, bundle.join("plugin.toml")).unwrap();
        std::fs::copy(component, bundle.join(format!("{name}.wasm"))).unwrap();
    }

    /// Add a bundle `name` with `manifest`, whose component is `tool.wasm`.
    pub(crate) fn bundle(&self, name: &str, manifest: &str, component: &str) {
        let bundle = self.path("plugins").join(name);
        std::fs::create_dir_all(&bundle).unwrap();
        std::fs::write(bundle.join("plugin.toml"), manifest).unwrap();
        std::fs::copy(component, bundle.join("tool.wasm")).unwrap();
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Write `text` to `relative`, creating its folders.
    pub(crate) fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub(crate) fn read(&self, relative: &str) -> Option<String> {
        std::fs::read_to_string(self.path(relative)).ok()
    }

    /// `cordon args` in the project, stdin closed.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cordon"));
        command
            .args(args)
            .current_dir(self.dir.path())
            .env("CORDON_CACHE_DIR", self.cache.path())
            // No operator config of the machine's user applies.
            .env("XDG_CONFIG_HOME", self.cache.path().join("config"))
            .stdin(Stdio::null());
        for name in CLEARED {
            command.env_remove(name);
        }
        command
    }

    pub(crate) fn cordon(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run cordon")
    }

    /// Approve what bundle `name` of `plugins/` asks for, as its operator
    /// would: `cordon grants approve NAME --yes`.
    pub(crate) fn approve(&self, name: &str) {
        let output = self.cordon(&["grants", "approve", name, "--plugins", "plugins", "--yes"]);
        assert!(
            output.status.success(),
            "approving {name}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// `cordon run` of `agent.toml` with `script.toml` as run `run_id`, with
    /// `extra` flags.
    pub(crate) fn run_scripted(&self, run_id: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "run",
            "--agent",
            "agent.toml",
            "--model",
            "scripted:script.toml",
        ];
        args.extend_from_slice(extra);
        args.extend(["--run-id", run_id, "go"]);
        self.cordon(&args)
    }

    /// Start `cordon run` of `agent.toml` with `script.toml` as run `run_id`
    /// in a child process, and return it once the run has recorded the intent
    /// of its first tool calls, which are then running.
    pub(crate) fn spawn_until_calls_start(&self, run_id: &str) -> Child {
        let mut child = self
            .command(&[
                "run",
                "--agent",
                "agent.toml",
                "--model",
                "scripted:script.toml",
                "--run-id",
                run_id,
                "go",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if !self.calls_started(run_id) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("run {run_id} never started its calls");
        }
        child
    }

    /// Whether run `run_id` records the intent of tool calls within a minute.
    fn calls_started(&self, run_id: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let output = self.cordon(&["runs", "show", run_id, "--json"]);
            let intent = serde_json::from_slice::<Value>(&output.stdout)
                .ok()
                .is_some_and(|shown| !shown["intent"].is_null());
            if output.status.success() && intent {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// `cordon runs show RUN --json`, which must succeed.
    pub(crate) fn show(&self, run: &str) -> Value {
        let output = self.cordon(&["runs", "show", run, "--json"]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Stdout then stderr, for assertion messages.
pub(crate) fn both(output: &Output) -> String {
    format!("{}{}", text(&output.stdout), text(&output.stderr))
}
