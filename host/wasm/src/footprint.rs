//! How much of the instance pool one instance of a component takes.
//!
//! The pooling allocator reserves, per slot, room for a number of core
//! instances, memories and tables. A Rust component holds a handful of core
//! instances; one built by componentize-py holds 14 (libc, libpython, the
//! runtime, the bindings and their shims, as the allocator counts them). The
//! pool is sized so that every such component fits one slot; a
//! component that needs more takes several, so a burst of its calls waits for
//! room instead of exhausting the allocator mid-instantiation. A component
//! that would need more than the whole pool is refused at load, and so is one
//! whose footprint cannot be known from its binary (it instantiates core
//! modules or components it is handed at run time): a count that could be
//! low would let it take the room of other calls.

use wasmparser::{
    ComponentAlias, ComponentExternalKind, ComponentInstance, ComponentOuterAliasKind,
    ComponentTypeRef, Encoding, Instance, Parser, Payload,
};

/// Core instances one pool slot holds: room for componentize-py's 14 and more.
pub(crate) const CORE_INSTANCES_PER_SLOT: u32 = 24;
/// Linear memories one pool slot holds.
pub(crate) const MEMORIES_PER_SLOT: u32 = 4;
/// Tables one pool slot holds.
pub(crate) const TABLES_PER_SLOT: u32 = 8;

/// What one instance of a component allocates from the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// Core module instances created when the component is instantiated.
    pub core_instances: u32,
    /// Linear memories those instances define.
    pub memories: u32,
    /// Tables those instances define.
    pub tables: u32,
}

impl Footprint {
    /// The footprint of `component`, whose binary creates `core_instances`
    /// core instances per instance ([`core_instances`]), or why it cannot be
    /// known.
    pub(crate) fn of(
        component: &wasmtime::component::Component,
        core_instances: u32,
    ) -> Result<Self, Unsized> {
        let needed = component
            .resources_required()
            .ok_or(Unsized("it instantiates core modules it imports"))?;
        Ok(Self {
            core_instances,
            memories: needed.num_memories,
            tables: needed.num_tables,
        })
    }

    /// How many pool slots one instance takes: at least one.
    pub fn slots(self) -> u32 {
        [
            self.core_instances.div_ceil(CORE_INSTANCES_PER_SLOT),
            self.memories.div_ceil(MEMORIES_PER_SLOT),
            self.tables.div_ceil(TABLES_PER_SLOT),
        ]
        .into_iter()
        .max()
        .unwrap_or(1)
        .max(1)
    }
}

/// Why a component's footprint cannot be known from its binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsized(&'static str);

/// The core instances one instance of the component `bytes` creates: its own
/// module instantiations plus, for each nested component it instantiates,
/// that component's count (a component instantiated twice counts twice).
pub(crate) fn core_instances(bytes: &[u8]) -> Result<u32, Unsized> {
    // One entry per unit being read: `Some` for a component (its own
    // instantiations so far and the count of each entry of its component
    // index space), `None` for a core module.
    let mut frames: Vec<Option<Frame>> = Vec::new();
    let mut total = 0;
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|_| Unsized("its binary cannot be read"))?;
        match payload {
            Payload::Version { encoding, .. } => frames.push(match encoding {
                Encoding::Component => Some(Frame::default()),
                Encoding::Module => None,
            }),
            Payload::End(_) => {
                if let Some(Some(done)) = frames.pop() {
                    match frames.last_mut() {
                        Some(Some(parent)) => parent.components.push(done.instances),
                        _ => total = done.instances,
                    }
                }
            }
            payload => {
                let Some((Some(frame), outer)) = frames.split_last_mut() else {
                    continue;
                };
                frame.read(payload, outer)?;
            }
        }
    }
    Ok(total)
}

/// A component being read.
#[derive(Default)]
struct Frame {
    /// Core instances created so far, nested components' included.
    instances: u32,
    /// For each entry of the component index space, its core instances
    /// (zero for an imported component, which the host does not instantiate).
    components: Vec<u32>,
}

