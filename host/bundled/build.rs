//! Builds the bundled plugins for `wasm32-wasip2` (see `cordon-guest-build`)
//! and writes `plugins.rs`: each plugin's name, its manifest as this
//! repository has it, and the SHA-256 of the component this build made.

use std::path::Path;

use cordon_guest_build::{Guests, SHARED_COMPONENTS};
use sha2::{Digest, Sha256};

fn main() {
    if let Err(error) = generate() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn generate() -> Result<(), String> {
    let guests = Guests::from_build_script().map_err(|error| error.to_string())?;
    let built = guests.build_bundled().map_err(|error| error.to_string())?;
    let mut plugins = Vec::new();
    for (guest, wasm) in &built {
        let bytes = std::fs::read(wasm)
            .map_err(|error| format!("cannot read {}: {error}", wasm.display()))?;
        plugins.push((guest.name, hex::encode(Sha256::digest(&bytes))));
    }
    for (bundle, runs) in SHARED_COMPONENTS {
        let digest = plugins
            .iter()
            .find(|(name, _)| name == runs)
            .map(|(_, digest)| digest.clone())
            .ok_or_else(|| format!("`{bundle}` runs `{runs}`, which is not built"))?;
        plugins.push((bundle, digest));
    }
    let mut generated =
        String::from("/// Every bundled plugin, by name.\npub const PLUGINS: &[Plugin] = &[\n");
    for (name, digest) in &plugins {
        let manifest = guests.root().join("plugins").join(name).join("plugin.toml");
        if !manifest.is_file() {
            return Err(format!("{} is missing", manifest.display()));
        }
        generated.push_str(&format!(
            "    Plugin {{ name: {name:?}, manifest: include_str!({:?}), sha256: {digest:?} }},\n",
            manifest.display().to_string()
        ));
    }
    generated.push_str("];\n");
    let out = Path::new(&std::env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?)
        .join("plugins.rs");
    std::fs::write(&out, generated)
        .map_err(|error| format!("cannot write {}: {error}", out.display()))
}
