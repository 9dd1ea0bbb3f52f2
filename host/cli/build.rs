//! The `cordon` binary embeds Cordon's WIT, the SDKs and the bundle templates
//! (`sdk.rs`); rebuild it when any of them changes.

fn main() {
    for input in ["../../wit", "../../sdk", "../../Cargo.toml"] {
        println!("cargo:rerun-if-changed={input}");
    }
}
