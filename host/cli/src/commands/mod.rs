//! One module per command.

pub(crate) mod build;
pub(crate) mod call;
pub(crate) mod check;
pub(crate) mod diff;
pub(crate) mod grants;
pub(crate) mod install;
pub(crate) mod list;
pub(crate) mod mcp;
pub(crate) mod new;
pub(crate) mod packages;
pub(crate) mod run;
pub(crate) mod runs;
pub(crate) mod sdk;
pub(crate) mod skills;
pub(crate) mod ui;
pub(crate) mod worker;
