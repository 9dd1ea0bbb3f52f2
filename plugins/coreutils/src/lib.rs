//! Everyday commands for sandbox backends' shells, from uutils coreutils:
//! one component serving each command its manifest names. The shell hands
//! a command it does not have to the host, which runs a fresh instance of
//! this bundle over the command's view of the workspace; the command's name
//! is `argv[0]`, its streams are the command's, and its exit status comes
//! back through Cordon's own `interpreter` interface, whole (WASI's `run`
//! would carry only success or failure).

wit_bindgen::generate!({
    path: "../../wit",
    world: "interpreter-plugin",
});

use std::ffi::OsString;
use std::io::Write;

use exports::cordon::plugin::interpreter::Guest;

/// A utility's entry point.
type Main = fn(std::vec::IntoIter<OsString>) -> i32;

/// The utilities by command name. Those that keep data in a temporary file
/// (`tac` and `sort` on standard input) are left out: the standard library
/// has no temporary directory on WASI.
const UTILITIES: &[(&str, Main)] = &[
    ("basename", uu_basename::uumain),
    ("comm", uu_comm::uumain),
    ("date", uu_date::uumain),
    ("dirname", uu_dirname::uumain),
    ("expr", uu_expr::uumain),
    ("fold", uu_fold::uumain),
    ("join", uu_join::uumain),
    ("md5sum", uu_md5sum::uumain),
    ("nl", uu_nl::uumain),
    ("paste", uu_paste::uumain),
    ("realpath", uu_realpath::uumain),
    ("seq", uu_seq::uumain),
    ("sha256sum", uu_sha256sum::uumain),
    ("sleep", uu_sleep::uumain),
    ("tee", uu_tee::uumain),
    ("tr", uu_tr::uumain),
];

/// The bundle.
struct Coreutils;

impl Guest for Coreutils {
    fn run(args: Vec<String>, cwd: String, env: Vec<(String, String)>) -> i32 {
        let name = std::env::args().next().unwrap_or_default();
        let Some((_, main)) = UTILITIES.iter().find(|(utility, _)| *utility == name) else {
            eprintln!("{name}: not a command of this bundle");
            return 127;
        };
        if let Err(error) = std::env::set_current_dir(&cwd) {
            eprintln!("{name}: {cwd}: {error}");
            return 126;
        }
        for (variable, value) in env {
            // SAFETY: one thread runs in this instance, and nothing else
            // reads the environment while it changes.
            unsafe { std::env::set_var(variable, value) };
        }
        if let Err(error) = uucore::locale::setup_localization(&name) {
            eprintln!("{name}: cannot load its messages: {error}");
        }
        let argv: Vec<OsString> = std::iter::once(name)
            .chain(args)
            .map(OsString::from)
            .collect();
        let code = main(argv.into_iter());
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        code
    }
}

export!(Coreutils);
