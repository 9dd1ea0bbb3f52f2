//! Operator grants, the second key: a manifest asks for grants, and the
//! operator approves them, bundle by bundle, for exact bytes: the
//! component's SHA-256 and the manifest as it was approved (every table but
//! the grants, see [`Pinned`], and the grants as approved or fewer). A
//! bundle is loaded only when everything it asks for is approved for exactly
//! its component and manifest: one that asks for more than was approved, or
//! whose component or manifest changed since, is refused, and the refusal
//! names each grant beyond the approval or each value that changed. A bundle
//! that asks for nothing needs no approval, unless it has one, which then
//! holds. The plugins bundled with Cordon come approved for what their
//! manifests as shipped ask, for the components this build made (see
//! [`BundledPlugins`]), and for nothing more: a change to their manifest
//! needs the operator's approval, and a bundle that only takes one's name is
//! a third party's, which needs the operator's approval whatever it asks.
//!
//! The operator keeps approvals in a file where no component reaches
//! (`.cordon/grants.toml`), written by `cordon grants approve`:
//!
//! ```toml
//! [bundles.weather]
//! sha256 = "<64 hex digits>"
//! [bundles.weather.grants]
//! env = ["LANG"]
//! [[bundles.weather.grants.dirs]]
//! host = "."
//! guest = "/workspace"
//! mode = "ro"
//! [bundles.weather.manifest.plugin]      # the manifest as approved
//! name = "weather"
//! # ...
//! ```
//!
//! A skill's tool bundles are named `SKILL/BUNDLE` here.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::bundled::{BundledPlugins, Provenance};
use crate::manifest::Grants;
use crate::pin::Pinned;

/// Where a project keeps its approvals.
pub const GRANTS_FILE: &str = ".cordon/grants.toml";

/// What the operator approved for one bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// The component's SHA-256 when it was approved, lowercase hex.
    pub sha256: String,
    /// The grants approved.
    #[serde(default)]
    pub grants: Grants,
    /// The manifest as approved, but for its grants; absent from an
    /// approval written before approvals pinned the manifest, which no
    /// longer lets anything load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<Pinned>,
}

/// What a bundle presents to the operator's check: who it is, what its
/// component is and what its manifest says and asks.
#[derive(Debug, Clone, Copy)]
pub struct Presented<'a> {
    /// Its name as approvals name it: `SKILL/NAME` for a skill's bundle.
    pub id: &'a str,
    /// Its manifest's name.
    pub name: &'a str,
    /// Whether a skill ships it.
    pub skill: bool,
    /// Its component's SHA-256, lowercase hex.
    pub digest: &'a str,
    /// What it asks for.
    pub grants: &'a Grants,
    /// Its manifest as an approval pins it.
    pub manifest: &'a Pinned,
}

/// How a bundle passed the operator's half of the two keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Admission {
    /// Approvals are not checked: whoever loads it is its own operator, as
    /// an embedder is.
    Unchecked,
    /// The component this build made for a bundled plugin of its name, with
    /// the manifest it ships with, asking for no more than that.
    Bundled,
    /// The operator approved exactly this component and this manifest.
    Approved,
    /// It asks for nothing, so it needs no approval, and has none.
    AsksNothing,
}

impl fmt::Display for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unchecked => "approvals not checked",
            Self::Bundled => "bundled with Cordon",
            Self::Approved => "approved by the operator",
            Self::AsksNothing => "asks for nothing",
        })
    }
}

/// A bundle the operator's check lets load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// How it was let in.
    pub admission: Admission,
    /// The network origins it is granted.
    pub network: Vec<String>,
}

/// What a refusal compares a manifest with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// The manifest the operator approved.
    Approval,
    /// The manifest a bundled plugin ships with.
    Shipped,
}

