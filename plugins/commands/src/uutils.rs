//! The commands from uutils coreutils: each utility's `uumain`, run with
//! its messages loaded (uutils prints message keys without them).

use std::ffi::OsString;

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

/// The utility called `name`, ready to run with `argv`, if uutils has it.
pub fn find(name: &str) -> Option<impl FnOnce(Vec<String>) -> i32> {
    let (_, main) = UTILITIES.iter().find(|(utility, _)| *utility == name)?;
    Some(move |args: Vec<String>| {
        if let Err(error) = uucore::locale::setup_localization(name) {
            eprintln!("{name}: cannot load its messages: {error}");
        }
        let argv: Vec<OsString> = std::iter::once(name.to_owned())
            .chain(args)
            .map(OsString::from)
            .collect();
        main(argv.into_iter())
    })
}
