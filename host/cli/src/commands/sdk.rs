//! `cordon sdk`: Cordon's WIT and SDKs for build commands. `path` prints
//! where they are; `bindings` writes a world's bindings for C or Go (with
//! wit-bindgen's generators; for Go, with the runtime package they import);
//! `component` turns a core module built against them into a component (with
//! wit-component and wasmtime's WASI preview 1 reactor adapter, embedding the
//! world's type first when the toolchain did not link it), so a C tool needs
//! only clang and wasi-libc, and a Go tool only Go.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use wit_parser::{Resolve, WorldId};

use crate::args::GlobalArgs;
use crate::context;
use crate::embedded::{self, Sdk};

/// What `cordon sdk bindings` writes.
#[derive(Debug, Args)]
pub(crate) struct BindingsArgs {
    /// The language: `c` or `go`.
    #[arg(value_enum)]
    pub lang: BindingsLanguage,
    /// The folder to write them to.
    pub out: PathBuf,
    /// The world the bindings are for.
    #[arg(long, default_value = "tool-plugin")]
    pub world: String,
}

/// Languages `cordon sdk bindings` writes bindings for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum BindingsLanguage {
    /// C: `WORLD.h`, `WORLD.c` and `WORLD_component_type.o`.
    C,
    /// Go: a `wit_component` module (`go.mod`, `wit_exports.go`, one package per interface).
    Go,
}

/// What `cordon sdk component` makes.
#[derive(Debug, Args)]
pub(crate) struct ComponentArgs {
    /// The core module, linked with the bindings' component type object.
    pub module: PathBuf,
    /// The component to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Embed this world's component type first, for a module whose toolchain
    /// did not link the bindings' (Go).
    #[arg(long)]
    pub world: Option<String>,
}

pub(crate) fn path(global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let sdk = Sdk::materialize(&context::cache_root(&global.settings()))?;
    println!("CORDON_WIT={}", sdk.wit().display());
    println!("CORDON_SDK={}", sdk.sdks().display());
    Ok(ExitCode::SUCCESS)
}

/// Cordon's WIT, resolved, and its world `name`.
fn world(global: &GlobalArgs, name: &str) -> anyhow::Result<(Resolve, WorldId)> {
    let sdk = Sdk::materialize(&context::cache_root(&global.settings()))?;
    let mut resolve = Resolve::default();
    let (package, _) = resolve
        .push_dir(sdk.wit())
        .context("reading Cordon's WIT")?;
    let world = resolve
        .select_world(&[package], Some(name))
        .with_context(|| format!("world `{name}`"))?;
    Ok((resolve, world))
}

pub(crate) fn bindings(global: &GlobalArgs, args: BindingsArgs) -> anyhow::Result<ExitCode> {
    let (mut resolve, world) = world(global, &args.world)?;
    let mut generator = match args.lang {
        BindingsLanguage::C => wit_bindgen_c::Opts::default().build(),
        BindingsLanguage::Go => wit_bindgen_go::Opts::default().build(),
    };
    let mut files = wit_bindgen_core::Files::default();
    generator
        .generate(&mut resolve, world, &mut files)
        .with_context(|| format!("generating bindings for world `{}`", args.world))?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    if let BindingsLanguage::Go = args.lang {
        go_runtime(&mut files)?;
    }
    for (name, contents) in files.iter() {
        let target = args.out.join(name);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&target, contents)
            .with_context(|| format!("writing {}", target.display()))?;
        println!("{}", target.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Add the Go runtime package the bindings import as `pkg/`, and point the
/// module at it, so the build needs no Go module proxy.
fn go_runtime(files: &mut wit_bindgen_core::Files) -> anyhow::Result<()> {
    let runtime = embedded::files(&embedded::GO_PKG);
    if runtime.is_empty() {
        bail!(
            "this cordon was built without the Go runtime package (the `wit-bindgen-go` crate's source was not in Cargo's registry)"
        );
    }
    for (path, bytes) in runtime {
        files.push(&format!("pkg/wit/{}", path.display()), bytes);
    }
    files.push("pkg/go.mod", embedded::GO_PKG_MODULE.as_bytes());
    files.push("pkg/LICENSE", embedded::GO_PKG_LICENSE.as_bytes());
    // `push` appends to the generated go.mod.
    files.push(
        "go.mod",
        b"\nreplace go.bytecodealliance.org/pkg => ./pkg\n",
    );
    Ok(())
}

pub(crate) fn component(global: &GlobalArgs, args: ComponentArgs) -> anyhow::Result<ExitCode> {
    let mut module = std::fs::read(&args.module)
        .with_context(|| format!("reading {}", args.module.display()))?;
    if let Some(world) = &args.world {
        // A toolchain that does not link the bindings' component type (Go)
        // gets it here, from the world it was built against.
        let (resolve, world) = self::world(global, world)?;
        wit_component::embed_component_metadata(
            &mut module,
            &resolve,
            world,
            wit_component::StringEncoding::UTF8,
        )
        .context("embedding the world's component type")?;
    }
    let component = wit_component::ComponentEncoder::default()
        .module(&module)
        .with_context(|| {
            format!(
                "{}: not a core module carrying a component type; link the bindings' `*_component_type.o` into it",
                args.module.display()
            )
        })?
        .adapter(
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )
        .context("loading the WASI preview 1 adapter")?
        .validate(true)
        .encode()
        .with_context(|| format!("making a component of {}", args.module.display()))?;
    std::fs::write(&args.output, component)
        .with_context(|| format!("writing {}", args.output.display()))?;
    Ok(ExitCode::SUCCESS)
}
