//! The native operations the script's JavaScript is built on, on the
//! global `__host` that `node.js` takes and removes: files through WASI
//! (so only what the command's view holds), standard streams, clocks,
//! module resolution and `process.exit`. Each failure is thrown as Node's
//! own error: `ENOENT: no such file or directory, open 'x'` with its
//! `code`, `errno`, `syscall` and `path`.

use std::cell::Cell;
use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rquickjs::context::EvalOptions;
use rquickjs::function::Opt;
use rquickjs::{Ctx, Exception, Function, Module, Object, Promise, Result, TypedArray, Value};

use crate::resolve::{self, Mode};

/// What a run's native side keeps: the status `process.exit` asked for,
/// and whether the script is being stopped where it stands (until the
/// `exit` handlers run).
#[derive(Default)]
pub struct Exit {
    pub status: Cell<Option<i32>>,
    pub stopping: Cell<bool>,
}

/// Puts `__host` on the global object of `ctx`.
pub fn install(ctx: &Ctx<'_>, exit: Rc<Exit>) -> Result<()> {
    let host = Object::new(ctx.clone())?;
    let started = Instant::now();
    host.set("readFile", Function::new(ctx.clone(), read_file)?)?;
    host.set("readText", Function::new(ctx.clone(), read_text)?)?;
    host.set("writeFile", Function::new(ctx.clone(), write_file)?)?;
    host.set("stat", Function::new(ctx.clone(), stat)?)?;
    host.set("readdir", Function::new(ctx.clone(), readdir)?)?;
    host.set("mkdir", Function::new(ctx.clone(), mkdir)?)?;
    host.set("remove", Function::new(ctx.clone(), remove)?)?;
    host.set("rename", Function::new(ctx.clone(), rename)?)?;
    host.set("copyFile", Function::new(ctx.clone(), copy_file)?)?;
    host.set("cwd", Function::new(ctx.clone(), cwd)?)?;
    host.set("chdir", Function::new(ctx.clone(), chdir)?)?;
    host.set("write", Function::new(ctx.clone(), write)?)?;
    host.set("readStdin", Function::new(ctx.clone(), read_stdin)?)?;
    host.set("encode", Function::new(ctx.clone(), encode)?)?;
    host.set("decode", Function::new(ctx.clone(), decode)?)?;
    host.set(
        "monotonic",
        Function::new(ctx.clone(), move || {
            started.elapsed().as_secs_f64() * 1000.0
        })?,
    )?;
    host.set(
        "sleep",
        Function::new(ctx.clone(), |ms: f64| {
            if let Ok(wait) = Duration::try_from_secs_f64(ms / 1000.0) {
                std::thread::sleep(wait);
            }
        })?,
    )?;
    host.set(
        "exit",
        Function::new(ctx.clone(), move |status: i32| {
            exit.status.set(Some(status & 0xFF));
            exit.stopping.set(true);
        })?,
    )?;
    host.set("resolve", Function::new(ctx.clone(), resolve_specifier)?)?;
    host.set(
        "format",
        Function::new(ctx.clone(), |ctx: Ctx<'_>, path: String| {
            resolve::format(&path, |source| {
                crate::modules::compiles_as_commonjs(&ctx, source)
            })
            .name()
        })?,
    )?;
    host.set("import", Function::new(ctx.clone(), import)?)?;
    host.set("importSource", Function::new(ctx.clone(), import_source)?)?;
    host.set("evalScript", Function::new(ctx.clone(), eval_script)?)?;
    host.set(
        "env",
        Function::new(ctx.clone(), || {
            std::env::vars()
                .map(|(name, value)| vec![name, value])
                .collect::<Vec<Vec<String>>>()
        })?,
    )?;
    ctx.globals().set("__host", host)?;
    Ok(())
}

/// Throws `error` as Node does for the operation `syscall` on `path`.
pub fn throw_io(ctx: &Ctx<'_>, error: &io::Error, syscall: &str, path: &str) -> rquickjs::Error {
    throw_node_error(ctx, error, syscall, path, None)
}

/// Throws `error` as Node does for `syscall` from `path` to `dest`
/// (`rename 'a' -> 'b'`).
fn throw_io_to(
    ctx: &Ctx<'_>,
    error: &io::Error,
    syscall: &str,
    path: &str,
    dest: &str,
) -> rquickjs::Error {
    throw_node_error(ctx, error, syscall, path, Some(dest))
}