/// Why a bundle was not loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unapproved {
    /// Nothing was approved for it.
    #[error(
        "it asks for {}, which the operator has not approved; see and approve them with `cordon grants approve {bundle}`",
        asks.join("; ")
    )]
    NotApproved {
        /// The bundle.
        bundle: String,
        /// What it asks for, one line per grant.
        asks: Vec<String>,
    },
    /// It takes the name of a plugin bundled with Cordon, with a component
    /// this build did not make, and nothing was approved for it.
    #[error(
        "it is named like a plugin bundled with Cordon, but its component is not the one this build of Cordon made: it is a third party's bundle, which loads only once the operator approves it (it asks for {}); see and approve it with `cordon grants approve {bundle}`",
        if asks.is_empty() { "nothing".to_owned() } else { asks.join("; ") }
    )]
    NamedLikeBundled {
        /// The bundle.
        bundle: String,
        /// What it asks for, one line per grant.
        asks: Vec<String>,
    },
    /// Its component is not the one approved.
    #[error(
        "its component changed since the operator approved it (sha256 {approved}, now {now}); approve it again with `cordon grants approve {bundle}`"
    )]
    Changed {
        /// The bundle.
        bundle: String,
        /// The digest approved.
        approved: String,
        /// The component's digest now.
        now: String,
    },
    /// Its manifest is not the one approved, or not the one a bundled
    /// plugin ships with.
    #[error(
        "its manifest {} it: {}; see and approve the change with `cordon grants approve {bundle}`",
        match since {
            Baseline::Approval => "changed since the operator approved",
            Baseline::Shipped => "differs from the one Cordon ships",
        },
        changes.join("; ")
    )]
    ManifestChanged {
        /// The bundle.
        bundle: String,
        /// What the manifest was compared with.
        since: Baseline,
        /// Each value that differs, with its path and both values.
        changes: Vec<String>,
    },
    /// Its approval predates approvals that pin the whole manifest.
    #[error(
        "its approval does not record the manifest it approved (it predates approvals that cover the whole manifest); approve it again with `cordon grants approve {bundle}`"
    )]
    Unpinned {
        /// The bundle.
        bundle: String,
    },
    /// It asks for more than was approved.
    #[error(
        "it asks for {} beyond what the operator approved; see and approve the difference with `cordon grants approve {bundle}`",
        beyond.join("; ")
    )]
    Beyond {
        /// The bundle.
        bundle: String,
        /// What it asks beyond the approval, one line per grant.
        beyond: Vec<String>,
    },
}

/// Why the approvals file was refused.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ApprovalsError {
    /// The file.
    pub file: String,
    /// What is wrong with it.
    pub message: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalsFile {
    #[serde(default)]
    bundles: BTreeMap<String, Approval>,
}

/// The operator's approvals, and whether they are checked at all.
#[derive(Debug, Clone)]
pub struct Approvals {
    approved: BTreeMap<String, Approval>,
    checked: bool,
}

impl Default for Approvals {
    /// Unchecked: an embedder is its own operator.
    fn default() -> Self {
        Self::unchecked()
    }
}

impl Approvals {
    /// Every bundle gets what it asks for: for an embedder that is its own
    /// operator.
    pub fn unchecked() -> Self {
        Self {
            approved: BTreeMap::new(),
            checked: false,
        }
    }

    /// Only what is approved: nothing yet, besides the bundled plugins' own
    /// grants.
    pub fn checked() -> Self {
        Self {
            approved: BTreeMap::new(),
            checked: true,
        }
    }

    /// The approvals of the file `file`, whose contents are `text`.
    pub fn parse(file: &Path, text: &str) -> Result<Self, ApprovalsError> {
        let fail = |message: String| ApprovalsError {
            file: file.display().to_string(),
            message,
        };
        let parsed: ApprovalsFile =
            toml::from_str(text).map_err(|error| fail(error.to_string().trim_end().to_owned()))?;
        for (bundle, approval) in &parsed.bundles {
            let digest = &approval.sha256;
            if digest.len() != 64
                || !digest
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            {
                return Err(fail(format!(
                    "field `bundles.{bundle:?}.sha256` = {digest:?}: must be 64 lowercase hex digits"
                )));
            }
            approval
                .grants
                .check_approved()
                .map_err(|(field, value, reason)| {
                    fail(format!(
                        "field `bundles.{bundle:?}.grants.{field}` = {value:?}: {reason}"
                    ))
                })?;
        }
        Ok(Self {
            approved: parsed.bundles,
            checked: true,
        })
    }

    /// The approvals as the file holds them.
    pub fn to_toml(&self) -> String {
        let file = ApprovalsFile {
            bundles: self.approved.clone(),
        };
        toml::to_string_pretty(&file).unwrap_or_default()
    }

