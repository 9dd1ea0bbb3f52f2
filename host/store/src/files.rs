//! The `file_changes` table: each step's staged file changes, one row per path,
//! contents as BLOBs so that loading a run's steps never loads its files. The
//! row encoding is shared with the Postgres store's table of the same shape.

use cordon_kernel::{FileChange, FileState, StepFiles};
use rusqlite::{Connection, params};

/// Insert the changes of step `seq` of `run_id`, inside the commit's
/// transaction.
pub(crate) fn insert(
    connection: &Connection,
    run_id: &str,
    seq: i64,
    changes: &[FileChange],
) -> rusqlite::Result<()> {
    if changes.is_empty() {
        return Ok(());
    }
    let mut statement = connection.prepare_cached(
        "INSERT INTO file_changes (run_id, seq, path, before_kind, before, after_kind, after)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for change in changes {
        let (before_kind, before) = encode(&change.before);
        let (after_kind, after) = encode(&change.after);
        statement.execute(params![
            run_id,
            seq,
            change.path,
            before_kind,
            before,
            after_kind,
            after
        ])?;
    }
    Ok(())
}

/// Every step's changes of `run_id`, in step and path order. The inner error
/// names a row that does not decode.
pub(crate) fn load(
    connection: &Connection,
    run_id: &str,
) -> rusqlite::Result<Result<Vec<StepFiles>, String>> {
    let mut statement = connection.prepare_cached(
        "SELECT seq, path, before_kind, before, after_kind, after FROM file_changes
         WHERE run_id = ?1 ORDER BY seq, path",
    )?;
    let mut rows = statement.query([run_id])?;
    let mut steps: Vec<StepFiles> = Vec::new();
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let path: String = row.get(1)?;
        let before = decode(row.get_ref(2)?.as_str()?, row.get(3)?);
        let after = decode(row.get_ref(4)?.as_str()?, row.get(5)?);
        let (Ok(seq), Some(before), Some(after)) = (u64::try_from(seq), before, after) else {
            return Ok(Err(format!("step {seq} path {path:?} does not decode")));
        };
        let change = FileChange {
            path,
            before,
            after,
        };
        push(&mut steps, seq, change);
    }
    Ok(Ok(steps))
}

/// Add `change` of step `seq` to `steps`, read in step order.
pub(crate) fn push(steps: &mut Vec<StepFiles>, seq: u64, change: FileChange) {
    match steps.last_mut() {
        Some(step) if step.seq == seq => step.changes.push(change),
        _ => steps.push(StepFiles {
            seq,
            changes: vec![change],
        }),
    }
}

/// A file state as a row's kind and contents.
pub(crate) fn encode(state: &FileState) -> (&'static str, Option<&[u8]>) {
    match state {
        FileState::Absent => ("absent", None),
        FileState::Directory => ("directory", None),
        FileState::File(contents) => ("file", Some(contents)),
    }
}

/// The file state a row's kind and contents stand for; `None` when they do
/// not fit together.
pub(crate) fn decode(kind: &str, contents: Option<Vec<u8>>) -> Option<FileState> {
    match (kind, contents) {
        ("absent", None) => Some(FileState::Absent),
        ("directory", None) => Some(FileState::Directory),
        ("file", Some(contents)) => Some(FileState::File(contents.into())),
        _ => None,
    }
}
