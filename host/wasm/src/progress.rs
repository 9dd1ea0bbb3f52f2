//! What a host tells about loading bundles as it happens, so that a person
//! waiting on a first start sees why it is slow: how many components have no
//! compiled form cached and must be compiled, each one as it compiles, and
//! each bundle as it loads, from the cache or compiled, with its load time.

use std::time::Duration;

use crate::cache::CacheOutcome;

/// Told about every load of bundles; [`PluginHost::with_progress`] sets it.
///
/// [`PluginHost::with_progress`]: crate::PluginHost::with_progress
pub trait LoadProgress: Send + Sync {
    /// A load of `bundles` bundles begins, `to_compile` of whose components
    /// are not in the cache.
    fn begin(&self, bundles: usize, to_compile: usize);
    /// Bundle `name`'s component, `bytes` long, is being compiled.
    fn compiling(&self, name: &str, bytes: usize);
    /// Bundle `name` loaded, its component `outcome`, in `time`.
    fn loaded(&self, name: &str, outcome: CacheOutcome, time: Duration);
    /// The load ended.
    fn end(&self);
}

/// Progress nobody is told of.
pub(crate) struct Silent;

impl LoadProgress for Silent {
    fn begin(&self, _: usize, _: usize) {}
    fn compiling(&self, _: &str, _: usize) {}
    fn loaded(&self, _: &str, _: CacheOutcome, _: Duration) {}
    fn end(&self) {}
}
