//! The limits a command line runs within, shared by every script, function
//! and substitution it runs: the deadline (exit status 124), and how many
//! commands it may run and how deeply functions, subshells, substitutions
//! and scripts may nest (exit status 137). An endless loop or a fork bomb
//! ends at one of them; the message says which.

use super::context::Interrupt;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// Most commands one line may run, counting every one a loop, function or
/// script runs.
pub const MAX_STEPS: u64 = 2_000_000;
/// Most functions, subshells, command substitutions and scripts that may
/// enclose each other.
pub const MAX_DEPTH: u32 = 200;

/// Which of a line's limits stopped it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Its time limit (exit status 124).
    Time,
    /// How many commands it may run (exit status 137).
    Commands,
    /// How deeply functions, subshells, substitutions and scripts may nest
    /// (exit status 137).
    Nesting,
}

/// A limit that stopped a line, and what was exceeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// Which limit.
    pub limit: Limit,
    /// What was exceeded, as the line's stderr says it.
    pub detail: String,
}

/// How many [`Budget::tick`]s pass between looks at the clock.
const TICKS_PER_CHECK: u32 = 256;

/// What a line may still spend.
#[derive(Debug)]
pub(super) struct Budget {
    deadline: Option<Instant>,
    timeout_ms: u32,
    steps: Cell<u64>,
    depth: Cell<u32>,
    ticks: Cell<u32>,
}

impl Budget {
    /// A budget ending `timeout_ms` from now (never, for 0).
    pub(super) fn new(timeout_ms: u32) -> Self {
        Self {
            deadline: (timeout_ms > 0)
                .then(|| Instant::now() + Duration::from_millis(u64::from(timeout_ms))),
            timeout_ms,
            steps: Cell::new(0),
            depth: Cell::new(0),
            ticks: Cell::new(0),
        }
    }

    /// What stopped a line that ran out of time.
    pub(super) fn timed_out(&self) -> String {
        format!("timed out after {} ms", self.timeout_ms)
    }

    /// Milliseconds left before the deadline; `default` without one.
    pub(super) fn remaining_ms(&self, default: u32) -> u32 {
        match self.deadline {
            None => default,
            Some(deadline) => {
                let left = deadline
                    .saturating_duration_since(Instant::now())
                    .as_millis();
                u32::try_from(left).unwrap_or(u32::MAX).max(1)
            }
        }
    }

    /// Fails once the deadline has passed.
    pub(super) fn check(&self) -> Result<(), Interrupt> {
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => Err(Interrupt::TimedOut),
            _ => Ok(()),
        }
    }

    /// [`Budget::check`], looking at the clock only every so many calls.
    pub(super) fn tick(&self) -> Result<(), Interrupt> {
        let ticks = self.ticks.get().wrapping_add(1);
        self.ticks.set(ticks);
        if ticks.is_multiple_of(TICKS_PER_CHECK) {
            self.check()
        } else {
            Ok(())
        }
    }

    /// Counts one command run; fails past [`MAX_STEPS`] or the deadline.
    pub(super) fn step(&self) -> Result<(), Interrupt> {
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > MAX_STEPS {
            return Err(Interrupt::Limit(
                Limit::Commands,
                format!("more than {MAX_STEPS} commands run"),
            ));
        }
        self.tick()
    }

    /// Enters one more level of nesting; fails past [`MAX_DEPTH`]. Each
    /// successful call is matched by [`Budget::leave`].
    pub(super) fn enter(&self) -> Result<(), Interrupt> {
        let depth = self.depth.get() + 1;
        if depth > MAX_DEPTH {
            return Err(Interrupt::Limit(
                Limit::Nesting,
                format!("functions, subshells and scripts nest more than {MAX_DEPTH} deep"),
            ));
        }
        self.depth.set(depth);
        Ok(())
    }

    /// Leaves a level entered by [`Budget::enter`].
    pub(super) fn leave(&self) {
        self.depth.set(self.depth.get().saturating_sub(1));
    }
}
