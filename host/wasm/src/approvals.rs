//! Operator grants, the second key: a manifest asks for grants, and the
//! operator approves them, bundle by bundle, pinned to the component's
//! SHA-256. A bundle is loaded only when everything it asks for is approved
//! for exactly its component: one that asks for more than was approved, or
//! whose component changed since, is refused, and the refusal names each
//! grant beyond the approval. A bundle that asks for nothing needs no
//! approval. The plugins bundled with Cordon come approved for what their
//! manifests in this repository ask, whatever their component (they are
//! built from source here), and for nothing more.
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
//! ```
//!
//! A skill's tool bundles are named `SKILL/BUNDLE` here.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::capabilities::network::grant as network;
use crate::manifest::{Grants, Manifest};

/// Where a project keeps its approvals.
pub const GRANTS_FILE: &str = ".cordon/grants.toml";

/// The manifests of the bundled plugins, as this repository has them.
const BUNDLED_MANIFESTS: &[(&str, &str)] = &[
    ("jq", include_str!("../../../plugins/jq/plugin.toml")),
    ("files", include_str!("../../../plugins/files/plugin.toml")),
    ("notes", include_str!("../../../plugins/notes/plugin.toml")),
    (
        "redactor",
        include_str!("../../../plugins/redactor/plugin.toml"),
    ),
    ("guard", include_str!("../../../plugins/guard/plugin.toml")),
    (
        "budget",
        include_str!("../../../plugins/budget/plugin.toml"),
    ),
    ("dir", include_str!("../../../plugins/dir/plugin.toml")),
    ("http", include_str!("../../../plugins/http/plugin.toml")),
    (
        "memory",
        include_str!("../../../plugins/memory/plugin.toml"),
    ),
];

/// What the bundled plugin `name` comes approved for: what its manifest in
/// this repository asks, but for the network, which only the operator
/// grants.
pub fn bundled_grants(name: &str) -> Option<&'static Grants> {
    static GRANTS: OnceLock<BTreeMap<&'static str, Grants>> = OnceLock::new();
    GRANTS
        .get_or_init(|| {
            BUNDLED_MANIFESTS
                .iter()
                .filter_map(|(name, text)| {
                    let manifest = Manifest::parse(Path::new(name), text).ok()?;
                    let grants = Grants {
                        network: Vec::new(),
                        ..manifest.grants
                    };
                    Some((*name, grants))
                })
                .collect()
        })
        .get(name)
}