fn throw_node_error(
    ctx: &Ctx<'_>,
    error: &io::Error,
    syscall: &str,
    path: &str,
    dest: Option<&str>,
) -> rquickjs::Error {
    let (code, errno, description) = match error.kind() {
        io::ErrorKind::NotFound => ("ENOENT", -2, "no such file or directory"),
        io::ErrorKind::PermissionDenied => ("EACCES", -13, "permission denied"),
        io::ErrorKind::AlreadyExists => ("EEXIST", -17, "file already exists"),
        io::ErrorKind::NotADirectory => ("ENOTDIR", -20, "not a directory"),
        io::ErrorKind::IsADirectory => ("EISDIR", -21, "illegal operation on a directory"),
        io::ErrorKind::DirectoryNotEmpty => ("ENOTEMPTY", -39, "directory not empty"),
        io::ErrorKind::ReadOnlyFilesystem => ("EROFS", -30, "read-only file system"),
        io::ErrorKind::InvalidInput => ("EINVAL", -22, "invalid argument"),
        io::ErrorKind::Unsupported => ("ENOSYS", -38, "function not implemented"),
        io::ErrorKind::StorageFull => ("ENOSPC", -28, "no space left on device"),
        io::ErrorKind::FileTooLarge => ("EFBIG", -27, "file too large"),
        _ => ("EIO", -5, "i/o error"),
    };
    let message = match dest {
        Some(dest) => format!("{code}: {description}, {syscall} '{path}' -> '{dest}'"),
        None => format!("{code}: {description}, {syscall} '{path}'"),
    };
    let made = (|| -> Result<Value<'_>> {
        let exception = Exception::from_message(ctx.clone(), &message)?;
        exception.set("code", code)?;
        exception.set("errno", errno)?;
        exception.set("syscall", syscall)?;
        exception.set("path", path)?;
        if let Some(dest) = dest {
            exception.set("dest", dest)?;
        }
        Ok(exception.into_value())
    })();
    match made {
        Ok(value) => ctx.throw(value),
        Err(error) => error,
    }
}

fn bytes_of(value: &Value<'_>) -> Vec<u8> {
    if let Some(text) = value.as_string() {
        return text.to_string().unwrap_or_default().into_bytes();
    }
    match value
        .as_object()
        .and_then(|object| TypedArray::<u8>::from_object(object.clone()).ok())
    {
        // SAFETY: the slice is copied before any JavaScript runs.
        Some(array) => unsafe { array.as_slice() }.to_vec(),
        None => Vec::new(),
    }
}

fn read_file<'js>(ctx: Ctx<'js>, path: String) -> Result<TypedArray<'js, u8>> {
    match fs::read(&path) {
        Ok(data) => TypedArray::new(ctx, data),
        Err(error) => Err(throw_io(&ctx, &error, "open", &path)),
    }
}

fn read_text(ctx: Ctx<'_>, path: String) -> Result<String> {
    match fs::read(&path) {
        Ok(data) => Ok(String::from_utf8_lossy(&data).into_owned()),
        Err(error) => Err(throw_io(&ctx, &error, "open", &path)),
    }
}

fn write_file<'js>(ctx: Ctx<'js>, path: String, data: Value<'js>, append: Opt<bool>) -> Result<()> {
    let bytes = bytes_of(&data);
    let written = if append.0.unwrap_or(false) {
        fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .and_then(|mut file| file.write_all(&bytes))
    } else {
        fs::write(&path, &bytes)
    };
    written.map_err(|error| throw_io(&ctx, &error, "open", &path))
}

fn millis(time: io::Result<SystemTime>) -> f64 {
    time.ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0.0, |since| since.as_secs_f64() * 1000.0)
}

fn stat<'js>(ctx: Ctx<'js>, path: String, follow: Opt<bool>) -> Result<Object<'js>> {
    let found = if follow.0.unwrap_or(true) {
        fs::metadata(&path)
    } else {
        fs::symlink_metadata(&path)
    };
    let meta = found.map_err(|error| {
        throw_io(
            &ctx,
            &error,
            if follow.0.unwrap_or(true) {
                "stat"
            } else {
                "lstat"
            },
            &path,
        )
    })?;
    let out = Object::new(ctx)?;
    let kind = if meta.is_symlink() {
        "symlink"
    } else if meta.is_dir() {
        "dir"
    } else if meta.is_file() {
        "file"
    } else {
        "other"
    };
    out.set("kind", kind)?;
    out.set("size", meta.len() as f64)?;
    out.set("mtimeMs", millis(meta.modified()))?;
    out.set("atimeMs", millis(meta.accessed()))?;
    out.set("birthtimeMs", millis(meta.created()))?;
    Ok(out)
}

fn readdir(ctx: Ctx<'_>, path: String) -> Result<Vec<Vec<String>>> {
    let entries = fs::read_dir(&path).map_err(|error| throw_io(&ctx, &error, "scandir", &path))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|error| throw_io(&ctx, &error, "scandir", &path))?;
        let kind = match entry.file_type() {
            Ok(kind) if kind.is_symlink() => "symlink",
            Ok(kind) if kind.is_dir() => "dir",
            Ok(kind) if kind.is_file() => "file",
            _ => "other",
        };
        out.push(vec![
            entry.file_name().to_string_lossy().into_owned(),
            kind.to_owned(),
        ]);
    }
    out.sort();
    Ok(out)
}

fn mkdir(ctx: Ctx<'_>, path: String, recursive: Opt<bool>) -> Result<()> {
    let made = if recursive.0.unwrap_or(false) {
        fs::create_dir_all(&path)
    } else {
        fs::create_dir(&path)
    };
    made.map_err(|error| throw_io(&ctx, &error, "mkdir", &path))
}

