//! Where a module specifier leads, as Node finds it: built-in names
//! (`fs`, `node:path`), paths relative to the importing file or absolute
//! (with Node's extensions and `index` files tried for `require`, and for
//! `import` too, since scripts written for bundlers leave them out), `file:`
//! URLs, and packages in `node_modules` folders up the tree (their
//! `exports` for `.`, or `main`). And which format a file is: ES module,
//! CommonJS or JSON.

use std::path::{Component, Path, PathBuf};

use serde_json::Value as Json;

/// Node's built-in modules this interpreter has.
pub const BUILTINS: &[&str] = &[
    "assert",
    "assert/strict",
    "buffer",
    "child_process",
    "events",
    "fs",
    "fs/promises",
    "module",
    "os",
    "path",
    "path/posix",
    "process",
    "timers",
    "timers/promises",
    "url",
    "util",
];

/// Node's other built-in modules: they have no place in the sandbox (no
/// processes, network, threads or terminal) or are not built here, and
/// asking for one says so rather than looking for a package.
const UNAVAILABLE: &[&str] = &[
    "async_hooks",
    "cluster",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "http",
    "http2",
    "https",
    "inspector",
    "net",
    "perf_hooks",
    "punycode",
    "querystring",
    "readline",
    "repl",
    "sqlite",
    "stream",
    "string_decoder",
    "tls",
    "trace_events",
    "tty",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

/// Who asks: `require` or `import`; they choose different `exports`
/// conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Require,
    Import,
}

/// A module's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Module,
    CommonJs,
    Json,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Module => "module",
            Format::CommonJs => "commonjs",
            Format::Json => "json",
        }
    }
}

/// The name QuickJS and `require` know the module `request` (asked for
/// from the folder `from`) by: `node:NAME` for a built-in, else the file's
/// absolute path.
pub fn specifier(request: &str, from: &str, mode: Mode) -> Result<String, String> {
    Ok(match resolve(request, from, mode)? {
        Resolved::Builtin(name) => format!("node:{name}"),
        Resolved::File(path) => path,
    })
}

/// What a specifier resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Resolved {
    /// A built-in module, by its name without `node:`.
    Builtin(String),
    /// A file, by its absolute path.
    File(String),
}

/// Resolves `request` from the folder `from` (an absolute path).
fn resolve(request: &str, from: &str, mode: Mode) -> Result<Resolved, String> {
    let bare = request.strip_prefix("node:").unwrap_or(request);
    if BUILTINS.contains(&bare) {
        return Ok(Resolved::Builtin(bare.to_owned()));
    }
    let family = bare.split('/').next().unwrap_or(bare);
    if request.starts_with("node:") || UNAVAILABLE.contains(&family) {
        return Err(format!(
            "Cannot find module '{request}': Node's `{family}` is not available in the sandbox (its node has {})",
            BUILTINS.join(", ")
        ));
    }
    if let Some(url) = request.strip_prefix("file://") {
        let path = url.split(['?', '#']).next().unwrap_or_default();
        return file_or_folder(&normalize(Path::new(&percent_decode(path))));
    }
    if request.starts_with('/')
        || request.starts_with("./")
        || request.starts_with("../")
        || request == "."
        || request == ".."
    {
        let path = normalize(&Path::new(from).join(request));
        return file_or_folder(&path);
    }
    package(request, from, mode)
}

/// `path` itself, with an extension, or the folder's entry.
fn file_or_folder(path: &Path) -> Result<Resolved, String> {
    if let Some(found) = file(path) {
        return Ok(found);
    }
    if path.is_dir()
        && let Some(main) = manifest(path).and_then(|manifest| {
            manifest
                .get("main")
                .and_then(|main| main.as_str().map(str::to_owned))
        })
        && let Ok(found) = entry_of(&normalize(&path.join(main)))
    {
        return Ok(found);
    }
    entry_of(path)
}

/// A `main` or `exports` target: a file, or a folder's `index` file.
fn entry_of(path: &Path) -> Result<Resolved, String> {
    if let Some(found) = file(path) {
        return Ok(found);
    }
    for index in ["index.js", "index.mjs", "index.cjs", "index.json"] {
        let candidate = path.join(index);
        if candidate.is_file() {
            return Ok(Resolved::File(shown(&candidate)));
        }
    }
    Err(format!("Cannot find module '{}'", shown(path)))
}