    /// Whether approvals are checked.
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    /// What was approved for `bundle`.
    pub fn get(&self, bundle: &str) -> Option<&Approval> {
        self.approved.get(bundle)
    }

    /// Every approval, by bundle.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Approval)> {
        self.approved.iter()
    }

    /// Approve `grants` for `bundle` with the component `sha256` and the
    /// manifest `manifest`, replacing what was approved before.
    pub fn approve(&mut self, bundle: &str, sha256: &str, grants: Grants, manifest: Pinned) {
        self.approved.insert(
            bundle.to_owned(),
            Approval {
                sha256: sha256.to_owned(),
                grants,
                manifest: Some(manifest),
            },
        );
    }

    /// Withdraw the approval of `bundle`; whether there was one.
    pub fn revoke(&mut self, bundle: &str) -> bool {
        self.approved.remove(bundle).is_some()
    }

    /// Whether the bundle `presented` may load, how, and with which network
    /// origins. An approval of it, when there is one, decides; else a
    /// bundled plugin's own component with its manifest as shipped comes
    /// approved for what that manifest asks but the network; else a third
    /// party's bundle that asks for nothing loads, unless it takes a bundled
    /// plugin's name. Unchecked approvals grant every origin asked.
    pub fn check(
        &self,
        presented: Presented<'_>,
        bundled: &BundledPlugins,
    ) -> Result<Admitted, Unapproved> {
        let asked = presented.grants;
        if !self.checked {
            return Ok(Admitted {
                admission: Admission::Unchecked,
                network: asked.network.clone(),
            });
        }
        let bundle = presented.id.to_owned();
        if let Some(approval) = self.approved.get(presented.id) {
            if approval.sha256 != presented.digest {
                return Err(Unapproved::Changed {
                    bundle,
                    approved: approval.sha256.clone(),
                    now: presented.digest.to_owned(),
                });
            }
            let Some(approved) = &approval.manifest else {
                return Err(Unapproved::Unpinned { bundle });
            };
            let changes = approved.changes(presented.manifest);
            if !changes.is_empty() {
                return Err(Unapproved::ManifestChanged {
                    bundle,
                    since: Baseline::Approval,
                    changes,
                });
            }
            return within(asked, &approval.grants, bundle).map(|()| Admitted {
                admission: Admission::Approved,
                network: approval.grants.network.clone(),
            });
        }
        let shipped = (!presented.skill)
            .then(|| bundled.matching(presented.name, presented.digest))
            .flatten();
        if let Some(shipped) = shipped {
            let changes = shipped.pinned.changes(presented.manifest);
            if !changes.is_empty() {
                return Err(Unapproved::ManifestChanged {
                    bundle,
                    since: Baseline::Shipped,
                    changes,
                });
            }
            return within(asked, &shipped.grants, bundle).map(|()| Admitted {
                admission: Admission::Bundled,
                network: Vec::new(),
            });
        }
        match bundled.provenance(presented.name, presented.digest, presented.skill) {
            Provenance::NamedLikeBundled => Err(Unapproved::NamedLikeBundled {
                bundle,
                asks: asked.summary(),
            }),
            Provenance::Bundled | Provenance::ThirdParty if asked.is_empty() => Ok(Admitted {
                admission: Admission::AsksNothing,
                network: Vec::new(),
            }),
            Provenance::Bundled | Provenance::ThirdParty => Err(Unapproved::NotApproved {
                bundle,
                asks: asked.summary(),
            }),
        }
    }
}

