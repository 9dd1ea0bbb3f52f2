//! The budget a tree of runs shares: the model tokens the root run and
//! every sub-agent's run under it may spend together (`[delegation]
//! max-tokens`), and the wall-clock time they may take (`max-seconds`),
//! counted while the tree is driven: from its start, or from each resume,
//! so the time a run waits for a person does not count. A sub-agent that
//! sets bounds of its own has a budget of its own for its runs, inside its
//! tree's; a sub-agent of a served call, whose tree has no driven root,
//! has one for its runs from its parent's bounds.
//!
//! Each step records the tokens its model request used, so a resumed tree
//! starts from what its runs spent before. A run over budget ends at its
//! next model step (a root run), or its delegating call is refused (a
//! sub-agent's), each with a typed limit naming the setting.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::decl::DelegationLimits;

/// What a tree of runs has spent of its budget.
#[derive(Debug)]
pub(crate) struct TreeBudget {
    max_tokens: Option<u64>,
    max_seconds: Option<u64>,
    started: Instant,
    spent: AtomicU64,
    /// The budget of the tree this one's runs lie in, when they are a
    /// sub-agent's with bounds of its own: what they spend counts there too.
    outer: Option<Arc<TreeBudget>>,
}

impl Spent {
    /// What was spent, naming the setting.
    pub(crate) fn described(&self) -> String {
        format!("{} (`[delegation] {}`)", self.detail, self.setting)
    }
}

/// A bound of the budget that was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spent {
    /// The setting, such as `max-tokens`.
    pub(crate) setting: &'static str,
    /// What was spent against it, in words.
    pub(crate) detail: String,
}

impl TreeBudget {
    /// The budget `limits` set, for a tree that has spent `spent` tokens
    /// before; `None` when they set none.
    pub(crate) fn new(limits: &DelegationLimits, spent: u64) -> Option<Self> {
        Self::within(limits, spent, None)
    }

    /// The budget `limits` set for the runs of a sub-agent, which have spent
    /// `spent` tokens before, inside the budget `outer` of the tree they
    /// lie in; `outer` itself when `limits` set none.
    pub(crate) fn within(
        limits: &DelegationLimits,
        spent: u64,
        outer: Option<Arc<TreeBudget>>,
    ) -> Option<Self> {
        if limits.max_tokens.is_none() && limits.max_seconds.is_none() {
            return None;
        }
        Some(Self {
            max_tokens: limits.max_tokens,
            max_seconds: limits.max_seconds,
            started: Instant::now(),
            spent: AtomicU64::new(spent),
            outer,
        })
    }

    /// Count `tokens` a model request used.
    pub(crate) fn spend(&self, tokens: u64) {
        self.spent.fetch_add(tokens, Ordering::SeqCst);
        if let Some(outer) = &self.outer {
            outer.spend(tokens);
        }
    }

    /// The bound reached, if any: this budget's, or the tree's around it.
    pub(crate) fn reached(&self) -> Option<Spent> {
        self.reached_here()
            .or_else(|| self.outer.as_ref().and_then(|outer| outer.reached()))
    }

    fn reached_here(&self) -> Option<Spent> {
        let spent = self.spent.load(Ordering::SeqCst);
        if let Some(max) = self.max_tokens
            && spent >= max
        {
            return Some(Spent {
                setting: "max-tokens",
                detail: format!(
                    "the tree of runs has spent {spent} model tokens, past its budget of {max}"
                ),
            });
        }
        let elapsed = self.started.elapsed();
        if let Some(max) = self.max_seconds
            && elapsed >= Duration::from_secs(max)
        {
            return Some(Spent {
                setting: "max-seconds",
                detail: format!(
                    "the tree of runs has been driven for {} s, past its budget of {max} s",
                    elapsed.as_secs()
                ),
            });
        }
        None
    }
}
