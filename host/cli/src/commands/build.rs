//! `cordon build`: run each bundle's `[build]` command, say what it made, and
//! compile the result into the cache so the first call does not pay for it.
//!
//! A folder given is a bundle (it holds `plugin.toml`) or a folder of
//! bundles. The command runs with `sh -c` in the bundle folder, with
//! `CORDON_WIT` and `CORDON_SDK` naming Cordon's WIT and SDKs as this binary
//! embeds them, and `CORDON` naming this binary (for `$CORDON sdk ...`). Building runs code from the bundle's author on this machine,
//! as `make` would; loading a bundle never builds it.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use cordon_wasm::manifest::MANIFEST_FILE;
use cordon_wasm::{
    Approvals, BundleKind, CacheOutcome, LoadedBundle, Manifest, Request, UntrustedProfile,
};

use crate::args::GlobalArgs;
use crate::commands::grants;
use crate::context;
use crate::embedded::Sdk;
use crate::operator::Operator;

/// What `cordon build` builds.
#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// Bundle folders, or folders of bundle folders.
    #[arg(default_value = ".")]
    pub dirs: Vec<PathBuf>,
    /// Do not compile the built components into the cache.
    #[arg(long)]
    pub no_compile: bool,
    /// Approve what each bundle built asks for, for the component just built
    /// and its manifest, as `cordon grants approve NAME --yes` would: the
    /// author's own bundle, callable at once. Prints what is approved and
    /// what changed since the last approval.
    #[arg(long)]
    pub approve: bool,
}

