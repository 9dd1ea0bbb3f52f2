//! `cordon` from spawn to its tool listing (`cordon tool list`), with the
//! compile cache warm and every component unchanged since the last start,
//! for one bundle, the nine bundled Rust plugins, and twenty distinct
//! bundles including the Python and JavaScript example tools and both
//! interpreters. The baseline is the same binary's `cordon --version` in
//! the same run: a process start that loads nothing. Set
//! `STARTUP_BASELINE=/path/to/cordon` to time another build beside this one,
//! each with its own cache, and have the ratio between them.
//!
//! Run with `cargo bench -p cordon-cli --bench startup` after the test
//! command has built the bundled plugins, the example tools and the
//! fixtures (`./scripts/test.sh`).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cordon_test_artifacts::{EXAMPLE_TOOLS_DIR, HOSTILE, HOSTILE_NET, MCP_FIXTURES, PLUGINS_DIR};

/// Starts timed per figure, after the warm-up.
const STARTS: usize = 15;

/// The bundled plugins written in Rust that run as tools, hooks, sandboxes
/// and commands.
const RUST_PLUGINS: &[&str] = &[
    "jq", "files", "notes", "redactor", "guard", "budget", "dir", "http", "memory",
];

/// The rest of the bundled plugins, the interpreters among them.
const OTHER_PLUGINS: &[&str] = &["commands", "git", "python", "node"];

/// The example tools: Python, JavaScript, Go and C.
const EXAMPLES: &[&str] = &["csv", "markdown", "urls", "wc"];

fn main() {
    let work = tempfile::tempdir().expect("scratch folder");
    let one = work.path().join("one");
    fixture(&one, "hostile", HOSTILE);
    let nine = work.path().join("nine");
    for name in RUST_PLUGINS {
        copy_bundle(&Path::new(PLUGINS_DIR).join(name), &nine.join(name));
    }
    let twenty = work.path().join("twenty");
    for name in RUST_PLUGINS.iter().chain(OTHER_PLUGINS) {
        copy_bundle(&Path::new(PLUGINS_DIR).join(name), &twenty.join(name));
    }
    for name in EXAMPLES {
        copy_bundle(&Path::new(EXAMPLE_TOOLS_DIR).join(name), &twenty.join(name));
    }
    fixture(&twenty, "hostile", HOSTILE);
    fixture(&twenty, "hostile-net", HOSTILE_NET);
    fixture(&twenty, "test", MCP_FIXTURES);
    let sets = [
        ("1 bundle", one),
        ("9 bundles", nine),
        ("20 bundles", twenty),
    ];
    for (label, dir) in &sets {
        let count = std::fs::read_dir(dir).expect("bundles").count();
        assert!(
            label.starts_with(&count.to_string()),
            "{label}: {count} bundles"
        );
    }

    let mut builds = vec![Build::new(
        "this build",
        PathBuf::from(env!("CARGO_BIN_EXE_cordon")),
        work.path(),
    )];
    if let Some(other) = std::env::var_os("STARTUP_BASELINE") {
        builds.push(Build::new(
            "baseline build",
            PathBuf::from(other),
            work.path(),
        ));
    }
    for build in &builds {
        for (_, dir) in &sets {
            build.approve_all(dir);
            // Compile, then start again once every file has settled, so the
            // timed starts find the cache as a user's second day does.
            build.list(dir);
        }
    }
    std::thread::sleep(Duration::from_millis(2500));
    for build in &builds {
        for (_, dir) in &sets {
            build.list(dir);
        }
    }

    println!("load average {}", support::load_average());
    for build in &builds {
        let floor = median(|| build.time(&["--version"]));
        println!("{}: `cordon --version` {:.1} ms", build.label, ms(floor));
        for (label, dir) in &sets {
            let start =
                median(|| build.time(&["tool", "list", "--plugins", &dir.to_string_lossy()]));
            println!(
                "{}: spawn to listing, {label}: {:.1} ms ({:.2}x `cordon --version`)",
                build.label,
                ms(start),
                start.as_secs_f64() / floor.as_secs_f64()
            );
        }
    }
    if let [this, baseline] = builds.as_slice() {
        for (label, dir) in &sets {
            let args = ["tool", "list", "--plugins", &dir.to_string_lossy()];
            let (mine, theirs) = (median(|| this.time(&args)), median(|| baseline.time(&args)));
            println!(
                "RATIO {label}: this build / baseline build {:.2} ({:.1} vs {:.1} ms)",
                mine.as_secs_f64() / theirs.as_secs_f64(),
                ms(mine),
                ms(theirs)
            );
        }
    }
}

