//! `diff`, by the `similar` crate's Myers diff: GNU's normal and unified
//! (`-u`, `-U N`) formats, `-q`, `-s`, `-N`, `-r` over folders, and its
//! exit status (0 same, 1 different, 2 trouble).

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use similar::{DiffOp, TextDiff};

use crate::plain;

/// What the command line asks for.
struct Options {
    unified: Option<usize>,
    brief: bool,
    report_identical: bool,
    absent_as_empty: bool,
    recursive: bool,
    labels: Vec<String>,
}

/// The outcome of one comparison, ordered by how bad it is.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Same = 0,
    Different = 1,
    Trouble = 2,
}

/// Runs `diff ARGS...` and returns its exit status.
pub fn main(args: Vec<String>) -> i32 {
    let (options, operands) = match parse(args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("diff: {message}");
            return 2;
        }
    };
    let [old, new] = operands.as_slice() else {
        eprintln!(
            "diff: {}",
            if operands.len() < 2 {
                "missing operand: diff [OPTION]... FILE1 FILE2"
            } else {
                "extra operand: diff compares two files or folders"
            }
        );
        return 2;
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let outcome = compare(&options, Path::new(old), Path::new(new), &mut out, true);
    match out.flush() {
        Ok(()) => outcome as i32,
        Err(error) => {
            eprintln!("diff: write error: {error}");
            2
        }
    }
}

fn parse(args: Vec<String>) -> Result<(Options, Vec<String>), String> {
    let mut options = Options {
        unified: None,
        brief: false,
        report_identical: false,
        absent_as_empty: false,
        recursive: false,
        labels: Vec::new(),
    };
    let mut operands = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--" => {
                operands.extend(args.by_ref());
                break;
            }
            "-u" | "--unified" => options.unified = Some(3),
            "-q" | "--brief" => options.brief = true,
            "-s" | "--report-identical-files" => options.report_identical = true,
            "-N" | "--new-file" => options.absent_as_empty = true,
            "-r" | "--recursive" => options.recursive = true,
            "-U" => {
                let lines = args.next().ok_or("option -U needs a number of lines")?;
                options.unified = Some(context_lines(&lines)?);
            }
            "--label" => {
                let label = args.next().ok_or("option --label needs a label")?;
                options.labels.push(label);
            }
            _ => {
                if let Some(lines) = arg.strip_prefix("--unified=") {
                    options.unified = Some(context_lines(lines)?);
                } else if let Some(label) = arg.strip_prefix("--label=") {
                    options.labels.push(label.to_owned());
                } else if let Some(lines) = arg.strip_prefix("-U") {
                    options.unified = Some(context_lines(lines)?);
                } else if arg.starts_with('-') && arg.len() > 1 && !arg.starts_with("--") {
                    // Bundled short options: -ru, -Nq, ...
                    for flag in arg[1..].chars() {
                        match flag {
                            'u' => options.unified = Some(3),
                            'q' => options.brief = true,
                            's' => options.report_identical = true,
                            'N' => options.absent_as_empty = true,
                            'r' => options.recursive = true,
                            other => return Err(unknown(&format!("-{other}"))),
                        }
                    }
                } else if arg.starts_with("--") {
                    return Err(unknown(&arg));
                } else {
                    operands.push(arg);
                }
            }
        }
    }
    Ok((options, operands))
}

fn unknown(option: &str) -> String {
    format!("unknown option {option}; diff takes -u, -U N, -q, -s, -N, -r and --label")
}

fn context_lines(text: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|_| format!("invalid context length '{text}'"))
}

/// What a path names.
enum Side {
    File(Vec<u8>),
    Folder,
    Absent,
}

fn read_side(path: &Path) -> Result<Side, String> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|error| format!("-: {error}"))?;
        return Ok(Side::File(bytes));
    }
    match fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => Ok(Side::Folder),
        Ok(_) => fs::read(path)
            .map(Side::File)
            .map_err(|error| format!("{}: {}", path.display(), plain(&error))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Side::Absent),
        Err(error) => Err(format!("{}: {}", path.display(), plain(&error))),
    }
}

