//! Finding a pinned package's wheel on the index. The index speaks PyPI's
//! JSON API (`GET {index}/{name}/{version}/json`), which lists a release's
//! files with their URLs and SHA-256 digests; `CORDON_PACKAGE_INDEX` names a
//! mirror in place of PyPI.

use serde::Deserialize;

use super::requirements::Requirement;
use super::{PackageError, Published};

/// PyPI's JSON API.
pub const DEFAULT_INDEX: &str = "https://pypi.org/pypi";
/// The variable naming another index.
pub const INDEX_VARIABLE: &str = "CORDON_PACKAGE_INDEX";

/// The index to ask: `CORDON_PACKAGE_INDEX`, or PyPI.
pub fn chosen() -> String {
    std::env::var(INDEX_VARIABLE)
        .ok()
        .filter(|index| !index.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_INDEX.to_owned())
        .trim_end_matches('/')
        .to_owned()
}

/// Which wheels of a package may be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// Only a wheel the sandbox runs whole: pure Python, or a WASI build.
    Whole,
    /// Failing that, the Python files of a native wheel, its compiled
    /// modules left out: for a package that falls back to pure Python
    /// without them (PyYAML), as the operator says.
    PythonOnly,
}

/// The wheel of a pinned package the sandbox runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wheel {
    /// The pin it answers.
    pub requirement: Requirement,
    /// Its file name.
    pub file: String,
    /// Where to download it.
    pub url: String,
    /// Its SHA-256 as the index announces it, lowercase hex.
    pub sha256: String,
    /// Whether only its Python files are taken.
    pub python_only: bool,
}

#[derive(Deserialize)]
struct Release {
    urls: Vec<ReleaseFile>,
}

#[derive(Deserialize)]
struct ReleaseFile {
    filename: String,
    url: String,
    packagetype: String,
    digests: Digests,
}

#[derive(Deserialize)]
struct Digests {
    sha256: String,
}

/// The wheel of `requirement` on `index` that runs in the sandbox.
pub async fn find(
    client: &reqwest::Client,
    index: &str,
    requirement: &Requirement,
    taken: Taken,
) -> Result<Wheel, PackageError> {
    let url = format!(
        "{index}/{}/{}/json",
        requirement.normalized(),
        requirement.version
    );
    let failed = |detail: String| PackageError::Index {
        index: index.to_owned(),
        detail,
    };
    let response = client
        .get(&url)
        .send()
        .await
        .map_err(|error| failed(format!("cannot ask for {requirement}: {error}")))?;
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Err(failed(format!("it has no {requirement}")));
    }
    if !response.status().is_success() {
        return Err(failed(format!(
            "asked for {requirement}, it answered {}",
            response.status()
        )));
    }
    let release: Release = response.json().await.map_err(|error| {
        failed(format!(
            "its answer for {requirement} is not a release: {error}"
        ))
    })?;
    choose(requirement, release.urls, taken)
}

fn choose(
    requirement: &Requirement,
    files: Vec<ReleaseFile>,
    taken: Taken,
) -> Result<Wheel, PackageError> {
    let rank = |file: &str| match (sandbox_rank(file), taken) {
        (Some(rank), _) => Some(rank),
        // Any native wheel will do: only its Python files are kept.
        (None, Taken::PythonOnly) => Some(2),
        (None, Taken::Whole) => None,
    };
    let best = files
        .iter()
        .filter(|file| file.packagetype == "bdist_wheel")
        .filter_map(|file| rank(&file.filename).map(|rank| (rank, file)))
        .min_by_key(|(rank, _)| *rank);
    match best {
        Some((rank, file)) => Ok(Wheel {
            requirement: requirement.clone(),
            file: file.filename.clone(),
            url: file.url.clone(),
            sha256: file.digests.sha256.to_ascii_lowercase(),
            python_only: rank == 2,
        }),
        None => Err(PackageError::NoSandboxWheel {
            requirement: requirement.clone(),
            published: Published(files.into_iter().map(|file| file.filename).collect()),
        }),
    }
}

