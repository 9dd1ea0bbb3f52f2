//! The `files` bundle: read-only tools over the agent's workspace, which the
//! host grants at `/workspace`. Every path argument is relative to it.

mod list;
mod paths;
mod pattern;
mod read;
mod search;
mod text;
mod walk;

cordon_sdk::export_tools!(read::Read, list::List, search::Search);
