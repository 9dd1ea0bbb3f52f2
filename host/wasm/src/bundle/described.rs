//! The tools a tool component describes, kept as a note in the compile cache
//! ([`crate::cache`]) so that a start does not instantiate an unchanged
//! component to ask again. A note is bound to the component's digest and
//! the manifest it was learned under; what it recalls is checked exactly as
//! a fresh answer is. A component's `describe` is expected to answer from
//! its code and manifest alone.

use serde::{Deserialize, Serialize};

use crate::bindings::{ToolAnnotations, ToolSpec};
use crate::cache::ComponentCache;
use crate::manifest::Manifest;

/// The note's topic.
const TOPIC: &str = "described-tools";

/// One described tool as the note keeps it.
#[derive(Serialize, Deserialize)]
struct Kept {
    name: String,
    description: String,
    input_schema: String,
    output_schema: Option<String>,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
}

/// What the component `digest` described under `manifest`, when a note of
/// it verifies.
pub(crate) fn recalled(
    cache: &ComponentCache,
    digest: &str,
    manifest: &Manifest,
) -> Option<Vec<ToolSpec>> {
    let fact = cache.recall(digest, TOPIC, &about(manifest)?)?;
    let kept: Vec<Kept> = serde_json::from_slice(&fact).ok()?;
    Some(
        kept.into_iter()
            .map(|kept| ToolSpec {
                name: kept.name,
                description: kept.description,
                input_schema: kept.input_schema,
                output_schema: kept.output_schema,
                annotations: ToolAnnotations {
                    read_only: kept.read_only,
                    destructive: kept.destructive,
                    idempotent: kept.idempotent,
                    open_world: kept.open_world,
                },
            })
            .collect(),
    )
}

/// Keep what the component `digest` described under `manifest`.
pub(crate) fn keep(
    cache: &ComponentCache,
    digest: &str,
    manifest: &Manifest,
    described: &[ToolSpec],
) {
    let kept: Vec<Kept> = described
        .iter()
        .map(|spec| Kept {
            name: spec.name.clone(),
            description: spec.description.clone(),
            input_schema: spec.input_schema.clone(),
            output_schema: spec.output_schema.clone(),
            read_only: spec.annotations.read_only,
            destructive: spec.annotations.destructive,
            idempotent: spec.annotations.idempotent,
            open_world: spec.annotations.open_world,
        })
        .collect();
    if let (Some(about), Ok(fact)) = (about(manifest), serde_json::to_vec(&kept)) {
        cache.note(digest, TOPIC, &about, &fact);
    }
}

/// What a note is about: the manifest, as JSON.
fn about(manifest: &Manifest) -> Option<Vec<u8>> {
    serde_json::to_vec(manifest).ok()
}
