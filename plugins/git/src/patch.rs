//! One file's change as git prints it in a patch: the `diff --git` header,
//! the mode and `index` lines, and unified hunks with three lines of
//! context (by the `similar` crate's Myers diff).

use std::io::{self, Write};

use gix::ObjectId;
use similar::TextDiff;

/// One side of a change: the path, its blob and mode, and its bytes.
pub struct Side<'a> {
    pub path: &'a str,
    pub id: ObjectId,
    pub mode: &'a str,
    pub data: &'a [u8],
}

/// Git's mode text for an index or tree entry's mode.
pub fn mode_text(mode: gix::object::tree::EntryMode) -> &'static str {
    use gix::object::tree::EntryKind;
    match mode.kind() {
        EntryKind::Blob => "100644",
        EntryKind::BlobExecutable => "100755",
        EntryKind::Link => "120000",
        EntryKind::Commit => "160000",
        EntryKind::Tree => "040000",
    }
}

/// The blob id of `data`, as git would store it.
pub fn blob_id(repo: &gix::Repository, data: &[u8]) -> ObjectId {
    gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, data)
        .unwrap_or_else(|_| ObjectId::null(repo.object_hash()))
}

/// Writes the change from `old` to `new` (either absent for an added or a
/// deleted file).
pub fn write(out: &mut dyn Write, old: Option<&Side>, new: Option<&Side>) -> io::Result<()> {
    let Some(any) = old.or(new) else {
        return Ok(());
    };
    let (old_path, new_path) = (old.unwrap_or(any).path, new.unwrap_or(any).path);
    writeln!(out, "diff --git a/{old_path} b/{new_path}")?;
    let short = |id: ObjectId| id.to_hex_with_len(7).to_string();
    let null = "0000000";
    match (old, new) {
        (Some(old), Some(new)) => {
            if old.mode != new.mode {
                writeln!(out, "old mode {}\nnew mode {}", old.mode, new.mode)?;
                if old.id == new.id {
                    return Ok(());
                }
                writeln!(out, "index {}..{}", short(old.id), short(new.id))?;
            } else {
                writeln!(
                    out,
                    "index {}..{} {}",
                    short(old.id),
                    short(new.id),
                    old.mode
                )?;
            }
        }
        (None, Some(new)) => {
            writeln!(
                out,
                "new file mode {}\nindex {null}..{}",
                new.mode,
                short(new.id)
            )?;
        }
        (Some(old), None) => {
            writeln!(
                out,
                "deleted file mode {}\nindex {}..{null}",
                old.mode,
                short(old.id)
            )?;
        }
        (None, None) => return Ok(()),
    }
    let old_data = old.map_or(&[][..], |side| side.data);
    let new_data = new.map_or(&[][..], |side| side.data);
    if old_data.is_empty() && new_data.is_empty() {
        return Ok(());
    }
    let old_name = old.map_or("/dev/null".to_owned(), |side| format!("a/{}", side.path));
    let new_name = new.map_or("/dev/null".to_owned(), |side| format!("b/{}", side.path));
    if old_data.contains(&0) || new_data.contains(&0) {
        return writeln!(out, "Binary files {old_name} and {new_name} differ");
    }
    writeln!(out, "--- {old_name}\n+++ {new_name}")?;
    let diff = TextDiff::from_lines(old_data, new_data);
    let mut formatter = diff.unified_diff();
    formatter.context_radius(3).missing_newline_hint(true);
    for hunk in formatter.iter_hunks() {
        hunk.to_writer(&mut *out)?;
    }
    Ok(())
}

/// Added and removed lines of the change, for `--stat`.
pub fn counts(old: &[u8], new: &[u8]) -> (usize, usize) {
    let diff = TextDiff::from_lines(old, new);
    let mut counts = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => counts.0 += 1,
            similar::ChangeTag::Delete => counts.1 += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    counts
}
