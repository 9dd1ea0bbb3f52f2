//! Builds every guest crate for `wasm32-wasip2` in the `guest` profile with a nested
//! `cargo build`, in a target directory of its own under `OUT_DIR`, and writes
//! `artifacts.rs` with a constant holding the absolute path of each component.

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";
/// The workspace profile for components: optimized, without debug info.
const PROFILE: &str = "guest";

/// A guest crate: the constant naming its component, its package, and the file
/// cargo writes.
struct Guest {
    constant: &'static str,
    package: &'static str,
    file: &'static str,
    doc: &'static str,
}

const GUESTS: &[Guest] = &[
    Guest {
        constant: "JQ",
        package: "cordon-plugin-jq",
        file: "cordon_plugin_jq.wasm",
        doc: "The bundled `jq` plugin.",
    },
    Guest {
        constant: "FILES",
        package: "cordon-plugin-files",
        file: "cordon_plugin_files.wasm",
        doc: "The bundled `files` plugin.",
    },
    Guest {
        constant: "NOTES",
        package: "cordon-plugin-notes",
        file: "cordon_plugin_notes.wasm",
        doc: "The bundled `notes` plugin.",
    },
    Guest {
        constant: "REDACTOR",
        package: "cordon-plugin-redactor",
        file: "cordon_plugin_redactor.wasm",
        doc: "The bundled `redactor` hook plugin.",
    },
    Guest {
        constant: "GUARD",
        package: "cordon-plugin-guard",
        file: "cordon_plugin_guard.wasm",
        doc: "The bundled `guard` hook plugin.",
    },
    Guest {
        constant: "BUDGET",
        package: "cordon-plugin-budget",
        file: "cordon_plugin_budget.wasm",
        doc: "The bundled `budget` hook plugin.",
    },
    Guest {
        constant: "DIR",
        package: "cordon-plugin-dir",
        file: "cordon_plugin_dir.wasm",
        doc: "The bundled sandbox backend, behind both the `dir` and the `memory` bundles.",
    },
    Guest {
        constant: "HTTP",
        package: "cordon-plugin-http",
        file: "cordon_plugin_http.wasm",
        doc: "The bundled `http` plugin.",
    },
    Guest {
        constant: "MCP_FIXTURES",
        package: "cordon-guest-mcp-fixtures",
        file: "cordon_guest_mcp_fixtures.wasm",
        doc: "The `test` bundle the MCP tests and the MCP conformance suite call.",
    },
    Guest {
        constant: "HOSTILE_NET",
        package: "cordon-guest-hostile-net",
        file: "cordon_guest_hostile_net.wasm",
        doc: "The hostile network fixture: every way a component reaches out, through wasi:http and wasi:sockets.",
    },
    Guest {
        constant: "HOSTILE",
        package: "cordon-guest-hostile",
        file: "cordon_guest_hostile.wasm",
        doc: "The hostile tool fixture: one tool per forbidden attempt.",
    },
    Guest {
        constant: "HOSTILE_HOOKS",
        package: "cordon-guest-hostile-hooks",
        file: "cordon_guest_hostile_hooks.wasm",
        doc: "The hostile hook fixture: every phase, behaviour chosen by `[config] mode`.",
    },
    Guest {
        constant: "HOSTILE_BACKEND",
        package: "cordon-guest-hostile-backend",
        file: "cordon_guest_hostile_backend.wasm",
        doc: "The hostile sandbox backend: `read(ATTEMPT)` tries one forbidden thing.",
    },
    Guest {
        constant: "NOT_A_TOOL",
        package: "cordon-guest-not-a-tool",
        file: "cordon-guest-not-a-tool.wasm",
        doc: "A WASI command component: the wrong world for a tool bundle.",
    },
    Guest {
        constant: "BAD_DESCRIBE",
        package: "cordon-guest-bad-describe",
        file: "cordon_guest_bad_describe.wasm",
        doc: "A tool component whose describe output breaks the contract.",
    },
];

/// Directories and files whose changes call for rebuilding the guests.
const INPUTS: &[&str] = &[
    "sdk/rust",
    "sdk/sandbox-kit",
    "wit",
    "plugins",
    "tests/guests",
    "Cargo.toml",
    "Cargo.lock",
    ".cargo/config.toml",
];

fn main() {
    let manifest_dir = PathBuf::from(required_env("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(required_env("OUT_DIR"));
    let Some(root) = manifest_dir.parent().and_then(Path::parent) else {
        fail(&format!(
            "cannot find the workspace root above {}",
            manifest_dir.display()
        ));
    };
    for input in INPUTS {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }

    let target_dir = out_dir.join("guests");
    let mut generated = String::new();
    for guest in GUESTS {
        build(root, &target_dir, guest.package);
        let wasm = target_dir.join(TARGET).join(PROFILE).join(guest.file);
        if !wasm.is_file() {
            fail(&format!(
                "building {} succeeded but {} is missing",
                guest.package,
                wasm.display()
            ));
        }
        define(&mut generated, guest.constant, guest.doc, &wasm);
    }
    define(
        &mut generated,
        "PLUGINS_DIR",
        "The repository's `plugins/` folder, one bundle folder per plugin.",
        &root.join("plugins"),
    );
    define(
        &mut generated,
        "EXAMPLE_TOOLS_DIR",
        "The repository's `examples/tools/` folder: tools in other languages, each \
         built in its own folder by `cordon build` (the test command builds them).",
        &root.join("examples/tools"),
    );
    define(
        &mut generated,
        "EXAMPLE_SKILLS_DIR",
        "The repository's `examples/skills/` folder: skills, whose tool bundles the \
         test command builds with `cordon build`.",
        &root.join("examples/skills"),
    );
    define(
        &mut generated,
        "LANGUAGE_GUESTS_DIR",
        "The fixtures written in other languages, in `tests/guests/`, built like the \
         example tools.",
        &root.join("tests/guests"),
    );
    let artifacts = out_dir.join("artifacts.rs");
    if let Err(error) = std::fs::write(&artifacts, generated) {
        fail(&format!("cannot write {}: {error}", artifacts.display()));
    }
}

/// Runs `cargo build --profile guest --target wasm32-wasip2 -p <package>` for the workspace
/// at `root`, with none of the outer build's flags, wrappers or profile overrides.
fn build(root: &Path, target_dir: &Path, package: &str) {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut command = Command::new(cargo);
    command
        .arg("build")
        .args(["--profile", PROFILE])
        .args(["--target", TARGET, "--package", package])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"));
    for (key, _) in env::vars_os() {
        if key.to_str().is_some_and(inherited_setting) {
            command.env_remove(key);
        }
    }
    command.env("CARGO_TARGET_DIR", target_dir);
    match command.status() {
        Ok(status) if status.success() => {}
        Ok(status) => fail(&format!(
            "building guest crate {package} for {TARGET} failed ({status}); see the cargo \
             output above. If the target is missing, run `rustup target add {TARGET}`."
        )),
        Err(error) => fail(&format!(
            "cannot run cargo to build guest crate {package}: {error}"
        )),
    }
}

/// Whether an environment variable set for this build script would change how the
/// nested build compiles or where it writes.
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

fn define(generated: &mut String, constant: &str, doc: &str, path: &Path) {
    let path = path.display().to_string();
    generated.push_str(&format!(
        "/// {doc}\npub const {constant}: &str = {path:?};\n"
    ));
}

fn required_env(name: &str) -> OsString {
    env::var_os(name).unwrap_or_else(|| fail(&format!("cargo did not set {name}")))
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1);
}
