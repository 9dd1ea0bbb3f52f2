//! One module per command.

pub mod call;
pub mod check;
pub mod list;
