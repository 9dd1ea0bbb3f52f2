//! Durable implementations of the kernel's ports: [`JsonFileStateStore`], the
//! agent state kept in one JSON file, and [`SqliteCommitStore`], run commits
//! kept in one SQLite file.

mod json_file;
mod sqlite;

pub use json_file::JsonFileStateStore;
pub use sqlite::SqliteCommitStore;
