//! The plugins bundled with Cordon, as this build of Cordon made them.
//!
//! A bundle is one of Cordon's own only when its component is, byte for
//! byte, the component this build compiled from `plugins/NAME`: the build
//! script compiles them and records each one's SHA-256 here, beside the
//! manifest the repository gives it. A bundle that merely takes a bundled
//! plugin's name is anybody's bundle: not trusted, and approved for nothing.
//!
//! The host reads the list through `cordon_wasm::BundledPlugins`.

/// One bundled plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plugin {
    /// Its bundle name.
    pub name: &'static str,
    /// Its `plugin.toml`, as this repository has it.
    pub manifest: &'static str,
    /// The SHA-256 of the component this build made, lowercase hex.
    pub sha256: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/plugins.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_plugin_has_a_manifest_naming_it_and_a_digest() {
        assert!(PLUGINS.len() >= 9, "{PLUGINS:?}");
        for plugin in PLUGINS {
            assert!(
                plugin
                    .manifest
                    .contains(&format!("name = \"{}\"", plugin.name)),
                "{}",
                plugin.name
            );
            assert_eq!(plugin.sha256.len(), 64, "{}", plugin.name);
            assert!(
                plugin
                    .sha256
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
        }
        let digest = |name: &str| PLUGINS.iter().find(|p| p.name == name).map(|p| p.sha256);
        assert_eq!(
            digest("memory"),
            digest("dir"),
            "memory runs the dir component"
        );
        assert_ne!(digest("jq"), digest("files"));
    }
}