/// `path`, or `path` with one of Node's extensions, when it is a file.
fn file(path: &Path) -> Option<Resolved> {
    if path.is_file() {
        return Some(Resolved::File(shown(path)));
    }
    for extension in ["js", "mjs", "cjs", "json"] {
        let mut candidate = path.as_os_str().to_owned();
        candidate.push(".");
        candidate.push(extension);
        let candidate = PathBuf::from(candidate);
        if candidate.is_file() {
            return Some(Resolved::File(shown(&candidate)));
        }
    }
    None
}

/// A package `name` or `name/sub/path` in `node_modules` up from `from`.
fn package(request: &str, from: &str, mode: Mode) -> Result<Resolved, String> {
    let mut parts = request.splitn(if request.starts_with('@') { 3 } else { 2 }, '/');
    let name: String = if request.starts_with('@') {
        let scope = parts.next().unwrap_or_default();
        let name = parts.next().unwrap_or_default();
        format!("{scope}/{name}")
    } else {
        parts.next().unwrap_or_default().to_owned()
    };
    let subpath = parts.next();
    let mut folder = Some(Path::new(from));
    while let Some(dir) = folder {
        let root = dir.join("node_modules").join(&name);
        if root.is_dir() {
            if let Some(subpath) = subpath {
                return file_or_folder(&normalize(&root.join(subpath)));
            }
            if let Some(entry) = manifest(&root).and_then(|manifest| entry(&manifest, mode))
                && let Ok(found) = entry_of(&normalize(&root.join(entry)))
            {
                return Ok(found);
            }
            return file_or_folder(&root);
        }
        folder = dir.parent();
    }
    Err(format!(
        "Cannot find module '{request}' (no node_modules/{name} from {from} up; the sandbox installs no packages)"
    ))
}

/// A package's entry for `mode`: its `exports` for `.`, then its `main`.
fn entry(manifest: &Json, mode: Mode) -> Option<String> {
    if let Some(exports) = manifest.get("exports") {
        let root = match exports.get(".") {
            Some(root) => root,
            None => exports,
        };
        if let Some(found) = condition(root, mode) {
            return Some(found);
        }
    }
    manifest
        .get("main")
        .and_then(Json::as_str)
        .map(str::to_owned)
}

/// The target of an `exports` value under `mode`'s conditions.
fn condition(value: &Json, mode: Mode) -> Option<String> {
    if let Some(target) = value.as_str() {
        return Some(target.to_owned());
    }
    let wanted: &[&str] = match mode {
        Mode::Require => &["require", "node", "default"],
        Mode::Import => &["import", "node", "default"],
    };
    for name in wanted {
        if let Some(found) = value.get(name).and_then(|inner| condition(inner, mode)) {
            return Some(found);
        }
    }
    None
}

/// The format of the file at `path`: by its extension, then by the
/// nearest `package.json`'s `type`; a file that says neither is CommonJS
/// unless, as Node 22 decides, it has `import` or `export` statements and
/// does not compile as CommonJS (`compiles` says whether a source does).
pub fn format(path: &str, compiles: impl Fn(&str) -> bool) -> Format {
    if path.ends_with(".json") {
        return Format::Json;
    }
    if path.ends_with(".mjs") {
        return Format::Module;
    }
    if path.ends_with(".cjs") {
        return Format::CommonJs;
    }
    let mut folder = Path::new(path).parent();
    while let Some(dir) = folder {
        if let Some(manifest) = manifest(dir) {
            match manifest.get("type").and_then(Json::as_str) {
                Some("module") => return Format::Module,
                Some("commonjs") => return Format::CommonJs,
                _ => break,
            }
        }
        folder = dir.parent();
    }
    match std::fs::read_to_string(path) {
        Ok(source) if has_module_syntax(&source) && !compiles(&source) => Format::Module,
        _ => Format::CommonJs,
    }
}

/// Whether `source` has a line starting with an `import` or `export`
/// statement.
pub fn has_module_syntax(source: &str) -> bool {
    source.lines().any(|line| {
        let line = line.trim_start();
        let statement = |keyword: &str| {
            line.strip_prefix(keyword)
                .is_some_and(|rest| rest.starts_with([' ', '{', '*', '"', '\'']))
        };
        (statement("import") && !line.starts_with("import(")) || statement("export")
    })
}

/// `path` without `.` and `..` parts.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// `text` with its `%XX` escapes decoded.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escaped = (bytes[at] == b'%')
            .then(|| text.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `file:` URL of the absolute `path`, with the characters a URL path
/// cannot hold escaped.
pub fn file_url(path: &str) -> String {
    let mut url = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte) {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A parsed `package.json`, when the folder has a readable one.
fn manifest(dir: &Path) -> Option<Json> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    serde_json::from_str(&text).ok()
}
