//! Tools and hooks a long-lived host replaces while runs go on, as the MCP
//! server does when its plugins folder changes. A runtime given a
//! [`Reloadable`] takes the pair in force once for each served request and
//! each drive of the loop, and keeps it to that end: the specs a step judged
//! by, the hooks that judged it, the intent it recorded or skipped, the
//! tools it called and the hooks that saw the results are one version, even
//! when a reload lands while the step waits on a hook or a call.

use std::sync::Arc;

use crate::hooks::HookSet;
use crate::tool::ToolSet;

/// Tools and hooks that can be replaced while a run goes on.
pub trait Reloadable: Send + Sync {
    /// The tools and hooks in force now, read together, so a replacement
    /// is seen whole or not at all.
    fn in_force(&self) -> (Arc<dyn ToolSet>, Arc<dyn HookSet>);
}