/// Removes `path`: a file (`unlink`), an empty folder (`rmdir`) or a whole
/// tree (`rm`).
fn remove(ctx: Ctx<'_>, path: String, how: String) -> Result<()> {
    let (removed, syscall) = match how.as_str() {
        "rmdir" => (fs::remove_dir(&path), "rmdir"),
        "tree" => match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => (fs::remove_dir_all(&path), "rm"),
            Ok(_) => (fs::remove_file(&path), "rm"),
            Err(error) => (Err(error), "rm"),
        },
        _ => (fs::remove_file(&path), "unlink"),
    };
    removed.map_err(|error| throw_io(&ctx, &error, syscall, &path))
}

fn rename(ctx: Ctx<'_>, from: String, to: String) -> Result<()> {
    fs::rename(&from, &to).map_err(|error| throw_io_to(&ctx, &error, "rename", &from, &to))
}

fn copy_file(ctx: Ctx<'_>, from: String, to: String) -> Result<()> {
    fs::copy(&from, &to)
        .map(drop)
        .map_err(|error| throw_io_to(&ctx, &error, "copyfile", &from, &to))
}

fn cwd(ctx: Ctx<'_>) -> Result<String> {
    std::env::current_dir()
        .map(|dir| dir.to_string_lossy().into_owned())
        .map_err(|error| throw_io(&ctx, &error, "uv_cwd", "."))
}

fn chdir(ctx: Ctx<'_>, path: String) -> Result<()> {
    std::env::set_current_dir(&path).map_err(|error| throw_io(&ctx, &error, "chdir", &path))
}

/// Writes a string or bytes to standard output (1) or error (2).
fn write<'js>(ctx: Ctx<'js>, fd: i32, data: Value<'js>) -> Result<()> {
    let bytes = bytes_of(&data);
    let written = match fd {
        2 => io::stderr().write_all(&bytes),
        _ => io::stdout().write_all(&bytes),
    };
    written.map_err(|error| {
        throw_io(
            &ctx,
            &error,
            "write",
            if fd == 2 { "stderr" } else { "stdout" },
        )
    })
}

fn read_stdin(ctx: Ctx<'_>) -> Result<TypedArray<'_, u8>> {
    let mut data = Vec::new();
    io::stdin()
        .read_to_end(&mut data)
        .map_err(|error| throw_io(&ctx, &error, "read", "stdin"))?;
    TypedArray::new(ctx, data)
}

fn encode(ctx: Ctx<'_>, text: String) -> Result<TypedArray<'_, u8>> {
    TypedArray::new(ctx, text.into_bytes())
}

fn decode<'js>(ctx: Ctx<'js>, data: Value<'js>, fatal: Opt<bool>) -> Result<String> {
    let bytes = bytes_of(&data);
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) if fatal.0.unwrap_or(false) => Err(Exception::throw_type(
            &ctx,
            "The encoded data was not valid for encoding utf-8",
        )),
        Err(error) => Ok(String::from_utf8_lossy(error.as_bytes()).into_owned()),
    }
}

/// Resolves `request` from the folder `from` for `require` or `import`:
/// `node:NAME` for a built-in, else the file's absolute path.
fn resolve_specifier(ctx: Ctx<'_>, request: String, from: String, mode: String) -> Result<String> {
    let (mode, code) = if mode == "import" {
        (Mode::Import, "ERR_MODULE_NOT_FOUND")
    } else {
        (Mode::Require, "MODULE_NOT_FOUND")
    };
    resolve::specifier(&request, &from, mode).map_err(|message| throw_coded(&ctx, &message, code))
}

/// Throws an `Error` with `message` and Node's `code`.
pub fn throw_coded(ctx: &Ctx<'_>, message: &str, code: &str) -> rquickjs::Error {
    let made = Exception::from_message(ctx.clone(), message)
        .and_then(|exception| exception.set("code", code).map(|()| exception));
    match made {
        Ok(exception) => ctx.throw(exception.into_value()),
        Err(error) => error,
    }
}

/// Imports the ES module at the absolute path `path`: a promise of its
/// namespace.
fn import<'js>(ctx: Ctx<'js>, path: String) -> Result<Promise<'js>> {
    if !Path::new(&path).is_absolute() {
        return Err(Exception::throw_type(&ctx, "import needs an absolute path"));
    }
    Module::import(&ctx, path)
}

/// Evaluates `source` as an ES module named `name` (a path in the working
/// directory that no file needs to hold): a promise of its end.
fn import_source<'js>(ctx: Ctx<'js>, name: String, source: String) -> Result<Promise<'js>> {
    let module = Module::declare(ctx.clone(), name.clone(), source)?;
    let meta = module.meta()?;
    meta.set("url", resolve::file_url(&name))?;
    let (_, done) = module.eval()?;
    Ok(done)
}

/// Evaluates `source` as a classic script named `name` (not strict unless
/// it says so), in the global scope: its completion value.
fn eval_script<'js>(ctx: Ctx<'js>, source: String, name: String) -> Result<Value<'js>> {
    let mut options = EvalOptions::default();
    options.strict = false;
    options.backtrace_barrier = true;
    options.filename = Some(name);
    ctx.eval_with_options(source, options)
}