fn compare(options: &Options, old: &Path, new: &Path, out: &mut impl Write, top: bool) -> Outcome {
    let sides = read_side(old).and_then(|o| read_side(new).map(|n| (o, n)));
    let (old_side, new_side) = match sides {
        Ok(sides) => sides,
        Err(message) => {
            eprintln!("diff: {message}");
            return Outcome::Trouble;
        }
    };
    match (old_side, new_side) {
        (Side::Folder, Side::Folder) => compare_folders(options, old, new, out),
        // A file against a folder compares with the file of that name in it.
        (Side::Folder, Side::File(_)) if top => {
            compare(options, &old.join(file_name(new)), new, out, false)
        }
        (Side::File(_), Side::Folder) if top => {
            compare(options, old, &new.join(file_name(old)), out, false)
        }
        (Side::Absent, Side::File(bytes)) if options.absent_as_empty => {
            compare_files(options, (old, &[]), (new, &bytes), out)
        }
        (Side::File(bytes), Side::Absent) if options.absent_as_empty => {
            compare_files(options, (old, &bytes), (new, &[]), out)
        }
        (Side::Absent, _) => missing(old),
        (_, Side::Absent) => missing(new),
        (Side::File(old_bytes), Side::File(new_bytes)) => {
            compare_files(options, (old, &old_bytes), (new, &new_bytes), out)
        }
        (Side::Folder, _) => {
            let _ = writeln!(
                out,
                "File {} is a directory while file {} is a regular file",
                old.display(),
                new.display()
            );
            Outcome::Different
        }
        (_, Side::Folder) => {
            let _ = writeln!(
                out,
                "File {} is a regular file while file {} is a directory",
                old.display(),
                new.display()
            );
            Outcome::Different
        }
    }
}

fn missing(path: &Path) -> Outcome {
    eprintln!("diff: {}: No such file or directory", path.display());
    Outcome::Trouble
}

fn file_name(path: &Path) -> PathBuf {
    path.file_name().map(PathBuf::from).unwrap_or_default()
}

fn compare_folders(options: &Options, old: &Path, new: &Path, out: &mut impl Write) -> Outcome {
    let (old_names, new_names) = match (entries(old), entries(new)) {
        (Ok(old_names), Ok(new_names)) => (old_names, new_names),
        (Err(message), _) | (_, Err(message)) => {
            eprintln!("diff: {message}");
            return Outcome::Trouble;
        }
    };
    let mut names: Vec<&String> = old_names.iter().chain(&new_names).collect();
    names.sort();
    names.dedup();
    let mut worst = Outcome::Same;
    for name in names {
        let (old_path, new_path) = (old.join(name), new.join(name));
        let outcome = match (old_names.contains(name), new_names.contains(name)) {
            (true, true) => {
                let folders = (old_path.is_dir(), new_path.is_dir());
                if folders == (true, true) && !options.recursive {
                    let _ = writeln!(
                        out,
                        "Common subdirectories: {} and {}",
                        old_path.display(),
                        new_path.display()
                    );
                    Outcome::Same
                } else {
                    if !options.brief && folders == (false, false) {
                        let before = announce(options, &old_path, &new_path);
                        compare_announced(options, &old_path, &new_path, out, before)
                    } else {
                        compare(options, &old_path, &new_path, out, false)
                    }
                }
            }
            (in_old, _) if options.absent_as_empty && !is_folder(old, new, name, in_old) => {
                let before = announce(options, &old_path, &new_path);
                compare_announced(options, &old_path, &new_path, out, before)
            }
            (in_old, _) => {
                let folder = if in_old { old } else { new };
                let _ = writeln!(out, "Only in {}: {name}", folder.display());
                Outcome::Different
            }
        };
        worst = worst.max(outcome);
    }
    worst
}

fn is_folder(old: &Path, new: &Path, name: &str, in_old: bool) -> bool {
    if in_old {
        old.join(name)
    } else {
        new.join(name)
    }
    .is_dir()
}

/// The line GNU diff prints before the differences of two files found in
/// folders being compared.
fn announce(options: &Options, old: &Path, new: &Path) -> String {
    let flags = match options.unified {
        Some(3) => " -u".to_owned(),
        Some(lines) => format!(" -U {lines}"),
        None => String::new(),
    };
    let recursive = if options.recursive { " -r" } else { "" };
    format!(
        "diff{recursive}{flags} {} {}\n",
        old.display(),
        new.display()
    )
}

/// Compares two files, printing `before` ahead of any difference.
fn compare_announced(
    options: &Options,
    old: &Path,
    new: &Path,
    out: &mut impl Write,
    before: String,
) -> Outcome {
    let mut buffer = Vec::new();
    let outcome = compare(options, old, new, &mut buffer, false);
    if !buffer.is_empty() {
        if outcome == Outcome::Different && !options.brief {
            let _ = out.write_all(before.as_bytes());
        }
        let _ = out.write_all(&buffer);
    }
    outcome
}

