//! Durable implementations of the kernel's ports. For now: [`JsonFileStateStore`],
//! the agent state kept in one JSON file.

mod json_file;

pub use json_file::JsonFileStateStore;
