//! One module per command.

pub mod call;
pub mod check;
pub mod list;
pub mod run;
pub mod runs;
