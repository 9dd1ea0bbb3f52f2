//! The `cordon` binary embeds Cordon's WIT, the SDKs and the bundle templates
//! (`embedded.rs`); rebuild it when any of them changes. It also embeds the Go
//! runtime package (`go.bytecodealliance.org/pkg`) that Go bindings import,
//! which ships inside the `wit-bindgen-go` crate: `CORDON_GO_PKG` names that
//! crate's copy, or an empty folder when the crate's source is not in Cargo's
//! registry (then `cordon sdk bindings go` says so). `CORDON_SOURCE_ROOT`
//! names the source tree, whose `plugins/` `cordon plugins install --bundled`
//! installs.

use std::path::{Path, PathBuf};

/// The `wit-bindgen-go` release the workspace pins.
const WIT_BINDGEN_GO: &str = "wit-bindgen-go-0.61.1";

fn main() {
    for input in [
        "../../wit",
        "../../sdk",
        "../../plugins/dir/src",
        "../../Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={input}");
    }
    let go_pkg = registry_sources()
        .map(|source| source.join(WIT_BINDGEN_GO).join("src/pkg"))
        .find(|pkg| pkg.join("wit/runtime").is_dir())
        .unwrap_or_else(|| {
            let empty =
                PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("no-go-pkg");
            std::fs::create_dir_all(empty.join("wit")).expect("create an empty folder");
            std::fs::write(empty.join("LICENSE"), "").expect("write an empty licence");
            empty
        });
    println!("cargo:rustc-env=CORDON_GO_PKG={}", go_pkg.display());
    // Where `cordon plugins install --bundled` finds the bundled plugins: the
    // source tree this binary is built from.
    let source = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let root = source.parent().and_then(Path::parent).unwrap_or(&source);
    println!("cargo:rustc-env=CORDON_SOURCE_ROOT={}", root.display());
}

/// Every `registry/src/*` folder of Cargo's home.
fn registry_sources() -> impl Iterator<Item = PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    home.and_then(|home| std::fs::read_dir(home.join("registry/src")).ok())
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
}
