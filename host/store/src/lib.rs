//! Durable implementations of the kernel's ports: [`SqliteCommitStore`], run
//! commits and state kept in one SQLite file; [`PostgresCommitStore`], the
//! same in a Postgres database that several processes share, with the work
//! queue its workers claim runs from and the [`LeasedStore`] they write them
//! through; [`ThreadState`],
//! one thread's state in a SQLite file for tool calls made outside a run; and
//! the [`conformance`] suite every commit store passes.

pub mod conformance;
mod files;
mod flusher;
mod header;
mod immediate;
mod leased;
mod owner;
mod postgres;
mod queue;
mod sqlite;
mod thread_state;

pub use flusher::FLUSH_WITHIN;
pub use leased::LeasedStore;
pub use postgres::{PostgresCommitStore, without_password};
pub use queue::{Enqueued, Lease, QueueStatus, QueuedRun, Settlement};
pub use sqlite::SqliteCommitStore;
pub use thread_state::ThreadState;