/// Whether `asked` stays within `approved`; the refusal names what does not.
fn within(asked: &Grants, approved: &Grants, bundle: String) -> Result<(), Unapproved> {
    let beyond = asked.beyond(approved);
    if beyond.is_empty() {
        Ok(())
    } else {
        Err(Unapproved::Beyond { bundle, beyond })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{DirGrant, DirMode, StateGrants};

    const WEATHER: &str = "[plugin]\nname = \"weather\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"w.wasm\"\n[limits]\ntimeout-ms = 1000\n";

    fn pinned(text: &str) -> Pinned {
        Pinned::of(Path::new("plugin.toml"), text).unwrap()
    }

    fn asking(env: &[&str], dirs: &[(&str, DirMode)]) -> Grants {
        Grants {
            env: env.iter().map(|name| (*name).to_owned()).collect(),
            dirs: dirs
                .iter()
                .map(|(host, mode)| DirGrant {
                    host: (*host).into(),
                    guest: "/workspace".into(),
                    mode: *mode,
                })
                .collect(),
            ..Grants::default()
        }
    }

    /// `id` with component `digest`, manifest `manifest`, asking `grants`.
    fn presented<'a>(
        id: &'a str,
        digest: &'a str,
        grants: &'a Grants,
        manifest: &'a Pinned,
    ) -> Presented<'a> {
        Presented {
            id,
            name: id.rsplit('/').next().unwrap_or(id),
            skill: id.contains('/'),
            digest,
            grants,
            manifest,
        }
    }

    const FILES: &str = "[plugin]\nname = \"files\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"files.wasm\"\n\
        [[grants.dirs]]\nhost = \".\"\nguest = \"/workspace\"\nmode = \"ro\"\n[limits]\noutput-kib = 1024\n";

    fn bundled_files() -> BundledPlugins {
        BundledPlugins::new([("files", FILES, "f".repeat(64).as_str())]).unwrap()
    }

    #[test]
    fn a_bundled_plugin_comes_approved_only_for_its_own_bytes_and_manifest() {
        let bundled = bundled_files();
        let approvals = Approvals::checked();
        let own = "f".repeat(64);
        let files = asking(&[], &[(".", DirMode::Ro)]);
        let shipped = pinned(FILES);
        assert_eq!(
            approvals
                .check(presented("files", &own, &files, &shipped), &bundled)
                .map(|admitted| admitted.admission),
            Ok(Admission::Bundled)
        );
        let more = asking(&[], &[(".", DirMode::Rw)]);
        let refused = approvals
            .check(presented("files", &own, &more, &shipped), &bundled)
            .unwrap_err();
        assert!(
            matches!(&refused, Unapproved::Beyond { beyond, .. } if beyond == &["dir . -> /workspace (rw)"]),
            "{refused:?}"
        );
        let impostor = "e".repeat(64);
        let refused = approvals
            .check(presented("files", &impostor, &files, &shipped), &bundled)
            .unwrap_err();
        assert!(
            matches!(&refused, Unapproved::NamedLikeBundled { .. }),
            "another component under a bundled name is approved for nothing: {refused:?}"
        );
        assert!(
            refused
                .to_string()
                .contains("not the one this build of Cordon made"),
            "{refused}"
        );
        let nothing = Grants::default();
        assert!(
            matches!(
                approvals.check(presented("files", &impostor, &nothing, &shipped), &bundled),
                Err(Unapproved::NamedLikeBundled { asks, .. }) if asks.is_empty()
            ),
            "even asking for nothing"
        );
        let refused = approvals
            .check(presented("skill/files", &own, &files, &shipped), &bundled)
            .unwrap_err();
        assert!(
            matches!(&refused, Unapproved::NotApproved { .. }),
            "a skill's bundle is never a bundled plugin: {refused:?}"
        );
        let edited = pinned(&FILES.replace("output-kib = 1024", "output-kib = 9999"));
        let refused = approvals
            .check(presented("files", &own, &files, &edited), &bundled)
            .unwrap_err();
        assert!(
            matches!(&refused, Unapproved::ManifestChanged { since: Baseline::Shipped, changes, .. }
                if changes == &["`limits.output-kib`: 1024 → 9999"]),
            "{refused:?}"
        );
        let mut approvals = approvals;
        approvals.approve("files", &own, files.clone(), edited.clone());
        assert_eq!(
            approvals
                .check(presented("files", &own, &files, &edited), &bundled)
                .map(|admitted| admitted.admission),
            Ok(Admission::Approved),
            "the operator approves the change"
        );
    }

    #[test]
    fn an_approval_covers_what_it_names_for_its_component_and_manifest_only() {
        let digest = "a".repeat(64);
        let none = BundledPlugins::none();
        let manifest = pinned(WEATHER);
        let mut approvals = Approvals::checked();
        let asked = asking(&["LANG"], &[(".", DirMode::Ro)]);
        assert!(matches!(
            approvals.check(presented("weather", &digest, &asked, &manifest), &none),
            Err(Unapproved::NotApproved { asks, .. }) if asks.len() == 2
        ));
        approvals.approve(
            "weather",
            &digest,
            asking(&["LANG"], &[(".", DirMode::Rw)]),
            manifest.clone(),
        );
        assert_eq!(
            approvals.check(presented("weather", &digest, &asked, &manifest), &none),
            Ok(Admitted {
                admission: Admission::Approved,
                network: Vec::new()
            })
        );
        let grown = Grants {
            state: StateGrants {
                read: vec!["k".into()],
                write: vec![],
            },
            ..asking(
                &["LANG", "HOME"],
                &[(".", DirMode::Ro), ("src", DirMode::Ro)],
            )
        };
        let refused = approvals
            .check(presented("weather", &digest, &grown, &manifest), &none)
            .unwrap_err();
        assert!(
            matches!(&refused, Unapproved::Beyond { beyond, .. }
                if beyond == &["state read k", "dir src -> /workspace (ro)", "env HOME"]),
            "{refused:?}"
        );
        let changed = approvals
            .check(
                presented("weather", &"b".repeat(64), &asked, &manifest),
                &none,
            )
            .unwrap_err();
        assert!(
            changed.to_string().contains("component changed"),
            "{changed}"
        );
        for (edit, named) in [
            ("timeout-ms = 1000", "`limits.timeout-ms`: 1000 → 60000"),
            ("[limits]", "`config` added: { mode = \"loose\" }"),
        ] {
            let replacement = match edit {
                "timeout-ms = 1000" => "timeout-ms = 60000",
                _ => "[config]\nmode = \"loose\"\n[limits]",
            };
            let edited = pinned(&WEATHER.replace(edit, replacement));
            let refused = approvals
                .check(presented("weather", &digest, &asked, &edited), &none)
                .unwrap_err();
            assert!(
                matches!(&refused, Unapproved::ManifestChanged { since: Baseline::Approval, changes, .. }
                    if changes.iter().any(|line| line == named)),
                "{refused:?}"
            );
            assert!(
                refused
                    .to_string()
                    .contains("changed since the operator approved it"),
                "{refused}"
            );
        }
        assert_eq!(
            approvals
                .check(
                    presented("pure", &digest, &Grants::default(), &manifest),
                    &none
                )
                .map(|admitted| admitted.admission),
            Ok(Admission::AsksNothing)
        );
        assert_eq!(
            Approvals::unchecked()
                .check(presented("weather", "x", &grown, &manifest), &none)
                .map(|admitted| admitted.admission),
            Ok(Admission::Unchecked)
        );
    }

    #[test]
    fn an_approval_holds_for_a_bundle_that_asks_for_nothing_and_an_old_one_pins_nothing() {
        let digest = "a".repeat(64);
        let none = BundledPlugins::none();
        let manifest = pinned(WEATHER);
        let nothing = Grants::default();
        let mut approvals = Approvals::checked();
        approvals.approve("weather", &digest, Grants::default(), manifest.clone());
        assert_eq!(
            approvals
                .check(presented("weather", &digest, &nothing, &manifest), &none)
                .map(|admitted| admitted.admission),
            Ok(Admission::Approved)
        );
        let edited = pinned(&WEATHER.replace("1000", "2000"));
        assert!(matches!(
            approvals.check(presented("weather", &digest, &nothing, &edited), &none),
            Err(Unapproved::ManifestChanged { .. })
        ));
        let old = format!("[bundles.weather]\nsha256 = \"{digest}\"\n");
        let approvals = Approvals::parse(Path::new("grants.toml"), &old).unwrap();
        let refused = approvals
            .check(presented("weather", &digest, &nothing, &manifest), &none)
            .unwrap_err();
        assert_eq!(
            refused,
            Unapproved::Unpinned {
                bundle: "weather".into()
            }
        );
        assert!(
            refused.to_string().contains("approve it again"),
            "{refused}"
        );
    }

    #[test]
    fn questions_to_the_person_need_the_operators_approval() {
        let digest = "b".repeat(64);
        let none = BundledPlugins::none();
        let manifest = pinned(WEATHER);
        let asked = Grants {
            elicit: true,
            ..Grants::default()
        };
        let mut approvals = Approvals::checked();
        assert!(matches!(
            approvals.check(presented("survey", &digest, &asked, &manifest), &none),
            Err(Unapproved::NotApproved { asks, .. })
                if asks == ["elicit (asks the person it runs for questions)"]
        ));
        approvals.approve("survey", &digest, Grants::default(), manifest.clone());
        assert!(
            matches!(
                approvals.check(presented("survey", &digest, &asked, &manifest), &none),
                Err(Unapproved::Beyond { beyond, .. }) if beyond == ["elicit"]
            ),
            "an approval without it does not cover it"
        );
        approvals.approve("survey", &digest, asked.clone(), manifest.clone());
        assert!(
            approvals
                .check(presented("survey", &digest, &asked, &manifest), &none)
                .is_ok()
        );
    }

    #[test]
    fn an_approval_grants_the_origins_it_names_and_the_bundled_plugins_none() {
        let digest = "a".repeat(64);
        let none = BundledPlugins::none();
        let manifest = pinned(WEATHER);
        let asked = Grants {
            network: vec!["https://*".into()],
            ..Grants::default()
        };
        let mut approvals = Approvals::checked();
        assert!(matches!(
            approvals.check(presented("fetch", &digest, &asked, &manifest), &none),
            Err(Unapproved::NotApproved { asks, .. }) if asks == ["network https://*"]
        ));
        let narrow = Grants {
            network: vec!["https://api.github.com".into()],
            ..Grants::default()
        };
        approvals.approve("fetch", &digest, narrow.clone(), manifest.clone());
        assert_eq!(
            approvals
                .check(presented("fetch", &digest, &asked, &manifest), &none)
                .map(|admitted| admitted.network),
            Ok(vec!["https://api.github.com".to_owned()]),
            "the approval narrows what is asked, and the bundle loads"
        );
        assert_eq!(asked.narrowed(&narrow), ["network https://*"]);
        assert_eq!(
            Approvals::unchecked()
                .check(presented("fetch", "x", &asked, &manifest), &none)
                .map(|admitted| admitted.network),
            Ok(vec!["https://*".to_owned()])
        );
        let http = "[plugin]\nname = \"http\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"h.wasm\"\n[grants]\nnetwork = [\"https://*:*\"]\n";
        let bundled = BundledPlugins::new([("http", http, digest.as_str())]).unwrap();
        let asks_network = Grants {
            network: vec!["https://*:*".into()],
            ..Grants::default()
        };
        assert_eq!(
            Approvals::checked().check(
                presented("http", &digest, &asks_network, &pinned(http)),
                &bundled
            ),
            Ok(Admitted {
                admission: Admission::Bundled,
                network: Vec::new()
            }),
            "bundled plugins come approved for no origin"
        );
        let bad = "[bundles.fetch]\nsha256 = \"".to_owned()
            + &digest
            + "\"\n[bundles.fetch.grants]\nnetwork = [\"https://user@evil\"]\n";
        let error = Approvals::parse(Path::new("grants.toml"), &bad).unwrap_err();
        assert!(
            error.to_string().contains("grants.network[0]")
                && error.to_string().contains("user name"),
            "{error}"
        );
    }

    #[test]
    fn the_file_round_trips_and_bad_digests_are_named() {
        let mut approvals = Approvals::checked();
        approvals.approve(
            "report/csv",
            &"c".repeat(64),
            asking(&[], &[(".", DirMode::Ro)]),
            pinned("[plugin]\nname = \"csv\"\n[config]\nnested = { deep = [1, 2] }\n"),
        );
        let text = approvals.to_toml();
        let back = Approvals::parse(Path::new("grants.toml"), &text).unwrap();
        assert_eq!(
            back.get("report/csv"),
            approvals.get("report/csv"),
            "{text}"
        );
        let error = Approvals::parse(Path::new("grants.toml"), "[bundles.x]\nsha256 = \"abc\"\n")
            .unwrap_err();
        assert!(
            error.to_string().contains("bundles.\"x\".sha256"),
            "{error}"
        );
        let error = Approvals::parse(Path::new("grants.toml"), "[bundle.x]\n").unwrap_err();
        assert!(error.to_string().starts_with("grants.toml:"), "{error}");
    }
}
