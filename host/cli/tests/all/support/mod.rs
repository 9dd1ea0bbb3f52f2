//! A scratch project for driving the `cordon` binary as an operator would: a
//! working directory with a `plugins/` folder, a component cache of its own,
//! and an environment cleared of every setting that would change a command.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub(crate) mod browser;
pub(crate) mod http;
pub(crate) mod mcp;
pub(crate) mod otlp;
pub(crate) mod ui;

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
    "CORDON_GRANTS",
    "CORDON_MAX_INSTANCES",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
];

pub(crate) struct Project {
    pub dir: TempDir,
    pub cache: TempDir,
    /// Where compiled components are cached when not in `cache`.
    compiled: Option<PathBuf>,
}

impl Project {
    /// An empty project whose compiled components are cached with every
    /// other project's, for the many tests that do not look at the cache:
    /// each component is compiled once per run (and kept for the next).
    /// Entries are keyed by content, sealed with one key and written
    /// atomically, so tests in parallel, in any process, share them.
    pub(crate) fn new() -> Self {
        Self {
            compiled: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("cordon-compiled")),
            ..Self::with_own_cache()
        }
    }

    /// An empty project with a compile cache of its own, empty at first,
    /// for tests that look at what is compiled and what is cached.
    pub(crate) fn with_own_cache() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
            compiled: None,
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
            .env(
                "CORDON_CACHE_DIR",
                self.compiled.as_deref().unwrap_or(self.cache.path()),
            )
            // No operator config of the machine's user applies.
            .env("XDG_CONFIG_HOME", self.cache.path().join("config"))
            // Nor any plugin the machine's user installed.
            .env("XDG_DATA_HOME", self.data_home())
            // The compile cache's key: shared with the projects sharing its
            // entries, else the project's own.
            .env("XDG_STATE_HOME", self.state_home())
            .stdin(Stdio::null());
        for name in CLEARED {
            command.env_remove(name);
        }
        command
    }

    pub(crate) fn cordon(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run cordon")
    }

    /// `cordon args` in the project with `HOME` set to a folder of the
    /// project's own, so that no skill of the machine's user is found.
    pub(crate) fn cordon_at_home(&self, args: &[&str]) -> Output {
        self.command(args)
            .env("HOME", self.home())
            .output()
            .expect("run cordon")
    }

    /// The `XDG_DATA_HOME` of every command, which holds the user's plugins
    /// folder.
    pub(crate) fn data_home(&self) -> PathBuf {
        self.cache.path().join("data")
    }

    /// The `XDG_STATE_HOME` of every command, which holds the key sealing
    /// compiled components: one for every project sharing compiled
    /// components, else the project's own.
    pub(crate) fn state_home(&self) -> PathBuf {
        match &self.compiled {
            Some(shared) => shared.with_extension("state"),
            None => self.cache.path().join("state"),
        }
    }

    /// The `HOME` of [`Project::cordon_at_home`].
    pub(crate) fn home(&self) -> PathBuf {
        self.cache.path().join("home")
    }

    /// Copy the folder `from` (a skill) to `to` in the project.
    pub(crate) fn copy_folder(&self, from: &Path, to: &str) {
        let target = self.path(to);
        for entry in walk(from) {
            let relative = entry.strip_prefix(from).unwrap();
            let dest = target.join(relative);
            if entry.is_dir() {
                std::fs::create_dir_all(&dest).unwrap();
            } else {
                std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
                std::fs::copy(&entry, &dest).unwrap();
            }
        }
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
        self.cordon(&scripted_run(run_id, extra))
    }

    /// Start `cordon run` of `agent.toml` with `script.toml` as run `run_id`
    /// in a child process, and return it once the run has recorded the intent
    /// of its first tool calls, which are then running.
    pub(crate) fn spawn_until_calls_start(&self, run_id: &str) -> Child {
        let mut child = self
            .command(&scripted_run(run_id, &[]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if !self.calls_started(run_id, &[]) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("run {run_id} never started its calls");
        }
        child
    }

    /// Whether run `run_id` records the intent of tool calls within a
    /// minute, in the store `store` flags name (the default one when none).
    pub(crate) fn calls_started(&self, run_id: &str, store: &[&str]) -> bool {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let mut show = vec!["runs", "show", run_id, "--json"];
            show.extend_from_slice(store);
            let output = self.cordon(&show);
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

    /// `cordon args` on a pseudo-terminal, `typed` typed into it; the output
    /// is the terminal's, carriage returns removed.
    pub(crate) fn at_terminal(&self, args: &[&str], typed: &str) -> (Output, String) {
        self.at_terminal_with(args, typed, &[])
    }

    /// [`Project::at_terminal`] with `env` set besides.
    pub(crate) fn at_terminal_with(
        &self,
        args: &[&str],
        typed: &str,
        env: &[(&str, &str)],
    ) -> (Output, String) {
        let mut line = String::from(env!("CARGO_BIN_EXE_cordon"));
        for arg in args {
            line.push_str(&format!(" '{arg}'"));
        }
        let mut command = self.command(&[]);
        command.envs(env.iter().copied());
        let mut script = Command::new("script");
        script.args(["-qec", &line, "/dev/null"]);
        for (name, value) in command.get_envs() {
            match value {
                Some(value) => script.env(name, value),
                None => script.env_remove(name),
            };
        }
        if let Some(dir) = command.get_current_dir() {
            script.current_dir(dir);
        }
        let mut child = script
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("`script` (util-linux) gives the test a terminal");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(typed.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        let shown = text(&output.stdout).replace('\r', "");
        (output, shown)
    }

    /// `cordon runs show RUN --json`, which must succeed.
    pub(crate) fn show(&self, run: &str) -> Value {
        let output = self.cordon(&["runs", "show", run, "--json"]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

/// A URL for a fresh schema `name` of the test server `CORDON_TEST_POSTGRES`
/// names (`scripts/test.sh` starts one), or `None` after saying loudly that
/// `test` is skipped.
pub(crate) fn postgres_schema(test: &str, name: &str) -> Option<String> {
    let Ok(server) = std::env::var("CORDON_TEST_POSTGRES") else {
        eprintln!("SKIPPED {test}: CORDON_TEST_POSTGRES is not set");
        return None;
    };
    let schema = format!("cli_{name}_{}", std::process::id());
    psql(
        &server,
        &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"),
    );
    let separator = if server.contains('?') { '&' } else { '?' };
    Some(format!(
        "{server}{separator}options=-csearch_path%3D{schema}"
    ))
}

/// The rows `sql` gives on the database at `url`, unaligned, one per line.
pub(crate) fn psql(url: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .args([url, "-q", "-At", "-c", sql])
        .output()
        .expect("run psql");
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Stdout then stderr, for assertion messages.
pub(crate) fn both(output: &Output) -> String {
    format!("{}{}", text(&output.stdout), text(&output.stderr))
}

/// Every path under `dir`, folders before what they hold.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.to_owned()];
    let mut index = 0;
    while index < found.len() {
        if found[index].is_dir() {
            let mut children: Vec<PathBuf> = std::fs::read_dir(&found[index])
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .collect();
            children.sort();
            found.extend(children);
        }
        index += 1;
    }
    found
}

/// The arguments of `cordon run` of `agent.toml` with `script.toml` as run
/// `run_id`, with `extra` flags.
pub(crate) fn scripted_run<'a>(run_id: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
    ];
    args.extend_from_slice(extra);
    args.extend(["--run-id", run_id, "go"]);
    args
}
