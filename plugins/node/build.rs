//! Compiles `src/node.js`, the JavaScript half of the interpreter, into
//! QuickJS bytecode once, at build time, so that a run loads it instead of
//! parsing it again (most of a fresh run's time otherwise). Bytecode is the
//! same on every target of one QuickJS version: it is written here by the
//! same rquickjs the component embeds.

use std::path::PathBuf;

use rquickjs::module::WriteOptions;
use rquickjs::{Context, Module, Runtime};

fn main() {
    println!("cargo:rerun-if-changed=src/node.js");
    let source = std::fs::read_to_string("src/node.js").expect("read src/node.js");
    let runtime = Runtime::new().expect("a QuickJS runtime");
    let context = Context::full(&runtime).expect("a QuickJS context");
    let bytecode = context.with(|ctx| {
        let module =
            Module::declare(ctx.clone(), "node:internal", source).unwrap_or_else(|error| {
                panic!("src/node.js does not compile: {error}: {:?}", ctx.catch())
            });
        module
            .write(WriteOptions::default())
            .expect("write the bytecode")
    });
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("node.qjsbc");
    std::fs::write(out, bytecode).expect("write node.qjsbc");
}
