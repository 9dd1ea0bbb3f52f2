//! Which bundles are Cordon's own, judged by their bytes.
//!
//! The plugins bundled with Cordon are the components this build made (the
//! `cordon-bundled` crate records each one's digest when Cordon is built).
//! A bundle is [`Provenance::Bundled`] only when its component has that
//! digest; a bundle that merely takes a bundled plugin's name is
//! [`Provenance::NamedLikeBundled`]: anybody's code, trusted by nobody and
//! approved for nothing until the operator says so. A bundled plugin comes
//! approved for what its manifest as shipped asks, but for the network, which
//! only the operator grants; a change to that manifest needs the operator's
//! approval like any other bundle's.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use crate::manifest::{Grants, Manifest, ManifestError};
use crate::pin::Pinned;

/// The plugins this build of Cordon ships, by name.
#[derive(Debug, Clone, Default)]
pub struct BundledPlugins {
    plugins: BTreeMap<String, Shipped>,
}

/// One bundled plugin as shipped.
#[derive(Debug, Clone)]
pub struct Shipped {
    /// The digest of the component this build made, lowercase hex.
    pub sha256: String,
    /// What it comes approved for: what its manifest asks, but the network.
    pub grants: Grants,
    /// Its manifest as shipped, as an approval pins it.
    pub pinned: Pinned,
}

/// Where a bundle's component comes from, judged by its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// The component this build of Cordon made for a bundled plugin of the
    /// bundle's name.
    Bundled,
    /// Named like a bundled plugin, with another component: a third party's.
    NamedLikeBundled,
    /// A third party's bundle under a name of its own, or a skill's bundle.
    ThirdParty,
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Bundled => "bundled",
            Self::NamedLikeBundled => "third-party, named like a bundled plugin",
            Self::ThirdParty => "third-party",
        })
    }
}

impl BundledPlugins {
    /// No bundle is Cordon's own: for an embedder that ships none.
    pub fn none() -> Self {
        Self::default()
    }

    /// The plugins `(name, manifest text, component SHA-256)`.
    pub fn new<'a>(
        plugins: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    ) -> Result<Self, ManifestError> {
        let mut shipped = BTreeMap::new();
        for (name, text, sha256) in plugins {
            let file = Path::new(name).join(crate::manifest::MANIFEST_FILE);
            let manifest = Manifest::parse(&file, text)?;
            let grants = Grants {
                network: Vec::new(),
                ..manifest.grants
            };
            let pinned = Pinned::of(&file, text)?;
            shipped.insert(
                name.to_owned(),
                Shipped {
                    sha256: sha256.to_ascii_lowercase(),
                    grants,
                    pinned,
                },
            );
        }
        Ok(Self { plugins: shipped })
    }

    /// The names of the bundled plugins.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.plugins.keys().map(String::as_str)
    }

    /// Where the component of bundle `name`, whose SHA-256 is `digest`,
    /// comes from. A skill's bundle is never Cordon's own.
    pub fn provenance(&self, name: &str, digest: &str, skill: bool) -> Provenance {
        match self.plugins.get(name) {
            _ if skill => Provenance::ThirdParty,
            Some(shipped) if shipped.sha256 == digest => Provenance::Bundled,
            Some(_) => Provenance::NamedLikeBundled,
            None => Provenance::ThirdParty,
        }
    }

    /// The bundled plugin `name` as shipped, when the component whose
    /// SHA-256 is `digest` is the one this build made for it.
    pub fn matching(&self, name: &str, digest: &str) -> Option<&Shipped> {
        self.plugins
            .get(name)
            .filter(|shipped| shipped.sha256 == digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: &str = "[plugin]\nname = \"files\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"files.wasm\"\n\
        [[grants.dirs]]\nhost = \".\"\nguest = \"/workspace\"\nmode = \"ro\"\n";

    #[test]
    fn a_bundle_is_bundled_by_its_bytes_and_never_by_its_name() {
        let digest = "a".repeat(64);
        let bundled = BundledPlugins::new([("files", FILES, digest.as_str())]).unwrap();
        assert_eq!(
            bundled.provenance("files", &digest, false),
            Provenance::Bundled
        );
        assert_eq!(
            bundled.provenance("files", &"b".repeat(64), false),
            Provenance::NamedLikeBundled
        );
        assert_eq!(
            bundled.provenance("files", &digest, true),
            Provenance::ThirdParty
        );
        assert_eq!(
            bundled.provenance("maps", &digest, false),
            Provenance::ThirdParty
        );
        assert!(bundled.matching("files", &"b".repeat(64)).is_none());
        let shipped = bundled.matching("files", &digest).unwrap();
        assert_eq!(shipped.grants.dirs.len(), 1);
    }

    #[test]
    fn a_bad_bundled_manifest_is_named() {
        let error = BundledPlugins::new([("files", "[plugin]\n", "a")]).unwrap_err();
        assert!(
            error.to_string().starts_with("files/plugin.toml"),
            "{error}"
        );
    }
}
