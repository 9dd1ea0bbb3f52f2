//! The engine every bundle runs on: wasmtime configured for components, async
//! host calls, fuel, epoch interruption and the pooling allocator with its
//! admission; the linker holding every capability's import (WASI's
//! filesystem guarded), and the one interpreters are linked with; the
//! compiled-component cache; and the thread that advances epochs.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::admission::Admission;
use crate::cache::{CacheConfig, ComponentCache};
use crate::capabilities;
use crate::footprint::{CORE_INSTANCES_PER_SLOT, MEMORIES_PER_SLOT, TABLES_PER_SLOT};
use crate::limits::MAX_MEMORY_MIB;
use crate::sandbox::CallState;
use crate::teardown::Teardown;

/// How often the epoch advances. A call's guest code yields to the scheduler at
/// each tick, which is what lets the wall-clock timeout interrupt a busy loop.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(5);

/// How much of each linear memory and table a finished instance leaves
/// resident in its pool slot. The pages it wrote are put back to the
/// component's initial image in place (only those it touched, where the
/// kernel can say which) instead of being unmapped, so the next instance in
/// the slot takes no page faults for them and no other core's TLB is
/// flushed. Beyond this, memory is returned to the system as before.
const KEEP_RESIDENT: usize = 1 << 20;

/// Settings for a [`PluginHost`](crate::PluginHost).
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Where compiled components are cached, sealed with the cache's key;
    /// `None` compiles on every load.
    pub cache: Option<CacheConfig>,
    /// How many component instances may be alive at once, across all calls. The
    /// pooling allocator reserves address space for this many up front; a
    /// call waits for a free slot, within its own timeout.
    pub max_instances: u32,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            cache: None,
            max_instances: 64,
        }
    }
}

/// Why the engine could not be created.
#[derive(Debug, thiserror::Error)]
#[error("cannot create the WebAssembly engine: {0:#}")]
pub struct EngineError(wasmtime::Error);

pub(crate) struct Engine {
    pub(crate) engine: wasmtime::Engine,
    pub(crate) linker: Linker<CallState>,
    /// The linker of interpreters: WASI with their read-only view for a
    /// filesystem, and nothing of Cordon's.
    pub(crate) interpreter_linker: Linker<CallState>,
    pub(crate) cache: ComponentCache,
    pub(crate) admission: Admission,
    /// Where finished calls' instances are taken down.
    pub(crate) teardown: Teardown,
}

impl Engine {
    pub(crate) fn new(config: &HostConfig) -> Result<Arc<Self>, EngineError> {
        let engine =
            wasmtime::Engine::new(&wasmtime_config(config.max_instances)).map_err(EngineError)?;
        let mut linker = Linker::new(&engine);
        capabilities::add_to_linker(&mut linker).map_err(EngineError)?;
        let mut interpreter_linker = Linker::new(&engine);
        capabilities::add_interpreter_to_linker(&mut interpreter_linker).map_err(EngineError)?;
        let cache = ComponentCache::new(&engine, config.cache.clone());
        start_epoch_ticker(&engine);
        Ok(Arc::new(Self {
            engine,
            linker,
            interpreter_linker,
            cache,
            admission: Admission::new(config.max_instances),
            teardown: Teardown::default(),
        }))
    }
}

fn wasmtime_config(max_instances: u32) -> Config {
    let mut pool = PoolingAllocationConfig::default();
    // Each slot has room for the biggest component Cordon builds (see
    // `footprint`); the address space is reserved, not committed.
    pool.total_component_instances(max_instances)
        .total_stacks(max_instances)
        .total_core_instances(max_instances * CORE_INSTANCES_PER_SLOT)
        .total_memories(max_instances * MEMORIES_PER_SLOT)
        .total_tables(max_instances * TABLES_PER_SLOT)
        .max_memories_per_module(2)
        .max_tables_per_module(4)
        .max_memory_size((MAX_MEMORY_MIB as usize) << 20)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT)
        .pagemap_scan(wasmtime::Enabled::Auto);
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    config
}

/// Advance `engine`'s epoch every tick until the engine is dropped.
fn start_epoch_ticker(engine: &wasmtime::Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("cordon-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map(drop)
        .unwrap_or_else(|error| tracing::error!(%error, "cannot start the epoch thread"));
}