impl Frame {
    /// Account for one section; `outer` holds the enclosing units, innermost last.
    fn read(&mut self, payload: Payload<'_>, outer: &[Option<Frame>]) -> Result<(), Unsized> {
        match payload {
            Payload::InstanceSection(reader) => {
                let created = reader
                    .into_iter()
                    .filter(|instance| matches!(instance, Ok(Instance::Instantiate { .. })))
                    .count();
                self.instances = self
                    .instances
                    .saturating_add(u32::try_from(created).unwrap_or(u32::MAX));
            }
            Payload::ComponentInstanceSection(reader) => {
                for instance in reader.into_iter().flatten() {
                    if let ComponentInstance::Instantiate {
                        component_index, ..
                    } = instance
                    {
                        let nested = self.component(component_index);
                        self.instances = self.instances.saturating_add(nested);
                    }
                }
            }
            Payload::ComponentImportSection(reader) => {
                for import in reader.into_iter().flatten() {
                    if matches!(import.ty, ComponentTypeRef::Component(_)) {
                        self.components.push(0);
                    }
                }
            }
            Payload::ComponentAliasSection(reader) => {
                for alias in reader.into_iter().flatten() {
                    match alias {
                        ComponentAlias::Outer {
                            kind: ComponentOuterAliasKind::Component,
                            count,
                            index,
                        } => {
                            let aliased = match count {
                                0 => self.component(index),
                                _ => outer
                                    .len()
                                    .checked_sub(count as usize)
                                    .and_then(|at| outer.get(at)?.as_ref())
                                    .map_or(0, |frame| frame.component(index)),
                            };
                            self.components.push(aliased);
                        }
                        ComponentAlias::InstanceExport {
                            kind: ComponentExternalKind::Component,
                            ..
                        } => {
                            return Err(Unsized(
                                "it instantiates a component it takes from another instance",
                            ));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn component(&self, index: u32) -> u32 {
        self.components.get(index as usize).copied().unwrap_or(0)
    }
}

impl std::fmt::Display for Footprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} core instances, {} memories, {} tables",
            self.core_instances, self.memories, self.tables
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(text: &str) -> Result<u32, Unsized> {
        core_instances(&wat::parse_str(text).expect("valid component text"))
    }

    #[test]
    fn a_nested_component_counts_once_per_instantiation() {
        let counted = count(
            r#"(component
                (core module $m)
                (core instance (instantiate $m))
                (component $inner
                    (core module $n)
                    (core instance (instantiate $n))
                    (core instance (instantiate $n)))
                (instance (instantiate $inner))
                (instance (instantiate $inner))
                (component $outer
                    (alias outer 1 $inner (component $again))
                    (instance (instantiate $again)))
                (instance (instantiate $outer)))"#,
        );
        assert_eq!(counted, Ok(1 + 2 * 2 + 2));
    }

    #[test]
    fn a_component_taken_from_another_instance_cannot_be_sized() {
        let counted = count(
            r#"(component
                (component $exporter
                    (component $hidden
                        (core module $n)
                        (core instance (instantiate $n)))
                    (export "hidden" (component $hidden)))
                (instance $from (instantiate $exporter))
                (alias export $from "hidden" (component $taken))
                (instance (instantiate $taken)))"#,
        );
        assert!(counted.is_err(), "{counted:?}");
    }

    #[tokio::test]
    async fn a_component_bigger_than_the_whole_pool_is_refused_at_load() {
        let instances = "(core instance (instantiate $m))\n".repeat(30);
        let bytes = wat::parse_str(format!("(component (core module $m) {instances})")).unwrap();
        let bundle = tempfile::tempdir().unwrap();
        std::fs::write(
            bundle.path().join("plugin.toml"),
            "[plugin]\nname = \"big\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"big.wasm\"\n",
        )
        .unwrap();
        std::fs::write(bundle.path().join("big.wasm"), bytes).unwrap();
        let host = crate::PluginHost::new(crate::HostConfig {
            cache: None,
            max_instances: 1,
        })
        .unwrap();
        let error = host
            .load_bundle(bundle.path(), bundle.path())
            .await
            .err()
            .expect("a component needing two slots does not load on a pool of one");
        assert!(
            matches!(
                error,
                crate::BundleError::TooBigForPool {
                    slots: 2,
                    pool: 1,
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("--max-instances"), "{error}");
    }

    #[test]
    fn a_component_instantiating_an_imported_module_cannot_be_sized() {
        let mut config = wasmtime::Config::new();
        config.wasm_component_model(true);
        let engine = wasmtime::Engine::new(&config).unwrap();
        let bytes = wat::parse_str(
            r#"(component
                (import "m" (core module $m))
                (core instance (instantiate $m)))"#,
        )
        .unwrap();
        let component = wasmtime::component::Component::new(&engine, &bytes).unwrap();
        let sized = core_instances(&bytes).and_then(|count| Footprint::of(&component, count));
        assert_eq!(
            sized,
            Err(Unsized("it instantiates core modules it imports"))
        );
    }

    #[test]
    fn a_component_takes_one_slot_until_it_outgrows_one() {
        let small = Footprint {
            core_instances: 4,
            memories: 1,
            tables: 1,
        };
        assert_eq!(small.slots(), 1);
        let python = Footprint {
            core_instances: 14,
            memories: 1,
            tables: 2,
        };
        assert_eq!(python.slots(), 1);
        let huge = Footprint {
            core_instances: 50,
            memories: 1,
            tables: 1,
        };
        assert_eq!(huge.slots(), 3);
        let many_memories = Footprint {
            core_instances: 4,
            memories: 9,
            tables: 0,
        };
        assert_eq!(many_memories.slots(), 3);
    }
}
