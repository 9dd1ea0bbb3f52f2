//! Leveled messages and progress reports to the operator, captured by the host
//! as events attributed to the bundle. The host bounds them per call.

use crate::bindings::cordon::plugin::log::{self as host, Level};

/// Records a trace-level message.
pub fn trace(message: &str) {
    host::log(Level::Trace, message);
}

/// Records a debug-level message.
pub fn debug(message: &str) {
    host::log(Level::Debug, message);
}

/// Records an info-level message.
pub fn info(message: &str) {
    host::log(Level::Info, message);
}

/// Records a warning.
pub fn warn(message: &str) {
    host::log(Level::Warn, message);
}

/// Records an error message.
pub fn error(message: &str) {
    host::log(Level::Error, message);
}

/// Reports progress of a long call: `done` units out of `total`, when known.
pub fn progress(done: u64, total: Option<u64>, message: &str) {
    host::progress(done, total, message);
}