/// How well a wheel's tags (`name-version-python-abi-platform.whl`) suit
/// the sandbox: 0 for pure Python 3, 1 for a WASI build, `None` for native
/// code of another platform.
pub fn sandbox_rank(file: &str) -> Option<u8> {
    let stem = file.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    let [.., python, abi, platform] = parts.as_slice() else {
        return None;
    };
    if parts.len() < 5 {
        return None;
    }
    let python3 = python.split('.').any(|tag| tag.starts_with("py3"));
    if *abi == "none" && *platform == "any" && python3 {
        Some(0)
    } else if platform.split('.').any(|tag| tag.contains("wasi")) {
        Some(1)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> ReleaseFile {
        ReleaseFile {
            filename: name.to_owned(),
            url: format!("https://files/{name}"),
            packagetype: if name.ends_with(".whl") {
                "bdist_wheel"
            } else {
                "sdist"
            }
            .to_owned(),
            digests: Digests {
                sha256: "AB".repeat(32),
            },
        }
    }

    #[test]
    fn a_pure_wheel_is_chosen_over_native_ones_and_a_source_archive() {
        let pin = Requirement::parse("pypdf==5.1.0").unwrap();
        let chosen = choose(
            &pin,
            vec![
                file("pypdf-5.1.0.tar.gz"),
                file("pypdf-5.1.0-cp312-cp312-manylinux_2_17_x86_64.whl"),
                file("pypdf-5.1.0-py3-none-any.whl"),
            ],
            Taken::PythonOnly,
        )
        .unwrap();
        assert_eq!(chosen.file, "pypdf-5.1.0-py3-none-any.whl");
        assert!(!chosen.python_only, "a whole wheel is taken whole");
        assert_eq!(chosen.sha256, "ab".repeat(32));
    }

    #[test]
    fn a_package_without_a_wheel_the_sandbox_runs_is_refused_saying_why() {
        let pin = Requirement::parse("lxml==5.3.0").unwrap();
        let native = choose(
            &pin,
            vec![
                file("lxml-5.3.0-cp312-cp312-manylinux_2_28_x86_64.whl"),
                file("lxml-5.3.0.tar.gz"),
            ],
            Taken::Whole,
        )
        .unwrap_err()
        .to_string();
        assert!(
            native.contains("lxml==5.3.0 has no wheel the sandbox can run"),
            "{native}"
        );
        assert!(native.contains("built for native platforms"), "{native}");
        let source = choose(&pin, vec![file("lxml-5.3.0.tar.gz")], Taken::PythonOnly)
            .unwrap_err()
            .to_string();
        assert!(
            source.contains("only a source archive (lxml-5.3.0.tar.gz)"),
            "{source}"
        );
        assert!(
            source.contains("never runs a package's build or install code"),
            "{source}"
        );
        let yaml = Requirement::parse("PyYAML==6.0.3").unwrap();
        let python_only = choose(
            &yaml,
            vec![file("pyyaml-6.0.3-cp311-cp311-manylinux_2_17_x86_64.whl")],
            Taken::PythonOnly,
        )
        .unwrap();
        assert!(python_only.python_only);
    }

    #[test]
    fn wheel_tags_are_read_for_the_sandbox() {
        assert_eq!(sandbox_rank("six-1.16.0-py2.py3-none-any.whl"), Some(0));
        assert_eq!(
            sandbox_rank("a-1-1-py3-none-any.whl"),
            Some(0),
            "a build tag"
        );
        assert_eq!(sandbox_rank("old-1.0-py2-none-any.whl"), None);
        assert_eq!(
            sandbox_rank("numpy-2.1.0-cp314-cp314-wasi_0_0_0_wasm32.whl"),
            Some(1)
        );
        assert_eq!(sandbox_rank("x-1.0-cp312-abi3-macosx_11_0_arm64.whl"), None);
        assert_eq!(sandbox_rank("x-1.0.tar.gz"), None);
    }
}
