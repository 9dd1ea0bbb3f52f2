//! `cordon plugins install`: copy bundles into the user's plugins folder (or
//! the project's), where every command finds them. Each bundle is checked
//! first (its manifest valid, its component present) and copied as its
//! manifest and component only; one already installed under the same name is
//! replaced whole, never left half-copied. A bundle that is not whole is
//! named and left out, and the others are installed (exit 1).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use cordon_session::plugin_path::{self, PROJECT_FOLDER};
use cordon_wasm::manifest::{MANIFEST_FILE, Manifest};

#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// Bundle folders, or folders of bundle folders.
    #[arg(required_unless_present = "bundled")]
    pub dirs: Vec<PathBuf>,
    /// Install the bundled plugins (jq, files, notes, http, redactor, guard,
    /// budget, dir, memory, python) from the source tree this cordon was
    /// built from, once built there.
    #[arg(long)]
    pub bundled: bool,
    /// Install into the project's `.cordon/plugins` instead.
    #[arg(long)]
    pub project: bool,
}

/// The source tree this binary was built from, which holds the bundled
/// plugins.
const SOURCE_ROOT: &str = env!("CORDON_SOURCE_ROOT");

pub(crate) fn run(args: InstallArgs) -> anyhow::Result<ExitCode> {
    let target = if args.project {
        PathBuf::from(PROJECT_FOLDER)
    } else {
        plugin_path::user_folder().context(
            "no user plugins folder: set XDG_DATA_HOME or HOME, or install into the project's with --project",
        )?
    };
    let mut dirs = args.dirs.clone();
    if args.bundled {
        let bundled = Path::new(SOURCE_ROOT).join("plugins");
        if !bundled.is_dir() {
            bail!(
                "the bundled plugins were in {}, which is gone; install them from a clone: \
                 `./scripts/build-plugins.sh && cordon plugins install plugins`",
                bundled.display()
            );
        }
        dirs.push(bundled);
    }
    let mut bundles = Vec::new();
    for dir in &dirs {
        bundles.extend(bundles_in(dir)?);
    }
    if bundles.is_empty() {
        bail!(
            "no bundle in {}: a bundle is a folder holding {MANIFEST_FILE}",
            shown(&dirs)
        );
    }
    let mut checked = Vec::with_capacity(bundles.len());
    let mut refused = 0;
    for dir in bundles {
        match check(&dir) {
            Ok(manifest) => checked.push((dir, manifest)),
            Err(error) if args.bundled && dir.starts_with(SOURCE_ROOT) => {
                eprintln!(
                    "error: {error:#}; not installed (build the bundled plugins with \
                     {SOURCE_ROOT}/scripts/build-plugins.sh, and the Python interpreter with \
                     `cordon build {SOURCE_ROOT}/plugins/python`)"
                );
                refused += 1;
            }
            Err(error) => {
                eprintln!("error: {error:#}; not installed");
                refused += 1;
            }
        }
    }
    if !checked.is_empty() {
        std::fs::create_dir_all(&target)
            .with_context(|| format!("creating the plugins folder {}", target.display()))?;
    }
    for (dir, manifest) in &checked {
        let replaced = install(dir, manifest, &target)?;
        let verb = if replaced { "replaced" } else { "installed" };
        println!(
            "{verb} {} {} in {}",
            manifest.name,
            manifest.version,
            target.join(&manifest.name).display()
        );
    }
    Ok(if refused == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "{refused} bundle(s) not installed, {} installed",
            checked.len()
        );
        ExitCode::from(1)
    })
}

/// `dir` itself when it is a bundle, else its sub-folders that are.
fn bundles_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if dir.join(MANIFEST_FILE).is_file() {
        return Ok(vec![dir.to_owned()]);
    }
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join(MANIFEST_FILE).is_file())
        .collect();
    found.sort();
    Ok(found)
}

/// The manifest of bundle `dir`, which must be valid and whose component
/// must be there.
fn check(dir: &Path) -> anyhow::Result<Manifest> {
    let manifest = Manifest::load(&dir.join(MANIFEST_FILE))?;
    let component = dir.join(&manifest.component);
    if !component.is_file() {
        bail!(
            "{}: field `component` = {:?}: no such file; build the bundle first (`cordon build {}`)",
            dir.join(MANIFEST_FILE).display(),
            manifest.component.display().to_string(),
            dir.display()
        );
    }
    Ok(manifest)
}

/// Copy bundle `dir` into `target` as `target/NAME`, replacing any bundle
/// installed there: the copy is made beside it under a hidden name, which
/// loaders skip, and swapped in whole. Whether one was replaced.
fn install(dir: &Path, manifest: &Manifest, target: &Path) -> anyhow::Result<bool> {
    let name = &manifest.name;
    let staged = target.join(format!(".{name}.installing"));
    let retired = target.join(format!(".{name}.replaced"));
    for leftover in [&staged, &retired] {
        if leftover.exists() {
            std::fs::remove_dir_all(leftover)
                .with_context(|| format!("removing {}", leftover.display()))?;
        }
    }
    let copy = |from: &Path, to: &Path| -> anyhow::Result<()> {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(from, to)
            .map(drop)
            .with_context(|| format!("copying {} to {}", from.display(), to.display()))
    };
    copy(&dir.join(MANIFEST_FILE), &staged.join(MANIFEST_FILE))?;
    copy(
        &dir.join(&manifest.component),
        &staged.join(&manifest.component),
    )?;
    let installed = target.join(name);
    let replaced = installed.exists();
    if replaced {
        std::fs::rename(&installed, &retired)
            .with_context(|| format!("moving {} aside", installed.display()))?;
    }
    std::fs::rename(&staged, &installed)
        .with_context(|| format!("installing {}", installed.display()))?;
    if replaced {
        std::fs::remove_dir_all(&retired)
            .with_context(|| format!("removing {}", retired.display()))?;
    }
    Ok(replaced)
}

fn shown(dirs: &[PathBuf]) -> String {
    let dirs: Vec<String> = dirs.iter().map(|dir| dir.display().to_string()).collect();
    dirs.join(", ")
}
