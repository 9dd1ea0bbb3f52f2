//! Loading a bundle that was read: its component compiled (or taken from
//! the cache), its imports checked against its kind's world, its directory
//! grants resolved under the workspace root, and a tool bundle asked to
//! describe its tools, whose specs and schemas are checked here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cordon_kernel::skills::SKILL_TOOL_SEPARATOR as SEPARATOR;
use cordon_kernel::{EventLog, HookPhase, ToolAnnotations, ToolSpec};
use cordon_paths::RESERVED;
use serde_json::Value;
use wasmtime::component::InstancePre;

use super::described;
use super::{
    Bundle, BundleError, Exports, HookExports, LoadedBundle, Origin, Request, ToolExports,
    kind_export,
};
use crate::audit::Audit;
use crate::bindings::{
    self, after_tool_call, before_inference, before_tool_call, interpreter, step_end, tool,
    workspace,
};
use crate::cache::{CacheOutcome, Compiled, Lookup};
use crate::capabilities::dirs::{DirGrant, ResolvedDir};
use crate::capabilities::network::grant::Allowlist;
use crate::engine::Engine;
use crate::footprint::{self, Footprint};
use crate::guarded::{self, Body};
use crate::manifest::{BundleKind, Manifest, is_tool_name};
use crate::safeguards::Safeguards;
use crate::sandbox::CallState;
use crate::sandbox::builder::CallBuilder;

/// Load the bundle in folder `dir`, resolving directory grants under `workspace_root`.
pub(crate) async fn load(
    engine: &Arc<Engine>,
    dir: &Path,
    workspace_root: &Path,
    origin: Origin<'_>,
) -> Result<LoadedBundle, BundleError> {
    let started = Instant::now();
    let request = Request::read(dir, origin.skill, origin.profile)?;
    load_read(engine, request, dir, workspace_root, origin, started).await
}

/// Load the bundle `request` read from folder `dir`, begun at `started`.
pub(crate) async fn load_read(
    engine: &Arc<Engine>,
    request: Request,
    dir: &Path,
    workspace_root: &Path,
    origin: Origin<'_>,
    started: Instant,
) -> Result<LoadedBundle, BundleError> {
    let provenance = request.provenance(origin.bundled);
    let admitted = origin
        .approvals
        .check(request.presented(), origin.bundled)
        .map_err(|reason| BundleError::Unapproved {
            dir: dir.to_owned(),
            bundle: request.id.clone(),
            reason: Box::new(reason),
            narrowed: request.narrowed.clone(),
        })?;
    let network = Allowlist::new(&request.manifest.grants.network, &admitted.network);
    let Request {
        manifest,
        narrowed,
        digest,
        file,
        component: source,
        ..
    } = request;
    let path = dir.join(&manifest.component);
    let (root, dirs) = resolve_dirs(&file, &manifest.grants.dirs, workspace_root)?;
    let (component, core_instances, cache) =
        match engine.cache.lookup(&engine.engine, &digest, &manifest.name) {
            Lookup::Hit(Compiled {
                component,
                core_instances,
            }) => (component, core_instances, CacheOutcome::Hit),
            Lookup::Miss(discarded) => {
                let bytes = source.into_bytes(&digest)?;
                if wasmparser::Parser::is_core_wasm(&bytes) {
                    return Err(BundleError::CoreModule { path });
                }
                let counted = footprint::core_instances(&bytes);
                let (component, outcome) = engine
                    .cache
                    .compile(&engine.engine, (&bytes, &digest), counted.ok(), discarded)
                    .map_err(|error| BundleError::NotAComponent {
                        path: path.clone(),
                        message: format!("{error:#}"),
                    })?;
                let core_instances = counted.map_err(|reason| BundleError::Unsized {
                    path: path.clone(),
                    reason,
                })?;
                (component, core_instances, outcome)
            }
        };
    let footprint =
        Footprint::of(&component, core_instances).map_err(|reason| BundleError::Unsized {
            path: path.clone(),
            reason,
        })?;
    if footprint.slots() > engine.admission.size() {
        return Err(BundleError::TooBigForPool {
            path,
            footprint,
            slots: footprint.slots(),
            pool: engine.admission.size(),
        });
    }
    let exported = export_names(&engine.engine, &component);
    if manifest.kind != BundleKind::Hook {
        check_world(manifest.kind, &exported, &path)?;
    }
    let linker = match manifest.kind {
        BundleKind::Interpreter | BundleKind::Command => &engine.interpreter_linker,
        _ => &engine.linker,
    };
    let pre = linker
        .instantiate_pre(&component)
        .map_err(|error| BundleError::Imports {
            path: path.clone(),
            message: format!("{error:#}"),
        })?;
    let exports = match manifest.kind {
        BundleKind::Hook => Exports::Hooks(hook_exports(&file, &manifest, &pre, &exported)?),
        kind => {
            let wrong = |error: wasmtime::Error| BundleError::WrongWorld {
                path: path.clone(),
                kind,
                exports: vec![format!("{error:#}")],
            };
            match kind {
                BundleKind::Sandbox => {
                    Exports::Workspace(workspace::GuestIndices::new(&pre).map_err(wrong)?)
                }
                BundleKind::Interpreter | BundleKind::Command => {
                    Exports::Interpreter(interpreter::GuestIndices::new(&pre).map_err(wrong)?)
                }
                _ => Exports::Tool(ToolExports::new(&pre).map_err(wrong)?),
            }
        }
    };
    let bundle = Arc::new(Bundle {
        manifest,
        skill: origin.skill.map(str::to_owned),
        dir: dir.to_owned(),
        digest,
        provenance,
        admission: admitted.admission,
        dirs,
        root,
        footprint,
        network: Arc::new(network),
        network_policy: Arc::clone(origin.network),
        pre,
        exports,
    });
    let Described(tools, validators) = match &bundle.exports {
        Exports::Tool(exports) => describe(engine, &bundle, &exports.indices, &path).await?,
        Exports::Hooks(_) | Exports::Workspace(_) | Exports::Interpreter(_) => Described::default(),
    };
    let (tools, validators) = match origin.skill {
        None => (tools, validators),
        Some(skill) => {
            let scoped = |name: &str| format!("{skill}{SEPARATOR}{name}");
            (
                tools
                    .into_iter()
                    .map(|spec| ToolSpec {
                        name: scoped(&spec.name),
                        ..spec
                    })
                    .collect(),
                validators
                    .into_iter()
                    .map(|(name, validator)| (scoped(&name), validator))
                    .collect(),
            )
        }
    };
    Ok(LoadedBundle {
        bundle,
        tools,
        narrowed,
        validators,
        cache,
        load_time: started.elapsed(),
    })
}

