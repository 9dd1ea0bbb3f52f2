//! A run's tools and hooks behind one swap, so a long-lived host (the MCP
//! server) can take in a plugins folder that changed without restarting the
//! run. A swap replaces tools and hooks together; the runtime reads them as
//! one pair when each served request and each drive of the loop starts
//! ([`cordon_kernel::reload`]), so a step never sees two versions.

use std::sync::{Arc, RwLock};

use cordon_kernel::{HookSet, Reloadable, ToolSet};

/// The tools and hooks in force.
#[derive(Clone)]
pub struct Current {
    /// Every tool offered.
    pub tools: Arc<dyn ToolSet>,
    /// The hooks, in order.
    pub hooks: Arc<dyn HookSet>,
}

/// Tools and hooks that can be replaced while a run goes on.
pub struct LiveSet {
    current: RwLock<Current>,
}

impl LiveSet {
    /// A set starting with `current`.
    pub fn new(current: Current) -> Self {
        Self {
            current: RwLock::new(current),
        }
    }

    /// The set in force now.
    pub fn current(&self) -> Current {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Put `next` in force for every request and drive starting after.
    pub fn swap(&self, next: Current) {
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = next;
    }
}

impl Reloadable for LiveSet {
    fn in_force(&self) -> (Arc<dyn ToolSet>, Arc<dyn HookSet>) {
        let Current { tools, hooks } = self.current();
        (tools, hooks)
    }
}
