//! Builds every guest crate for `wasm32-wasip2` (see `cordon-guest-build`):
//! the bundled plugins as the one set the host's build makes them, then the
//! test fixtures, and writes `artifacts.rs` with a constant holding the
//! absolute path of each component.

use std::path::Path;

use cordon_guest_build::{Guest, Guests};

/// A fixture: the guest it builds, and the constant and doc naming its component.
struct Fixture {
    guest: Guest,
    constant: &'static str,
    doc: &'static str,
}

const fn fixture(
    constant: &'static str,
    package: &'static str,
    file: &'static str,
    doc: &'static str,
) -> Fixture {
    Fixture {
        guest: Guest {
            name: constant,
            package,
            file,
        },
        constant,
        doc,
    }
}

const FIXTURES: &[Fixture] = &[
    fixture(
        "MCP_FIXTURES",
        "cordon-guest-mcp-fixtures",
        "cordon_guest_mcp_fixtures.wasm",
        "The `test` bundle the MCP tests and the MCP conformance suite call.",
    ),
    fixture(
        "HOSTILE_NET",
        "cordon-guest-hostile-net",
        "cordon_guest_hostile_net.wasm",
        "The hostile network fixture: every way a component reaches out, through wasi:http and wasi:sockets.",
    ),
    fixture(
        "HOSTILE",
        "cordon-guest-hostile",
        "cordon_guest_hostile.wasm",
        "The hostile tool fixture: one tool per forbidden attempt.",
    ),
    fixture(
        "HOSTILE_HOOKS",
        "cordon-guest-hostile-hooks",
        "cordon_guest_hostile_hooks.wasm",
        "The hostile hook fixture: every phase, behaviour chosen by `[config] mode`.",
    ),
    fixture(
        "HOSTILE_BACKEND",
        "cordon-guest-hostile-backend",
        "cordon_guest_hostile_backend.wasm",
        "The hostile sandbox backend: `read(ATTEMPT)` tries one forbidden thing.",
    ),
    fixture(
        "NOT_A_TOOL",
        "cordon-guest-not-a-tool",
        "cordon-guest-not-a-tool.wasm",
        "A WASI command component: the wrong world for a tool bundle.",
    ),
    fixture(
        "IMPOSTOR",
        "cordon-guest-impostor",
        "cordon_guest_impostor.wasm",
        "A third party's tool component passing itself off as the bundled `files` plugin.",
    ),
    fixture(
        "BAD_DESCRIBE",
        "cordon-guest-bad-describe",
        "cordon_guest_bad_describe.wasm",
        "A tool component whose describe output breaks the contract.",
    ),
];

fn main() {
    if let Err(error) = generate() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn generate() -> Result<(), String> {
    let guests = Guests::from_build_script().map_err(|error| error.to_string())?;
    let root = guests.root().to_owned();
    let mut generated = String::new();
    for (guest, wasm) in guests.build_bundled().map_err(|error| error.to_string())? {
        let constant = guest.name.to_ascii_uppercase();
        let doc = match guest.name {
            "dir" => "The bundled sandbox backend, behind both the `dir` and the `memory` bundles."
                .to_owned(),
            name => format!("The bundled `{name}` plugin."),
        };
        define(&mut generated, &constant, &doc, &wasm);
    }
    let fixtures: Vec<Guest> = FIXTURES.iter().map(|fixture| fixture.guest).collect();
    let built = guests
        .build("the test fixtures", &fixtures)
        .map_err(|error| error.to_string())?;
    for (fixture, (_, wasm)) in FIXTURES.iter().zip(built) {
        define(&mut generated, fixture.constant, fixture.doc, &wasm);
    }
    define(
        &mut generated,
        "COMPILED_DIR",
        "A compile cache every test process of the run shares (and the next run \
         finds): entries are keyed by content, sealed with the key beside it and \
         written atomically, so each component is compiled once.",
        &guests.shared_tmp().join("cordon-tests-compiled"),
    );
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
    let out_dir = std::env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?;
    let artifacts = Path::new(&out_dir).join("artifacts.rs");
    std::fs::write(&artifacts, generated)
        .map_err(|error| format!("cannot write {}: {error}", artifacts.display()))
}

fn define(generated: &mut String, constant: &str, doc: &str, path: &Path) {
    let path = path.display().to_string();
    generated.push_str(&format!(
        "/// {doc}\npub const {constant}: &str = {path:?};\n"
    ));
}
