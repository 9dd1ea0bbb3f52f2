//! Building guest components from a build script, the one way Cordon does it.
//! The `cordon-guest-build` binary runs the same build of the bundled plugins
//! from a script, with cargo's progress on its terminal, so that the build
//! script after it finds them built (`scripts/build-plugins.sh`).
//!
//! A nested `cargo build --profile guest --target wasm32-wasip2` compiles
//! the guest crates of the workspace into one folder shared by every build
//! script and every profile of the outer build (`<target>/guests`), so a
//! component is built once however many crates need it.
//!
//! The bundled plugins ([`BUNDLED`]) are always built together, as one set:
//! Cargo unifies features across the packages of one build, so building them
//! alone or beside other guests could give other bytes. Paths under the
//! guests' folder are remapped, so the same sources give the same bytes
//! wherever the build happens: the digests the host is built with (see
//! `cordon-bundled`) are those of the components `scripts/build-plugins.sh`
//! copies into `plugins/` and those the tests load.

use std::env;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target guests are built for.
pub const TARGET: &str = "wasm32-wasip2";
/// The workspace profile for components: optimized, without debug info.
pub const PROFILE: &str = "guest";

/// One guest crate and the component it builds.
#[derive(Debug, Clone, Copy)]
pub struct Guest {
    /// The name it goes by: a bundled plugin's bundle name.
    pub name: &'static str,
    /// Its Cargo package.
    pub package: &'static str,
    /// The file Cargo writes.
    pub file: &'static str,
}

/// The plugins bundled with Cordon, built from `plugins/NAME`. The `memory`
/// bundle runs the `dir` component under a manifest of its own.
pub const BUNDLED: &[Guest] = &[
    bundled("jq", "cordon-plugin-jq", "cordon_plugin_jq.wasm"),
    bundled("files", "cordon-plugin-files", "cordon_plugin_files.wasm"),
    bundled("notes", "cordon-plugin-notes", "cordon_plugin_notes.wasm"),
    bundled(
        "redactor",
        "cordon-plugin-redactor",
        "cordon_plugin_redactor.wasm",
    ),
    bundled("guard", "cordon-plugin-guard", "cordon_plugin_guard.wasm"),
    bundled(
        "budget",
        "cordon-plugin-budget",
        "cordon_plugin_budget.wasm",
    ),
    bundled("dir", "cordon-plugin-dir", "cordon_plugin_dir.wasm"),
    bundled("http", "cordon-plugin-http", "cordon_plugin_http.wasm"),
];

const fn bundled(name: &'static str, package: &'static str, file: &'static str) -> Guest {
    Guest {
        name,
        package,
        file,
    }
}

/// The bundles that run another bundled plugin's component: `(bundle,
/// the plugin whose component it runs)`.
pub const SHARED_COMPONENTS: &[(&str, &str)] = &[("memory", "dir")];

/// The variable naming the file the test command collects each phase's
/// time in.
const TIMINGS: &str = "CORDON_TIMINGS";

/// What the guest builds read: a change to any of them builds them again.
pub const INPUTS: &[&str] = &[
    "sdk/rust",
    "sdk/sandbox-kit",
    "sdk/paths",
    "wit",
    "plugins",
    "tests/guests",
    "Cargo.toml",
    "Cargo.lock",
    ".cargo/config.toml",
];

/// Why a guest build failed.
#[derive(Debug)]
pub struct BuildError(String);

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The workspace a build script's crate lies in, and where guests are built.
#[derive(Debug, Clone)]
pub struct Guests {
    root: PathBuf,
    target_dir: PathBuf,
}

impl Guests {
    /// The workspace two folders above the crate at `CARGO_MANIFEST_DIR`,
    /// with guests built under the outer build's target folder (found above
    /// `OUT_DIR` by the `CACHEDIR.TAG` Cargo keeps there), or under `OUT_DIR`
    /// when there is none. Tells Cargo to run the build script again when an
    /// input of the guests changes.
    pub fn from_build_script() -> Result<Self, BuildError> {
        let manifest_dir = PathBuf::from(required_env("CARGO_MANIFEST_DIR")?);
        let out_dir = PathBuf::from(required_env("OUT_DIR")?);
        let root = manifest_dir
            .parent()
            .and_then(Path::parent)
            .ok_or_else(|| {
                BuildError(format!(
                    "cannot find the workspace root above {}",
                    manifest_dir.display()
                ))
            })?
            .to_owned();
        for input in INPUTS {
            println!("cargo:rerun-if-changed={}", root.join(input).display());
        }
        let target_dir = out_dir
            .ancestors()
            .find(|dir| dir.join("CACHEDIR.TAG").is_file())
            .unwrap_or(&out_dir)
            .join("guests");
        Ok(Self { root, target_dir })
    }

