//! `cargo run -p cordon-guest-build`: the bundled plugins built for
//! `wasm32-wasip2` exactly as the build script of `cordon-bundled` builds
//! them, with cargo's progress shown as it goes. A build script's own output
//! waits until it is done, so a script that wants the build seen runs this
//! first; the build script after it finds every component built.

use std::path::Path;
use std::process::ExitCode;

use cordon_guest_build::Guests;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    match Guests::for_workspace(&root).build_bundled() {
        Ok(built) => {
            for (guest, wasm) in built {
                println!("{}: {}", guest.name, wasm.display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