fn export_names(
    engine: &wasmtime::Engine,
    component: &wasmtime::component::Component,
) -> Vec<String> {
    component
        .component_type()
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// Look up every phase the manifest lists; a listed phase the component does
/// not export is a load error.
fn hook_exports(
    file: &Path,
    manifest: &Manifest,
    pre: &InstancePre<CallState>,
    exported: &[String],
) -> Result<HookExports, BundleError> {
    let mut hooks = HookExports::default();
    for &phase in &manifest.hooks {
        let missing = |_| BundleError::MissingHook {
            file: file.to_owned(),
            phase,
            exports: exported.to_vec(),
        };
        match phase {
            HookPhase::BeforeInference => {
                hooks.before_inference =
                    Some(before_inference::GuestIndices::new(pre).map_err(missing)?);
            }
            HookPhase::BeforeToolCall => {
                hooks.before_tool_call =
                    Some(before_tool_call::GuestIndices::new(pre).map_err(missing)?);
            }
            HookPhase::AfterToolCall => {
                hooks.after_tool_call =
                    Some(after_tool_call::GuestIndices::new(pre).map_err(missing)?);
            }
            HookPhase::StepEnd => {
                hooks.step_end = Some(step_end::GuestIndices::new(pre).map_err(missing)?);
            }
        }
    }
    Ok(hooks)
}

fn check_world(kind: BundleKind, exports: &[String], path: &Path) -> Result<(), BundleError> {
    let expected = kind_export(kind);
    let compatible = exports.iter().any(|name| {
        name.strip_prefix(expected)
            .and_then(|rest| rest.strip_prefix('@'))
            .and_then(|version| semver::Version::parse(version).ok())
            .is_some_and(|version| version.major == 0 && version.minor == 1)
    });
    if compatible {
        Ok(())
    } else {
        Err(BundleError::WrongWorld {
            path: path.to_owned(),
            kind,
            exports: exports.to_vec(),
        })
    }
}

#[derive(Default)]
struct Described(Vec<ToolSpec>, BTreeMap<String, Arc<jsonschema::Validator>>);

/// The component's tools, as a note in the cache recalls them or as it
/// answers when asked, validated either way.
async fn describe(
    engine: &Arc<Engine>,
    bundle: &Arc<Bundle>,
    indices: &tool::GuestIndices,
    path: &Path,
) -> Result<Described, BundleError> {
    let cache = &engine.cache;
    // A fresh answer is kept only once it has passed the checks below.
    let (described, keeping) = match described::recalled(cache, &bundle.digest, &bundle.manifest) {
        Some(described) => (described, None),
        None => {
            let described =
                ask(engine, bundle, indices)
                    .await
                    .map_err(|message| BundleError::Describe {
                        path: path.to_owned(),
                        message,
                    })?;
            (described.clone(), Some(described))
        }
    };
    let mut specs = Vec::with_capacity(described.len());
    let mut validators = BTreeMap::new();
    for spec in described {
        let tool = spec.name.clone();
        let invalid = |reason: String| BundleError::InvalidTool {
            path: path.to_owned(),
            tool: tool.clone(),
            reason,
        };
        let (spec, validator) = validate_spec(&bundle.manifest.name, spec).map_err(invalid)?;
        if validators
            .insert(tool.clone(), Arc::new(validator))
            .is_some()
        {
            return Err(invalid("is described twice".into()));
        }
        specs.push(spec);
    }
    if let Some(described) = keeping {
        described::keep(cache, &bundle.digest, &bundle.manifest, &described);
    }
    Ok(Described(specs, validators))
}

/// Instantiate the component and ask it for its tools, as a guarded call
/// with the bundle's grants, no state and no tool to call.
async fn ask(
    engine: &Arc<Engine>,
    bundle: &Arc<Bundle>,
    indices: &tool::GuestIndices,
) -> Result<Vec<bindings::ToolSpec>, String> {
    // Nobody watches a bundle load: its trail is dropped, and a failure is
    // the load error.
    let audit = Audit::new(&bundle.manifest.name, Arc::new(EventLog::new()));
    let guard = Arc::new(Safeguards::default().guard(&bundle.root));
    let call = CallBuilder::new(bundle, "describe", audit, guard);
    let indices = indices.clone();
    let body: Body<Vec<bindings::ToolSpec>> = Box::new(move |store, instance| {
        Box::pin(async move {
            let guest = indices.load(&mut *store, &instance)?;
            guest.call_describe(&mut *store).await
        })
    });
    guarded::call(engine, call, false, body)
        .await
        .result
        .map_err(|error| error.to_string())
}

/// A described tool of bundle `bundle`, checked: its name lies in the
/// bundle's namespace (`BUNDLE.tool`), so a rule naming a bundle's tools
/// means that bundle and no other.
fn validate_spec(
    bundle: &str,
    spec: bindings::ToolSpec,
) -> Result<(ToolSpec, jsonschema::Validator), String> {
    if !is_tool_name(&spec.name) {
        return Err(
            "invalid name: use lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit"
                .into(),
        );
    }
    let local = spec
        .name
        .strip_prefix(bundle)
        .and_then(|rest| rest.strip_prefix('.'));
    if local.is_none_or(str::is_empty) {
        return Err(format!(
            "is outside the bundle's namespace: tools of bundle `{bundle}` are named `{bundle}.NAME`"
        ));
    }
    if spec.description.trim().is_empty() {
        return Err("has an empty description".into());
    }
    let (input_schema, validator) = parse_schema("input-schema", &spec.input_schema)?;
    let output_schema = spec
        .output_schema
        .as_deref()
        .map(|text| parse_schema("output-schema", text).map(|(schema, _)| schema))
        .transpose()?;
    let bindings::ToolAnnotations {
        read_only,
        destructive,
        idempotent,
        open_world,
    } = spec.annotations;
    let spec = ToolSpec {
        name: spec.name,
        description: spec.description,
        input_schema: Arc::new(input_schema),
        output_schema: output_schema.map(Arc::new),
        annotations: ToolAnnotations {
            read_only,
            destructive,
            idempotent,
            open_world,
        },
    };
    Ok((spec, validator))
}

fn parse_schema(field: &str, text: &str) -> Result<(Value, jsonschema::Validator), String> {
    let schema: Value = serde_json::from_str(text)
        .map_err(|error| format!("{field} is not valid JSON: {error}"))?;
    let validator = jsonschema::validator_for(&schema)
        .map_err(|error| format!("{field} is not a valid JSON Schema: {error}"))?;
    Ok((schema, validator))
}

/// The canonical workspace root and the grants `dirs` of the manifest `file`
/// resolved under it. A grant may hold Cordon's `.cordon` folder (the guard
/// hides it) but never name it or lie inside it.
fn resolve_dirs(
    file: &Path,
    dirs: &[DirGrant],
    workspace_root: &Path,
) -> Result<(PathBuf, Vec<ResolvedDir>), BundleError> {
    let root = workspace_root
        .canonicalize()
        .map_err(|error| BundleError::Folder {
            path: workspace_root.to_owned(),
            message: format!("workspace root is unusable: {error}"),
        })?;
    let reserved = root.join(RESERVED);
    let reserved_real = reserved.canonicalize().ok();
    let resolved = dirs
        .iter()
        .enumerate()
        .map(|(index, grant)| {
            let fail = |reason: String| BundleError::DirGrant {
                file: file.to_owned(),
                field: format!("grants.dirs[{index}].host"),
                value: grant.host.clone(),
                reason,
            };
            let host = root
                .join(&grant.host)
                .canonicalize()
                .map_err(|error| fail(format!("cannot open under {}: {error}", root.display())))?;
            if !host.starts_with(&root) {
                return Err(fail(format!(
                    "resolves to {}, outside the workspace root {}",
                    host.display(),
                    root.display()
                )));
            }
            if !host.is_dir() {
                return Err(fail(format!("{} is not a directory", host.display())));
            }
            if host.starts_with(&reserved)
                || reserved_real.as_ref().is_some_and(|real| host.starts_with(real))
            {
                return Err(fail(format!(
                    "resolves to {}, inside `{RESERVED}`, which holds Cordon's run store; no bundle is granted it",
                    host.display()
                )));
            }
            Ok(ResolvedDir {
                host,
                guest: grant.guest.clone(),
                mode: grant.mode,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok((root, resolved))
}
