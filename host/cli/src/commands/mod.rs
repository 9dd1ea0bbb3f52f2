//! One module per command.

pub mod call;
pub mod check;
pub mod diff;
pub mod list;
pub mod run;
pub mod runs;