    /// The workspace `root`, with guests built under the target folder a
    /// cargo command run there uses (`CARGO_TARGET_DIR`, else `target`), as
    /// the build scripts of that build find it.
    pub fn for_workspace(root: &Path) -> Self {
        let target = env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .map_or_else(|| root.join("target"), |dir| root.join(dir));
        Self {
            root: root.to_owned(),
            target_dir: target.join("guests"),
        }
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The outer build's folder for temporary files its tests share
    /// (`<target>/tmp`, as `CARGO_TARGET_TMPDIR` names it for test code).
    pub fn shared_tmp(&self) -> PathBuf {
        self.target_dir
            .parent()
            .map_or_else(|| self.target_dir.join("tmp"), |target| target.join("tmp"))
    }

    /// The bundled plugins, built as one set; each with its component.
    pub fn build_bundled(&self) -> Result<Vec<(Guest, PathBuf)>, BuildError> {
        self.build("the bundled plugins", BUNDLED)
    }

    /// `guests`, which `what` names, built in one nested `cargo build`; each
    /// with its component. Never give it some of the bundled plugins with
    /// other guests: build them with [`Guests::build_bundled`]. When the
    /// environment names a timings file (`CORDON_TIMINGS`, as the test
    /// command sets it), how long the build took is added to it.
    pub fn build(&self, what: &str, guests: &[Guest]) -> Result<Vec<(Guest, PathBuf)>, BuildError> {
        let started = std::time::Instant::now();
        let built = self.nested_build(guests);
        if let Some(timings) = env::var_os(TIMINGS) {
            let line = format!(
                "guests: {what} (during the test build)\t{}\n",
                started.elapsed().as_secs()
            );
            // Only a report: a timings file that cannot be written changes nothing.
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(timings)
                .and_then(|mut file| std::io::Write::write_all(&mut file, line.as_bytes()));
        }
        built
    }

    fn nested_build(&self, guests: &[Guest]) -> Result<Vec<(Guest, PathBuf)>, BuildError> {
        let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
        let mut command = Command::new(cargo);
        command
            .arg("build")
            .args(["--profile", PROFILE, "--target", TARGET])
            .arg("--manifest-path")
            .arg(self.root.join("Cargo.toml"))
            // Appended to the workspace's own flags for the target.
            .arg("--config")
            .arg(format!(
                "target.{TARGET}.rustflags = [\"--remap-path-prefix={}=/guests\"]",
                self.target_dir.display()
            ));
        for guest in guests {
            command.args(["--package", guest.package]);
        }
        for (key, _) in env::vars_os() {
            if key.to_str().is_some_and(inherited_setting) {
                command.env_remove(key);
            }
        }
        command.env("CARGO_TARGET_DIR", &self.target_dir);
        let packages: Vec<&str> = guests.iter().map(|guest| guest.package).collect();
        let packages = packages.join(", ");
        match command.status() {
            Ok(status) if status.success() => {}
            Ok(status) => {
                return Err(BuildError(format!(
                    "building the guest crates {packages} for {TARGET} failed ({status}); see the \
                     cargo output above. If the target is missing, run `rustup target add {TARGET}`."
                )));
            }
            Err(error) => {
                return Err(BuildError(format!(
                    "cannot run cargo to build the guest crates {packages}: {error}"
                )));
            }
        }
        guests
            .iter()
            .map(|guest| {
                let wasm = self.target_dir.join(TARGET).join(PROFILE).join(guest.file);
                if wasm.is_file() {
                    Ok((*guest, wasm))
                } else {
                    Err(BuildError(format!(
                        "building {} succeeded but {} is missing",
                        guest.package,
                        wasm.display()
                    )))
                }
            })
            .collect()
    }
}

fn required_env(name: &str) -> Result<OsString, BuildError> {
    env::var_os(name).ok_or_else(|| BuildError(format!("cargo did not set {name}")))
}

/// Whether an environment variable set for the outer build would change how
/// the nested build compiles or where it writes.
fn inherited_setting(key: &str) -> bool {
    matches!(
        key,
        "RUSTFLAGS"
            | "RUSTDOCFLAGS"
            | "CARGO_ENCODED_RUSTFLAGS"
            | "CARGO_ENCODED_RUSTDOCFLAGS"
            | "RUSTC_WRAPPER"
            | "RUSTC_WORKSPACE_WRAPPER"
    ) || key.starts_with("CARGO_BUILD_")
        || key.starts_with("CARGO_PROFILE_")
        || key.starts_with("CARGO_TARGET_")
}