pub(crate) async fn run(global: &GlobalArgs, args: BuildArgs) -> anyhow::Result<ExitCode> {
    let bundles = bundle_folders(&args.dirs)?;
    let sdk = Sdk::materialize(&context::cache_root(&global.settings()))?;
    let operator = Operator::load(&global.settings())?;
    // Compiling checks no approval: the bundle was just built from its
    // author's source on this machine. Whether it may load is said after.
    let host = (!args.no_compile)
        .then(|| context::host(&global.settings(), &operator))
        .transpose()?
        .map(|host| host.with_approvals(Approvals::unchecked()));
    let cordon = std::env::current_exe().context("cannot find the running `cordon`")?;
    let mut failed = 0;
    let mut built = 0;
    for dir in &bundles {
        let manifest = match Manifest::load(&dir.join(MANIFEST_FILE)) {
            Ok(manifest) => manifest,
            Err(error) => {
                eprintln!("error: {error}");
                failed += 1;
                continue;
            }
        };
        let Some(recipe) = &manifest.build else {
            println!(
                "skip   {} ({}): no [build] table",
                manifest.name,
                dir.display()
            );
            continue;
        };
        println!("build  {} ({})", manifest.name, dir.display());
        println!("       $ {}", recipe.command);
        let component = dir.join(&manifest.component);
        let before = std::fs::read(&component).ok();
        let started = Instant::now();
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&recipe.command)
            .current_dir(dir)
            .env("CORDON_WIT", sdk.wit())
            .env("CORDON_SDK", sdk.sdks())
            .env("CORDON", &cordon);
        if let Some(cache) = &global.cache_dir {
            // `$CORDON sdk ...` then finds the same written-out SDK.
            command.env("CORDON_CACHE_DIR", std::path::absolute(cache)?);
        }
        if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
            // With RUST_BACKTRACE set, toolchains written in Rust (such as
            // componentize-py) bury a build error under the stack of their own
            // error value; a panic's backtrace stays, and setting
            // RUST_LIB_BACKTRACE brings the rest back.
            command.env("RUST_LIB_BACKTRACE", "0");
        }
        let status = command
            .status()
            .with_context(|| format!("cannot run `sh` for {}", dir.display()))?;
        if !status.success() {
            // `sh` exits 127 when it cannot find a program the command runs.
            let hint = if status.code() == Some(127) {
                "; a program it runs was not found: is its toolchain installed and on PATH?"
            } else {
                ""
            };
            eprintln!(
                "error: {}: field `build.command` failed ({status}) after {:.1} s; its output is above{hint}",
                dir.join(MANIFEST_FILE).display(),
                started.elapsed().as_secs_f64()
            );
            failed += 1;
            continue;
        }
        let Ok(after) = std::fs::read(&component) else {
            eprintln!(
                "error: {}: the build succeeded but did not write {}, which field `plugin.component` names",
                dir.join(MANIFEST_FILE).display(),
                component.display()
            );
            failed += 1;
            continue;
        };
        println!(
            "       {}: {}, {} in {:.1} s",
            manifest.component.display(),
            size(after.len()),
            match &before {
                None => "new".to_owned(),
                Some(old) if *old == after => "unchanged".to_owned(),
                Some(old) => format!("changed (was {})", size(old.len())),
            },
            started.elapsed().as_secs_f64()
        );
        if let Some(host) = &host {
            let started = Instant::now();
            match host.load_bundle(dir, &global.workspace).await {
                Ok(loaded) => {
                    println!(
                        "       {}; {}; {}",
                        match loaded.cache {
                            CacheOutcome::Hit => "already compiled".to_owned(),
                            CacheOutcome::Compiled => format!(
                                "compiled in {:.1} s and cached for the first call",
                                started.elapsed().as_secs_f64()
                            ),
                            CacheOutcome::Uncached => format!(
                                "compiled in {:.1} s (caching is off)",
                                started.elapsed().as_secs_f64()
                            ),
                            CacheOutcome::Replaced(why) => format!(
                                "compiled in {:.1} s and cached, replacing a cached entry refused because {why}",
                                started.elapsed().as_secs_f64()
                            ),
                        },
                        provides(&loaded),
                        loaded.bundle.footprint
                    );
                    if !args.approve
                        && let Err(reason) = standing(&operator, dir)
                    {
                        println!("       it does not load yet: {reason} (or build with --approve)");
                    }
                }
                Err(error) => {
                    eprintln!("error: {error}");
                    failed += 1;
                    continue;
                }
            }
        }
        if args.approve {
            approve(global, dir)?;
        }
        built += 1;
    }
    println!("{built} bundle(s) built, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Whether the bundle in `dir` loads under the operator's approvals, and
/// if not, why.
fn standing(operator: &Operator, dir: &std::path::Path) -> Result<(), String> {
    let request = Request::read(dir, None, &UntrustedProfile::default())
        .map_err(|error| error.to_string())?;
    operator
        .approvals
        .check(
            request.presented(),
            &context::bundled().map_err(|error| error.to_string())?,
        )
        .map(drop)
        .map_err(|reason| reason.to_string())
}

/// Approve what the bundle in `dir` asks for, for its component and
/// manifest as they are now, saying what is approved and what changed; the
/// approvals are read afresh, so each bundle of one build adds its own.
fn approve(global: &GlobalArgs, dir: &std::path::Path) -> anyhow::Result<()> {
    let operator = Operator::load(&global.settings())?;
    let request = Request::read(dir, None, &UntrustedProfile::default())?;
    grants::record(
        &operator,
        &context::bundled()?,
        (dir, &request),
        &[],
        grants::Consent::Given,
    )?;
    Ok(())
}

/// What a loaded bundle provides, in a few words.
fn provides(loaded: &LoadedBundle) -> String {
    let manifest = &loaded.bundle.manifest;
    match manifest.kind {
        BundleKind::Tool => {
            let names: Vec<&str> = loaded.tools.iter().map(|tool| tool.name.as_str()).collect();
            format!("tools: {}", names.join(", "))
        }
        BundleKind::Hook => {
            let phases: Vec<&str> = manifest.hooks.iter().map(|phase| phase.as_str()).collect();
            format!("hooks: {}", phases.join(", "))
        }
        BundleKind::Sandbox => "a workspace backend".to_owned(),
        BundleKind::Interpreter => format!("an interpreter of {}", manifest.commands.join(", ")),
        BundleKind::Command => format!("the commands {}", manifest.commands.join(", ")),
    }
}

/// Each folder of `dirs` that holds a manifest, or else each sub-folder of it
/// that does, in name order.
fn bundle_folders(dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut bundles = Vec::new();
    for dir in dirs {
        if dir.join(MANIFEST_FILE).is_file() {
            bundles.push(dir.clone());
            continue;
        }
        let mut inside: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("{}: not a bundle folder and cannot be read", dir.display()))?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.join(MANIFEST_FILE).is_file())
            .collect();
        if inside.is_empty() {
            anyhow::bail!(
                "{}: neither a bundle folder (no {MANIFEST_FILE}) nor a folder of bundles",
                dir.display()
            );
        }
        inside.sort();
        bundles.extend(inside);
    }
    Ok(bundles)
}

/// `bytes` for a person: KB or MB with one decimal.
fn size(bytes: usize) -> String {
    let bytes = bytes as f64;
    if bytes >= 1e6 {
        format!("{:.1} MB", bytes / 1e6)
    } else {
        format!("{:.1} KB", bytes / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_kilobytes_or_megabytes() {
        assert_eq!(size(163_000), "163.0 KB");
        assert_eq!(size(18_400_000), "18.4 MB");
    }

    #[test]
    fn a_folder_is_a_bundle_or_holds_bundles() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("b/inner")).unwrap();
        std::fs::create_dir_all(root.path().join("a")).unwrap();
        std::fs::write(root.path().join("a").join(MANIFEST_FILE), "").unwrap();
        std::fs::write(root.path().join("b").join(MANIFEST_FILE), "").unwrap();
        let found = bundle_folders(&[root.path().to_owned()]).unwrap();
        assert_eq!(found, vec![root.path().join("a"), root.path().join("b")]);
        let one = bundle_folders(&[root.path().join("a")]).unwrap();
        assert_eq!(one, vec![root.path().join("a")]);
        let error = bundle_folders(&[root.path().join("b/inner")]).unwrap_err();
        assert!(
            error.to_string().contains("neither a bundle folder"),
            "{error}"
        );
    }
}
