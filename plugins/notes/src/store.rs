//! The note record and its place in state: the list under `notes` and the id
//! counter under `notes.next-id`.

use cordon_sdk::{StateError, state};
use serde::{Deserialize, Serialize};

const NOTES: &str = "notes";
const NEXT_ID: &str = "notes.next-id";

/// One note.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Note {
    /// Identifier, unique among this agent's notes.
    pub id: i64,
    /// Short title.
    pub title: String,
    /// The note's text.
    pub body: String,
    /// Labels for finding the note again.
    #[serde(default)]
    pub tags: Vec<String>,
}

impl Note {
    /// Whether the note carries `tag`, ignoring case.
    pub(crate) fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t.eq_ignore_ascii_case(tag))
    }
}

/// Every note, oldest first.
pub(crate) fn all() -> Result<Vec<Note>, StateError> {
    Ok(state::get(NOTES)?.unwrap_or_default())
}

/// Stores a new note with a fresh id and returns it.
pub(crate) fn add(title: String, body: String, tags: Vec<String>) -> Result<Note, StateError> {
    let id = state::increment(NEXT_ID, 1)?;
    let note = Note {
        id,
        title,
        body,
        tags,
    };
    state::append(NOTES, &note)?;
    Ok(note)
}

/// Replaces the stored list with `notes`.
pub(crate) fn replace(notes: &[Note]) -> Result<(), StateError> {
    state::set(NOTES, &notes)
}