/// What the operator approved for one bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// The component's SHA-256 when it was approved, lowercase hex.
    pub sha256: String,
    /// The grants approved.
    #[serde(default)]
    pub grants: Grants,
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
            network::parse_all(&approval.grants.network, |index, origin, reason| {
                fail(format!(
                    "field `bundles.{bundle:?}.grants.network[{index}]` = {origin:?}: {reason}"
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

    /// Approve `grants` for `bundle` with the component `sha256`, replacing
    /// what was approved before.
    pub fn approve(&mut self, bundle: &str, sha256: &str, grants: Grants) {
        self.approved.insert(
            bundle.to_owned(),
            Approval {
                sha256: sha256.to_owned(),
                grants,
            },
        );
    }

    /// Withdraw the approval of `bundle`; whether there was one.
    pub fn revoke(&mut self, bundle: &str) -> bool {
        self.approved.remove(bundle).is_some()
    }

    /// Whether `bundle`, whose component has the SHA-256 `digest` and which
    /// asks for `asked`, may load, and if so the network origins it is
    /// granted. `bundled` says whether it is one of the plugins bundled
    /// with Cordon, which come approved for their own grants but for no
    /// origin; a skill's bundle never is. Unchecked approvals grant every
    /// origin asked.
    pub fn check(
        &self,
        bundle: &str,
        bundled: bool,
        asked: &Grants,
        digest: &str,
    ) -> Result<Vec<String>, Unapproved> {
        if !self.checked {
            return Ok(asked.network.clone());
        }
        if asked.is_empty() {
            return Ok(Vec::new());
        }
        let Some(approval) = self.approved.get(bundle) else {
            let own = bundled.then(|| bundled_grants(bundle)).flatten();
            return match own {
                Some(own) => {
                    let beyond = asked.beyond(own);
                    if beyond.is_empty() {
                        Ok(own.network.clone())
                    } else {
                        Err(Unapproved::Beyond {
                            bundle: bundle.to_owned(),
                            beyond,
                        })
                    }
                }
                None => Err(Unapproved::NotApproved {
                    bundle: bundle.to_owned(),
                    asks: asked.summary(),
                }),
            };
        };
        if approval.sha256 != digest {
            return Err(Unapproved::Changed {
                bundle: bundle.to_owned(),
                approved: approval.sha256.clone(),
                now: digest.to_owned(),
            });
        }
        let beyond = asked.beyond(&approval.grants);
        if beyond.is_empty() {
            Ok(approval.grants.network.clone())
        } else {
            Err(Unapproved::Beyond {
                bundle: bundle.to_owned(),
                beyond,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{DirGrant, DirMode, StateGrants};

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

    #[test]
    fn every_bundled_manifest_parses_and_comes_approved_for_its_own_grants() {
        for (name, _) in BUNDLED_MANIFESTS {
            assert!(bundled_grants(name).is_some(), "{name}");
        }
        let approvals = Approvals::checked();
        let files = bundled_grants("files").unwrap().clone();
        assert_eq!(
            approvals.check("files", true, &files, "any"),
            Ok(Vec::new())
        );
        let more = asking(&[], &[(".", DirMode::Rw)]);
        let refused = approvals.check("files", true, &more, "any").unwrap_err();
        assert!(
            matches!(&refused, Unapproved::Beyond { beyond, .. } if beyond == &["dir . -> /workspace (rw)"]),
            "{refused:?}"
        );
        assert!(
            matches!(
                approvals.check("files", false, &files, "any"),
                Err(Unapproved::NotApproved { .. })
            ),
            "a skill's bundle named like a bundled one comes approved for nothing"
        );
    }

    #[test]
    fn an_approval_covers_what_it_names_for_its_component_only() {
        let digest = "a".repeat(64);
        let mut approvals = Approvals::checked();
        let asked = asking(&["LANG"], &[(".", DirMode::Ro)]);
        assert!(matches!(
            approvals.check("weather", false, &asked, &digest),
            Err(Unapproved::NotApproved { asks, .. }) if asks.len() == 2
        ));
        approvals.approve("weather", &digest, asking(&["LANG"], &[(".", DirMode::Rw)]));
        assert_eq!(
            approvals.check("weather", false, &asked, &digest),
            Ok(Vec::new())
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
            .check("weather", false, &grown, &digest)
            .unwrap_err();
        assert!(
            matches!(&refused, Unapproved::Beyond { beyond, .. }
                if beyond == &["state read k", "dir src -> /workspace (ro)", "env HOME"]),
            "{refused:?}"
        );
        let changed = approvals
            .check("weather", false, &asked, &"b".repeat(64))
            .unwrap_err();
        assert!(
            changed.to_string().contains("component changed"),
            "{changed}"
        );
        assert_eq!(
            approvals.check("pure", false, &Grants::default(), &digest),
            Ok(Vec::new())
        );
        assert_eq!(
            Approvals::unchecked().check("weather", false, &grown, "x"),
            Ok(Vec::new())
        );
    }

    #[test]
    fn questions_to_the_person_need_the_operators_approval() {
        let digest = "b".repeat(64);
        let asked = Grants {
            elicit: true,
            ..Grants::default()
        };
        let mut approvals = Approvals::checked();
        assert!(matches!(
            approvals.check("survey", false, &asked, &digest),
            Err(Unapproved::NotApproved { asks, .. })
                if asks == ["elicit (asks the person it runs for questions)"]
        ));
        approvals.approve("survey", &digest, Grants::default());
        assert!(
            matches!(
                approvals.check("survey", false, &asked, &digest),
                Err(Unapproved::Beyond { beyond, .. }) if beyond == ["elicit"]
            ),
            "an approval without it does not cover it"
        );
        approvals.approve("survey", &digest, asked.clone());
        assert_eq!(
            approvals.check("survey", false, &asked, &digest),
            Ok(Vec::new())
        );
    }

    #[test]
    fn an_approval_grants_the_origins_it_names_and_the_bundled_plugins_none() {
        let digest = "a".repeat(64);
        let asked = Grants {
            network: vec!["https://*".into()],
            ..Grants::default()
        };
        let mut approvals = Approvals::checked();
        assert!(matches!(
            approvals.check("fetch", false, &asked, &digest),
            Err(Unapproved::NotApproved { asks, .. }) if asks == ["network https://*"]
        ));
        let narrow = Grants {
            network: vec!["https://api.github.com".into()],
            ..Grants::default()
        };
        approvals.approve("fetch", &digest, narrow.clone());
        assert_eq!(
            approvals.check("fetch", false, &asked, &digest),
            Ok(vec!["https://api.github.com".to_owned()]),
            "the approval narrows what is asked, and the bundle loads"
        );
        assert_eq!(asked.narrowed(&narrow), ["network https://*"]);
        assert_eq!(
            Approvals::unchecked().check("fetch", false, &asked, "x"),
            Ok(vec!["https://*".to_owned()])
        );
        let http = bundled_grants("http").expect("the bundled http plugin");
        assert!(
            http.network.is_empty(),
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
        );
        let text = approvals.to_toml();
        let back = Approvals::parse(Path::new("grants.toml"), &text).unwrap();
        assert_eq!(back.get("report/csv"), approvals.get("report/csv"));
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
