//! The four notes tools: add, list, search and delete.

use crate::store::{self, Note};
use cordon_sdk::{Annotations, Tool, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `notes.add`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddArgs {
    /// Short title, not empty.
    title: String,
    /// The note's text.
    body: String,
    /// Labels for finding the note again with `notes.list`.
    #[serde(default)]
    tags: Vec<String>,
}

/// The `notes.add` tool.
pub(crate) struct Add;

impl Tool for Add {
    const NAME: &'static str = "notes.add";
    const DESCRIPTION: &'static str = "Save a note (title, body, optional tags) that later steps \
        of this run can list and search. Returns the stored note with its id.";
    type Args = AddArgs;
    type Output = Note;

    fn call(args: AddArgs) -> Result<Note, ToolError> {
        let title = args.title.trim();
        if title.is_empty() {
            return Err(ToolError::InvalidInput(
                "title must not be empty".to_owned(),
            ));
        }
        let mut tags: Vec<String> = Vec::new();
        for tag in args.tags.iter().map(|tag| tag.trim()) {
            if !tag.is_empty() && !tags.iter().any(|t| t.eq_ignore_ascii_case(tag)) {
                tags.push(tag.to_owned());
            }
        }
        Ok(store::add(title.to_owned(), args.body, tags)?)
    }
}

/// What `notes.list` and `notes.search` return.
#[derive(Serialize)]
pub(crate) struct Found {
    /// The notes, oldest first.
    notes: Vec<Note>,
    /// How many notes there are.
    count: usize,
}

impl Found {
    fn new(notes: Vec<Note>) -> Self {
        Self {
            count: notes.len(),
            notes,
        }
    }
}

/// Arguments of `notes.list`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArgs {
    /// Only notes carrying this tag (case-insensitive).
    tag: Option<String>,
}

/// The `notes.list` tool.
pub(crate) struct List;

impl Tool for List {
    const NAME: &'static str = "notes.list";
    const DESCRIPTION: &'static str =
        "List saved notes, oldest first, optionally only those with a given tag.";
    type Args = ListArgs;
    type Output = Found;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(args: ListArgs) -> Result<Found, ToolError> {
        let mut notes = store::all()?;
        if let Some(tag) = args.tag.as_deref().map(str::trim) {
            notes.retain(|note| note.has_tag(tag));
        }
        Ok(Found::new(notes))
    }
}

/// Arguments of `notes.search`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// Text to look for in titles and bodies, ignoring case.
    query: String,
}

/// The `notes.search` tool.
pub(crate) struct Search;

impl Tool for Search {
    const NAME: &'static str = "notes.search";
    const DESCRIPTION: &'static str =
        "Find saved notes whose title or body contains the query text, ignoring case.";
    type Args = SearchArgs;
    type Output = Found;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(args: SearchArgs) -> Result<Found, ToolError> {
        let query = args.query.trim().to_lowercase();
        if query.is_empty() {
            return Err(ToolError::InvalidInput(
                "query must not be empty".to_owned(),
            ));
        }
        let mut notes = store::all()?;
        notes.retain(|note| {
            note.title.to_lowercase().contains(&query) || note.body.to_lowercase().contains(&query)
        });
        Ok(Found::new(notes))
    }
}

/// Arguments of `notes.delete`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeleteArgs {
    /// Id of the note to delete, as returned by `notes.add`.
    id: i64,
}

/// What `notes.delete` returns.
#[derive(Serialize)]
pub(crate) struct Deleted {
    /// The note that was deleted.
    deleted: Note,
}

/// The `notes.delete` tool.
pub(crate) struct Delete;

impl Tool for Delete {
    const NAME: &'static str = "notes.delete";
    const DESCRIPTION: &'static str =
        "Delete the saved note with the given id. Returns the deleted note.";
    type Args = DeleteArgs;
    type Output = Deleted;

    fn annotations() -> Annotations {
        Annotations {
            destructive: true,
            idempotent: true,
            ..Annotations::default()
        }
    }

    fn call(args: DeleteArgs) -> Result<Deleted, ToolError> {
        let mut notes = store::all()?;
        let position = notes
            .iter()
            .position(|note| note.id == args.id)
            .ok_or_else(|| {
                ToolError::InvalidInput(format!("there is no note with id {}", args.id))
            })?;
        let deleted = notes.remove(position);
        store::replace(&notes)?;
        Ok(Deleted { deleted })
    }
}
