//! The approval port: how the loop asks a person about calls the permission
//! policy will not decide alone.

use std::future::Future;
use std::pin::Pin;

use crate::commit::PendingCall;
pub use crate::policy::Approval;

/// The future an [`Approver`] returns.
pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = Option<Vec<Approval>>> + Send + 'a>>;

/// The port that asks a person about calls the policy will not decide alone.
pub trait Approver: Send + Sync {
    /// One answer per pending call, in order; `None` pauses the run with a
    /// committed waiting outcome, to be resumed later.
    fn decide<'a>(&'a self, pending: &'a [PendingCall]) -> ApprovalFuture<'a>;
}

/// An [`Approver`] that never answers: every call needing approval pauses the run.
#[derive(Debug, Default, Clone, Copy)]
pub struct DeferApprovals;

impl Approver for DeferApprovals {
    fn decide<'a>(&'a self, _pending: &'a [PendingCall]) -> ApprovalFuture<'a> {
        Box::pin(async { None })
    }
}