/// One `cordon` binary, with a cache and home of its own.
struct Build {
    label: &'static str,
    binary: PathBuf,
    home: PathBuf,
}

impl Build {
    fn new(label: &'static str, binary: PathBuf, work: &Path) -> Self {
        let home = work.join(label.replace(' ', "-"));
        std::fs::create_dir_all(home.join("project")).expect("home");
        Self {
            label,
            binary,
            home,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            // The workspace: the cache and the rest lie outside it.
            .current_dir(self.home.join("project"))
            .env("CORDON_CACHE_DIR", self.home.join("cache"))
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("XDG_STATE_HOME", self.home.join("state"))
            .env("HOME", &self.home)
            .env_remove("CORDON_PLUGINS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    /// Approve what every bundle in `dir` asks for.
    fn approve_all(&self, dir: &Path) {
        for bundle in std::fs::read_dir(dir).expect("bundles").flatten() {
            let name = std::fs::read_to_string(bundle.path().join("plugin.toml"))
                .ok()
                .and_then(|text| text.parse::<toml::Table>().ok())
                .and_then(|manifest| manifest["plugin"]["name"].as_str().map(str::to_owned))
                .expect("a manifest naming its bundle");
            let plugins = dir.to_string_lossy();
            self.command(&["grants", "approve", &name, "--plugins", &plugins, "--yes"])
                .status()
                .expect("approve");
        }
    }

    /// List the tools of `dir`'s bundles, which must all load.
    fn list(&self, dir: &Path) {
        let plugins = dir.to_string_lossy();
        let output = self
            .command(&["plugins", "check", &plugins])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .expect("check");
        assert!(
            output.status.success(),
            "{}: {}{}",
            self.label,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// How long `cordon args` takes from spawn to exit; it must succeed.
    fn time(&self, args: &[&str]) -> Duration {
        let started = Instant::now();
        let status = self.command(args).status().expect("spawn cordon");
        let took = started.elapsed();
        assert!(status.success(), "{}: cordon {args:?}", self.label);
        took
    }
}

/// Bundle folder `from` copied to `to`: its manifest and its component.
fn copy_bundle(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("bundle folder");
    let manifest = std::fs::read_to_string(from.join("plugin.toml")).expect("manifest");
    let component = manifest
        .parse::<toml::Table>()
        .ok()
        .and_then(|table| table["plugin"]["component"].as_str().map(str::to_owned))
        .expect("a manifest naming its component");
    std::fs::write(to.join("plugin.toml"), &manifest).expect("write manifest");
    std::fs::copy(from.join(&component), to.join(&component)).unwrap_or_else(|error| {
        panic!(
            "{}: {error}; run the test command first",
            from.join(&component).display()
        )
    });
}

/// A test fixture as bundle `name`, with no grants.
fn fixture(plugins: &Path, name: &str, component: &str) {
    let dir = plugins.join(name);
    std::fs::create_dir_all(&dir).expect("fixture folder");
    std::fs::write(
        dir.join("plugin.toml"),
        format!("[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n"),
    )
    .expect("fixture manifest");
    std::fs::copy(component, dir.join("tool.wasm")).expect("fixture component");
}

fn median(mut sample: impl FnMut() -> Duration) -> Duration {
    let mut samples: Vec<Duration> = (0..STARTS).map(|_| sample()).collect();
    samples.sort();
    samples[STARTS / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
