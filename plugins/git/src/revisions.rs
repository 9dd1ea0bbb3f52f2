//! `git rev-parse`: revisions to object names, and where the repository is.

use std::io::Write;

use crate::failure::{Failure, OrFatal};

/// `git rev-parse [--short[=N]] [--abbrev-ref] [--verify] [--show-toplevel]
/// [--git-dir] [--is-inside-work-tree] [REV...]`.
pub fn run(repo: &gix::Repository, args: &[String], out: &mut dyn Write) -> Result<i32, Failure> {
    let mut short: Option<usize> = None;
    let mut abbrev_ref = false;
    let mut verify = false;
    for arg in args {
        match arg.as_str() {
            "--verify" => verify = true,
            "--quiet" | "-q" => {}
            "--short" => short = Some(7),
            "--abbrev-ref" => abbrev_ref = true,
            "--show-toplevel" => {
                let workdir = repo
                    .workdir()
                    .ok_or_else(|| Failure::fatal("this operation must be run in a work tree"))?;
                let absolute = std::path::absolute(workdir)?;
                writeln!(out, "{}", absolute.display())?;
            }
            "--git-dir" => writeln!(out, "{}", git_dir(repo))?,
            "--is-inside-work-tree" => writeln!(out, "{}", repo.workdir().is_some())?,
            "--is-bare-repository" => writeln!(out, "{}", repo.is_bare())?,
            _ => {
                if let Some(length) = arg.strip_prefix("--short=") {
                    let length: usize = length
                        .parse()
                        .map_err(|_| Failure::usage(format!("bad length: {arg}")))?;
                    short = Some(length.clamp(4, 40));
                } else if arg.starts_with('-') {
                    return Err(Failure::usage(format!("unknown option {arg}")));
                } else if abbrev_ref {
                    writeln!(out, "{}", abbreviated_ref(repo, arg)?)?;
                } else {
                    let Ok(id) = resolve(repo, arg) else {
                        if verify {
                            return Err(Failure::fatal("Needed a single revision"));
                        }
                        // git echoes an argument it cannot resolve, then fails.
                        writeln!(out, "{arg}")?;
                        return Err(resolve(repo, arg).unwrap_err());
                    };
                    match short {
                        Some(length) => writeln!(out, "{}", id.to_hex_with_len(length))?,
                        None => writeln!(out, "{id}")?,
                    }
                }
            }
        }
    }
    Ok(0)
}

/// The object `spec` names.
pub fn resolve(repo: &gix::Repository, spec: &str) -> Result<gix::ObjectId, Failure> {
    repo.rev_parse_single(spec)
        .map(|id| id.detach())
        .map_err(|_| {
            Failure::fatal(format!(
                "ambiguous argument '{spec}': unknown revision or path not in the working tree."
            ))
        })
}

/// The branch `spec` names, as `--abbrev-ref` prints it.
fn abbreviated_ref(repo: &gix::Repository, spec: &str) -> Result<String, Failure> {
    if spec == "HEAD" {
        return Ok(match repo.head_name().or_fatal()? {
            Some(name) => name.shorten().to_string(),
            None => "HEAD".to_owned(),
        });
    }
    match repo.find_reference(spec) {
        Ok(reference) => Ok(reference.name().shorten().to_string()),
        Err(_) => resolve(repo, spec).map(|_| spec.to_owned()),
    }
}

/// The repository's folder, as git prints it: relative when it is the
/// `.git` of the working directory.
fn git_dir(repo: &gix::Repository) -> String {
    let path = repo.git_dir();
    match std::env::current_dir() {
        Ok(cwd) if cwd.join(".git") == path || path == std::path::Path::new(".git") => {
            ".git".to_owned()
        }
        _ => path.display().to_string(),
    }
}
