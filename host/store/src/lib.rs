//! Durable implementations of the kernel's ports: [`SqliteCommitStore`], run
//! commits and state kept in one SQLite file, and [`ThreadState`], one thread's
//! state in that file for tool calls made outside a run.

mod files;
mod sqlite;
mod thread_state;

pub use sqlite::SqliteCommitStore;
pub use thread_state::ThreadState;
