//! One module per command.

pub(crate) mod call;
pub(crate) mod check;
pub(crate) mod diff;
pub(crate) mod list;
pub(crate) mod run;
pub(crate) mod runs;
