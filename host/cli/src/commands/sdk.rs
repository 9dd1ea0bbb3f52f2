//! `cordon sdk`: Cordon's WIT and SDKs for build commands. `path` prints
//! where they are; `bindings` writes a world's bindings for C (with
//! wit-bindgen's generator); `component` turns a core module built against
//! them into a component (with wit-component and wasmtime's WASI preview 1
//! reactor adapter), so a C tool needs only clang and wasi-libc.

use std::process::ExitCode;

use anyhow::Context;
use wit_parser::Resolve;

use crate::args::{BindingsArgs, BindingsLanguage, ComponentArgs, GlobalArgs};
use crate::context;
use crate::embedded::Sdk;

pub(crate) fn path(global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let sdk = Sdk::materialize(&context::cache_root(global))?;
    println!("CORDON_WIT={}", sdk.wit().display());
    println!("CORDON_SDK={}", sdk.sdks().display());
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn bindings(global: &GlobalArgs, args: BindingsArgs) -> anyhow::Result<ExitCode> {
    let sdk = Sdk::materialize(&context::cache_root(global))?;
    let mut resolve = Resolve::default();
    let (package, _) = resolve
        .push_dir(sdk.wit())
        .context("reading Cordon's WIT")?;
    let world = resolve
        .select_world(&[package], Some(&args.world))
        .with_context(|| format!("world `{}`", args.world))?;
    let mut generator = match args.lang {
        BindingsLanguage::C => wit_bindgen_c::Opts::default().build(),
    };
    let mut files = wit_bindgen_core::Files::default();
    generator
        .generate(&mut resolve, world, &mut files)
        .with_context(|| format!("generating bindings for world `{}`", args.world))?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    for (name, contents) in files.iter() {
        let target = args.out.join(name);
        std::fs::write(&target, contents)
            .with_context(|| format!("writing {}", target.display()))?;
        println!("{}", target.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn component(args: ComponentArgs) -> anyhow::Result<ExitCode> {
    let module = std::fs::read(&args.module)
        .with_context(|| format!("reading {}", args.module.display()))?;
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
