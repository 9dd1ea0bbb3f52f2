//! `git ls-files`: the paths the index tracks.

use std::io::Write;

use crate::failure::{Failure, OrFatal};

/// `git ls-files [PATH...]`: tracked paths, or those under the paths given.
pub fn run(repo: &gix::Repository, args: &[String], out: &mut dyn Write) -> Result<i32, Failure> {
    let mut prefixes = Vec::new();
    for arg in args {
        match arg.as_str() {
            "--" | "--cached" | "-c" => {}
            option if option.starts_with('-') => {
                return Err(Failure::usage(format!(
                    "unknown option {option}; ls-files here lists tracked paths"
                )));
            }
            path => prefixes.push(path.trim_end_matches('/').to_owned()),
        }
    }
    let index = repo.index_or_empty().or_fatal()?;
    for entry in index.entries() {
        let path = entry.path(&index).to_string();
        let selected = prefixes.is_empty()
            || prefixes.iter().any(|prefix| {
                prefix == "." || path == *prefix || path.starts_with(&format!("{prefix}/"))
            });
        if selected {
            writeln!(out, "{path}")?;
        }
    }
    Ok(0)
}
