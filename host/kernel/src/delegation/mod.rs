//! Delegation: an agent hands a task to a sub-agent and gets its answer
//! back, as a tool call (`agent.NAME`) judged like any other.
//!
//! Each sub-agent's task is a run of its own in the store, linked to the
//! call that delegated it ([`crate::commit::ParentLink`]), with its own step
//! commits on the same commit port. What it does is narrowed by every agent
//! above it ([`decl`]); its file changes stay staged beneath its parent's
//! step ([`ledger`]) and travel back in the call's outcome like any call's,
//! so they reach the folder only when that step commits; a call it waits on
//! makes its parent's step wait, named by its path; and a crash anywhere is
//! resumed from each run's last commit ([`child`]). The whole tree shares
//! one budget of model tokens and time ([`budget`]).

pub(crate) mod budget;
pub(crate) mod child;
pub(crate) mod decl;
pub(crate) mod ledger;
pub(crate) mod shown;
pub(crate) mod spec;

pub use decl::{DelegationLimits, SubAgent};