fn entries(folder: &Path) -> Result<Vec<String>, String> {
    let read =
        fs::read_dir(folder).map_err(|error| format!("{}: {}", folder.display(), plain(&error)))?;
    let mut names = Vec::new();
    for entry in read {
        let entry = entry.map_err(|error| format!("{}: {}", folder.display(), plain(&error)))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

fn compare_files(
    options: &Options,
    (old_path, old): (&Path, &[u8]),
    (new_path, new): (&Path, &[u8]),
    out: &mut impl Write,
) -> Outcome {
    if old == new {
        if options.report_identical {
            let _ = writeln!(
                out,
                "Files {} and {} are identical",
                old_path.display(),
                new_path.display()
            );
        }
        return Outcome::Same;
    }
    if options.brief || old.contains(&0) || new.contains(&0) {
        let kind = if options.brief {
            "Files"
        } else {
            "Binary files"
        };
        let _ = writeln!(
            out,
            "{kind} {} and {} differ",
            old_path.display(),
            new_path.display()
        );
        return Outcome::Different;
    }
    let diff = TextDiff::from_lines(old, new);
    let written = match options.unified {
        Some(context) => unified(options, &diff, context, (old_path, new_path), out),
        None => normal(&diff, out),
    };
    if let Err(error) = written {
        eprintln!("diff: write error: {error}");
        return Outcome::Trouble;
    }
    Outcome::Different
}

fn unified<'diff>(
    options: &Options,
    diff: &'diff TextDiff<'diff, 'diff, 'diff, [u8]>,
    context: usize,
    (old_path, new_path): (&Path, &Path),
    out: &mut impl Write,
) -> io::Result<()> {
    let label = |index: usize, path: &Path| {
        options
            .labels
            .get(index)
            .cloned()
            .unwrap_or_else(|| format!("{}\t{}", path.display(), timestamp(path)))
    };
    writeln!(out, "--- {}", label(0, old_path))?;
    writeln!(out, "+++ {}", label(1, new_path))?;
    let mut formatter = diff.unified_diff();
    formatter.context_radius(context).missing_newline_hint(true);
    for hunk in formatter.iter_hunks() {
        hunk.to_writer(&mut *out)?;
    }
    Ok(())
}

/// GNU diff's default format: `NcM`, `NaM,K`, `N,MdK` and the lines.
fn normal(diff: &TextDiff<'_, '_, '_, [u8]>, out: &mut impl Write) -> io::Result<()> {
    let (old_lines, new_lines) = (diff.old_slices(), diff.new_slices());
    for op in diff.ops() {
        let (old_range, new_range, kind) = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index..old_index + old_len, new_index..new_index, 'd'),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index..old_index, new_index..new_index + new_len, 'a'),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index..old_index + old_len,
                new_index..new_index + new_len,
                'c',
            ),
        };
        writeln!(
            out,
            "{}{kind}{}",
            line_range(&old_range),
            line_range(&new_range)
        )?;
        for line in &old_lines[old_range] {
            marked(out, "< ", line)?;
        }
        if kind == 'c' {
            writeln!(out, "---")?;
        }
        for line in &new_lines[new_range] {
            marked(out, "> ", line)?;
        }
    }
    Ok(())
}

/// A range of lines as GNU prints it: `3`, `3,5`, or for an empty range the
/// line it follows.
fn line_range(range: &std::ops::Range<usize>) -> String {
    match range.len() {
        0 => range.start.to_string(),
        1 => (range.start + 1).to_string(),
        _ => format!("{},{}", range.start + 1, range.end),
    }
}

fn marked(out: &mut impl Write, mark: &str, line: &[u8]) -> io::Result<()> {
    out.write_all(mark.as_bytes())?;
    out.write_all(line)?;
    if !line.ends_with(b"\n") {
        out.write_all(b"\n\\ No newline at end of file\n")?;
    }
    Ok(())
}

/// A file's modification time as GNU diff prints it in a unified header,
/// in UTC.
fn timestamp(path: &Path) -> String {
    let modified = if path == Path::new("-") {
        SystemTime::now()
    } else {
        fs::metadata(path)
            .and_then(|metadata| metadata.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH)
    };
    let since = modified
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = since.as_secs();
    let (days, day_seconds) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_date(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{:09} +0000",
        day_seconds / 3600,
        day_seconds / 60 % 60,
        day_seconds % 60,
        since.subsec_nanos()
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_date(days: i64) -> (i64, u32, u32) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
