//! ES modules: `import` statements and `import()` resolve as Node resolves
//! them (see `resolve`), and load by format. An ES module file is compiled
//! as one, with `import.meta.url`, `filename` and `dirname` set; a built-in
//! module, a CommonJS file and a JSON file each become a small module whose
//! default export is what `require` gives, and whose named exports are that
//! object's own keys.

use std::path::Path;

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Ctx, Function, Module, Result};

use crate::resolve::{self, Format, Mode};

/// Resolves specifiers for QuickJS.
pub struct NodeResolver;

impl Resolver for NodeResolver {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<String> {
        let from = if base.starts_with('/') {
            Path::new(base)
                .parent()
                .map_or_else(|| "/".to_owned(), |dir| dir.to_string_lossy().into_owned())
        } else {
            std::env::current_dir()
                .map(|dir| dir.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "/".to_owned())
        };
        resolve::specifier(name, &from, Mode::Import).map_err(|message| {
            let shown = if base.starts_with('/') {
                format!("{message} imported from {base}")
            } else {
                message
            };
            crate::host::throw_coded(ctx, &shown, "ERR_MODULE_NOT_FOUND")
        })
    }
}

/// Loads resolved modules for QuickJS.
pub struct NodeLoader;

impl Loader for NodeLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<Module<'js, Declared>> {
        if let Some(builtin) = name.strip_prefix("node:") {
            let source = wrapper(ctx, "builtin", builtin)?;
            return Module::declare(ctx.clone(), name, source);
        }
        match resolve::format(name, |source| compiles_as_commonjs(ctx, source)) {
            Format::Module => {
                let source = match std::fs::read(name) {
                    Ok(source) => source,
                    Err(error) => return Err(crate::host::throw_io(ctx, &error, "open", name)),
                };
                let module = Module::declare(ctx.clone(), name, strip_shebang(source))?;
                let meta = module.meta()?;
                meta.set("url", resolve::file_url(name))?;
                meta.set("filename", name)?;
                let dirname = Path::new(name)
                    .parent()
                    .map_or_else(|| "/".to_owned(), |dir| dir.to_string_lossy().into_owned());
                meta.set("dirname", dirname)?;
                Ok(module)
            }
            Format::CommonJs | Format::Json => {
                let source = wrapper(ctx, "file", name)?;
                Module::declare(ctx.clone(), name, source)
            }
        }
    }
}

/// The source of a module re-exporting `__node.require` of a built-in
/// (`kind` `builtin`) or of a file (`file`): the object as default, its
/// keys that are names as named exports.
fn wrapper(ctx: &Ctx<'_>, kind: &str, name: &str) -> Result<String> {
    let node: rquickjs::Object = ctx.globals().get("__node")?;
    let keys: Function = node.get("exportNames")?;
    let names: Vec<String> = keys.call((kind, name))?;
    let quoted = serde_json::to_string(name).unwrap_or_default();
    let mut source = format!(
        "const __exports = globalThis.__node.exportsOf({}, {quoted});\nexport default __exports;\n",
        serde_json::to_string(kind).unwrap_or_default()
    );
    let names: Vec<String> = names
        .into_iter()
        .filter(|name| name != "__exports")
        .collect();
    if !names.is_empty() {
        source.push_str(&format!(
            "export const {{ {} }} = __exports;\n",
            names.join(", ")
        ));
    }
    Ok(source)
}

/// Whether `source` compiles as the body of a CommonJS module: `import`
/// statements, `import.meta` and top-level `await` do not.
pub fn compiles_as_commonjs(ctx: &Ctx<'_>, source: &str) -> bool {
    let body = match source.strip_prefix("#!") {
        Some(rest) => format!("//{rest}"),
        None => source.to_owned(),
    };
    let compiled = (|| -> Result<()> {
        let constructor: rquickjs::function::Constructor = ctx.globals().get("Function")?;
        constructor.construct::<_, rquickjs::Value>((body,))?;
        Ok(())
    })();
    if compiled.is_err() {
        // The SyntaxError is the answer, not a failure of the script.
        let _ = ctx.catch();
    }
    compiled.is_ok()
}

/// `source` with a `#!` first line blanked (QuickJS would read it as code).
pub fn strip_shebang(mut source: Vec<u8>) -> Vec<u8> {
    if source.starts_with(b"#!") {
        let end = source
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(source.len());
        source.drain(..end);
    }
    source
}
