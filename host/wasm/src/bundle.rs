//! Loading one bundle: read and validate its manifest (narrowed to the
//! profile of untrusted code for a skill's bundle), read and verify its
//! component, check that the operator approved what it asks for, resolve its
//! directory grants, compile it (through the cache),
//! check that it exports what its kind needs (the tool interface, every hook
//! phase its manifest lists, or the workspace) and that Cordon can satisfy its imports, pre-link
//! it, and ask a tool component to describe its tools.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_kernel::skills::SKILL_TOOL_SEPARATOR as SEPARATOR;
use cordon_kernel::{EventLog, HookPhase, ToolAnnotations, ToolSpec};
use serde_json::Value;
use wasmtime::component::InstancePre;

use crate::approvals::{Admission, Approvals, Presented, Unapproved};
use crate::audit::Audit;
use crate::bindings::{
    self, CONTRACT_VERSION, INTERPRETER_EXPORT, TOOL_EXPORT, WORKSPACE_EXPORT, after_tool_call,
    before_inference, before_tool_call, interpreter, step_end, tool, workspace,
};
use crate::bundled::{BundledPlugins, Provenance};
use crate::cache::{CacheOutcome, sha256_hex};
use crate::capabilities::CallBuilder;
use crate::capabilities::dirs::{self, ResolvedDir};
use crate::capabilities::network::grant::Allowlist;
use crate::capabilities::network::policy::NetworkPolicy;
use crate::engine::Engine;
use crate::footprint::{Footprint, Unsized};
use crate::guarded::{self, Body};
use crate::manifest::{BundleKind, MANIFEST_FILE, Manifest, ManifestError, is_tool_name};
use crate::pin::Pinned;
use crate::profile::UntrustedProfile;
use crate::safeguards::Safeguards;
use crate::sandbox::CallState;

/// A loaded bundle: its manifest, where it came from, and its pre-linked component.
pub struct Bundle {
    /// The validated manifest, as the profile of untrusted code narrowed it
    /// for a skill's bundle.
    pub manifest: Manifest,
    /// The skill that ships the bundle, for a skill's tool bundle.
    pub skill: Option<String>,
    /// The bundle folder.
    pub dir: PathBuf,
    /// SHA-256 of the component, lowercase hex.
    pub digest: String,
    /// Whether its component is the one this build of Cordon made for a
    /// bundled plugin of its name.
    pub provenance: Provenance,
    /// How it passed the operator's check.
    pub admission: Admission,
    /// Directory grants resolved to canonical host paths.
    pub dirs: Vec<ResolvedDir>,
    /// The workspace root the grants resolved under, canonical.
    pub(crate) root: PathBuf,
    /// What one instance takes from the instance pool.
    pub footprint: Footprint,
    /// Where its calls may connect: what it asks, as the operator narrowed it.
    pub network: Arc<Allowlist>,
    /// How the host connects for it.
    pub(crate) network_policy: Arc<NetworkPolicy>,
    pub(crate) pre: InstancePre<CallState>,
    pub(crate) exports: Exports,
}

/// Where to find the exports the host calls, looked up once at load.
pub(crate) enum Exports {
    /// A tool component's `tool` interface.
    Tool(tool::GuestIndices),
    /// The hook phases the manifest lists; phases it does not list stay `None`
    /// even when the component exports them, so they are never called.
    Hooks(HookExports),
    /// A sandbox backend's `workspace` interface.
    Workspace(workspace::GuestIndices),
    /// An interpreter's `interpreter` interface.
    Interpreter(interpreter::GuestIndices),
}

/// A hook component's phases, each present only when the manifest lists it.
#[derive(Default)]
pub(crate) struct HookExports {
    pub(crate) before_inference: Option<before_inference::GuestIndices>,
    pub(crate) before_tool_call: Option<before_tool_call::GuestIndices>,
    pub(crate) after_tool_call: Option<after_tool_call::GuestIndices>,
    pub(crate) step_end: Option<step_end::GuestIndices>,
}

impl Bundle {
    /// The bundle's name where it must be unique, in approvals and in the
    /// trail: its manifest's name, or `SKILL/NAME` for a skill's bundle.
    pub fn id(&self) -> String {
        match &self.skill {
            Some(skill) => format!("{skill}{SEPARATOR}{}", self.manifest.name),
            None => self.manifest.name.clone(),
        }
    }
}

/// Where a bundle comes from, and what it is loaded under.
#[derive(Clone, Copy)]
pub(crate) struct Origin<'a> {
    /// The skill shipping it, for a skill's tool bundle.
    pub(crate) skill: Option<&'a str>,
    /// What the operator approved.
    pub(crate) approvals: &'a Approvals,
    /// The plugins this build of Cordon ships.
    pub(crate) bundled: &'a BundledPlugins,
    /// The profile a skill's bundle is narrowed to.
    pub(crate) profile: &'a UntrustedProfile,
    /// How the host connects for every bundle.
    pub(crate) network: &'a Arc<NetworkPolicy>,
}

/// A bundle together with the tools it described when loaded.
#[derive(Clone)]
pub struct LoadedBundle {
    /// The bundle.
    pub bundle: Arc<Bundle>,
    /// Its tools, validated, named as the run sees them: `SKILL/BUNDLE.tool`
    /// for a skill's bundle.
    pub tools: Vec<ToolSpec>,
    /// What the profile of untrusted code took away from a skill's bundle,
    /// one line each.
    pub narrowed: Vec<String>,
    /// Each tool's compiled input schema, by tool name.
    pub(crate) validators: BTreeMap<String, Arc<jsonschema::Validator>>,
    /// Whether the compiled code came from the cache.
    pub cache: CacheOutcome,
    /// How long loading took.
    pub load_time: Duration,
}

/// Why a bundle could not be loaded. Each names the file and, where it applies,
/// the manifest field and value at fault.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The manifest is unreadable or invalid.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The plugins directory, or a folder in it, cannot be read.
    #[error("{}: {message}", path.display())]
    Folder {
        /// The directory or folder.
        path: PathBuf,
        /// Why it cannot be read.
        message: String,
    },
    /// The manifest lists a hook phase the component does not export.
    #[error(
        "{}: field `plugin.hooks` lists `{phase}`, but the component does not export `cordon:plugin/{phase}@{CONTRACT_VERSION}`; it exports [{}]",
        file.display(),
        exports.join(", ")
    )]
    MissingHook {
        /// The manifest file.
        file: PathBuf,
        /// The phase the component does not export.
        phase: HookPhase,
        /// The interfaces the component does export.
        exports: Vec<String>,
    },
    /// The component file cannot be read.
    #[error(
        "{}: field `plugin.component` = {component:?}: cannot read {}: {source}{}",
        file.display(),
        path.display(),
        match unbuilt {
            Some(dir) => format!("; its [build] command makes it: run `cordon build {}`", dir.display()),
            None => String::new(),
        }
    )]
    ComponentUnreadable {
        /// The manifest file.
        file: PathBuf,
        /// The component as the manifest names it.
        component: PathBuf,
        /// The component file it resolves to.
        path: PathBuf,
        /// Why it cannot be read.
        #[source]
        source: std::io::Error,
        /// The bundle folder, when the component is missing and the
        /// manifest's `[build]` command makes it.
        unbuilt: Option<PathBuf>,
    },
    /// The component's digest differs from the manifest's.
    #[error("{}: field `plugin.sha256` = \"{expected}\": {} has sha256 {actual}", file.display(), path.display())]
    DigestMismatch {
        /// The manifest file.
        file: PathBuf,
        /// The component file.
        path: PathBuf,
        /// The digest the manifest gives, in hex.
        expected: String,
        /// The component's digest, in hex.
        actual: String,
    },
    /// A directory grant does not resolve to a directory inside the workspace.
    #[error("{}: field `{field}` = {value:?}: {reason}", file.display())]
    DirGrant {
        /// The manifest file.
        file: PathBuf,
        /// The field at fault, such as `grants.dirs[0].host`.
        field: String,
        /// The directory as the manifest gives it.
        value: PathBuf,
        /// Why it was refused.
        reason: String,
    },
    /// The file is a core WebAssembly module, which a component wraps.
    #[error(
        "{}: a core WebAssembly module, not a component: build it for wasm32-wasip2 (`cargo build --target wasm32-wasip2`), or make a component of it with `cordon sdk component CORE -o OUT`",
        path.display()
    )]
    CoreModule {
        /// The module file.
        path: PathBuf,
    },
    /// The file is not a WebAssembly component this engine can compile.
    #[error("{}: not a valid WebAssembly component: {message}", path.display())]
    NotAComponent {
        /// The component file.
        path: PathBuf,
        /// Why it does not compile.
        message: String,
    },
    /// The component does not export the interface its kind needs.
    #[error(
        "{}: wrong world: a {kind} bundle must export `{}@{CONTRACT_VERSION}` (build it against the `{}` world); it exports [{}]",
        path.display(),
        kind_export(*kind),
        kind_world(*kind),
        exports.join(", ")
    )]
    WrongWorld {
        /// The component file.
        path: PathBuf,
        /// The bundle's kind, as its manifest declares it.
        kind: BundleKind,
        /// The interfaces the component does export.
        exports: Vec<String>,
    },
    /// The component imports something Cordon does not provide.
    #[error("{}: imports something Cordon does not provide: {message}", path.display())]
    Imports {
        /// The component file.
        path: PathBuf,
        /// What cannot be provided.
        message: String,
    },
    /// `describe` failed or returned something unusable.
    #[error("{}: describe(): {message}", path.display())]
    Describe {
        /// The component file.
        path: PathBuf,
        /// How it failed, or what is wrong with its answer.
        message: String,
    },
    /// A described tool is invalid.
    #[error("{}: tool {tool:?}: {reason}", path.display())]
    InvalidTool {
        /// The component file.
        path: PathBuf,
        /// The tool's name.
        tool: String,
        /// What is wrong with it.
        reason: String,
    },
    /// One instance of the component needs more of the instance pool than
    /// the whole pool holds.
    #[error(
        "{}: one instance needs {footprint}, {slots} slots of the instance pool, which has {pool}; raise it with `--max-instances N` or `max-instances` in the operator config",
        path.display()
    )]
    TooBigForPool {
        /// The component file.
        path: PathBuf,
        /// What one instance needs.
        footprint: Footprint,
        /// The slots that makes.
        slots: u32,
        /// The slots the pool has.
        pool: u32,
    },
    /// The bundle asks for grants the operator did not approve, or its
    /// component changed since.
    #[error(
        "{}: bundle `{bundle}` is not loaded: {reason}{}",
        dir.display(),
        cuts(narrowed)
    )]
    Unapproved {
        /// The bundle folder.
        dir: PathBuf,
        /// The bundle, as approvals name it.
        bundle: String,
        /// What is missing.
        reason: Box<Unapproved>,
        /// What the profile of untrusted code takes away once it loads.
        narrowed: Vec<String>,
    },
    /// A skill ships a bundle that is not a tool bundle.
    #[error(
        "{}: a skill's `tools` folder holds tool bundles only; this one's kind is `{kind}`",
        file.display()
    )]
    NotASkillTool {
        /// The manifest file.
        file: PathBuf,
        /// Its kind.
        kind: BundleKind,
    },
    /// How much of the instance pool one instance takes cannot be known
    /// from the component's binary.
    #[error(
        "{}: Cordon cannot tell how much of the instance pool one instance takes: {reason}",
        path.display()
    )]
    Unsized {
        /// The component file.
        path: PathBuf,
        /// Why.
        reason: Unsized,
    },
    /// Two bundles share a name.
    #[error("{}: bundle name `{name}` is already used by {}", second.display(), first.display())]
    DuplicateBundle {
        /// The shared name.
        name: String,
        /// The folder of the bundle loaded first, which keeps the name.
        first: PathBuf,
        /// The folder of the bundle refused.
        second: PathBuf,
    },
}

/// What the profile of untrusted code takes from a bundle, as a clause of
/// an error: empty when it takes nothing.
fn cuts(narrowed: &[String]) -> String {
    if narrowed.is_empty() {
        return String::new();
    }
    format!(
        "; once approved, it runs without {}",
        narrowed.join(", without ")
    )
}

/// What a bundle asks for, read without running or compiling anything: its
/// manifest (as the profile of untrusted code narrows a skill's, and as an
/// approval pins it), what the profile took away, its name where approvals
/// name it, and its component's bytes and digest.
pub struct Request {
    /// The bundle's name as approvals name it: `SKILL/NAME` for a skill's.
    pub id: String,
    /// The skill that ships it, for a skill's bundle.
    pub skill: Option<String>,
    /// The manifest, narrowed for a skill's bundle.
    pub manifest: Manifest,
    /// The manifest as the file has it, as an approval pins it.
    pub pinned: Pinned,
    /// What the profile of untrusted code took away, one line each.
    pub narrowed: Vec<String>,
    /// The component's SHA-256, lowercase hex.
    pub digest: String,
    /// The manifest file.
    pub file: PathBuf,
    bytes: Vec<u8>,
}

impl Request {
    /// How long the component is.
    pub(crate) fn size(&self) -> usize {
        self.bytes.len()
    }
}

impl Request {
    /// Read the bundle in `dir`, a tool bundle skill `skill` ships when one
    /// is named, narrowed to `profile` then.
    pub fn read(
        dir: &Path,
        skill: Option<&str>,
        profile: &UntrustedProfile,
    ) -> Result<Self, BundleError> {
        let file = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&file).map_err(|source| ManifestError::Read {
            file: file.clone(),
            source,
        })?;
        let mut manifest = Manifest::parse(&file, &text)?;
        let pinned = Pinned::of(&file, &text)?;
        let narrowed = match skill {
            Some(_) if manifest.kind != BundleKind::Tool => {
                return Err(BundleError::NotASkillTool {
                    file,
                    kind: manifest.kind,
                });
            }
            Some(_) => profile.narrow(&mut manifest),
            None => Vec::new(),
        };
        let path = dir.join(&manifest.component);
        let bytes = std::fs::read(&path).map_err(|source| BundleError::ComponentUnreadable {
            file: file.clone(),
            component: manifest.component.clone(),
            path: path.clone(),
            unbuilt: (source.kind() == std::io::ErrorKind::NotFound && manifest.build.is_some())
                .then(|| as_typed(dir)),
            source,
        })?;
        let digest = sha256_hex(&bytes);
        if let Some(expected) = &manifest.sha256
            && *expected != digest
        {
            return Err(BundleError::DigestMismatch {
                file,
                path,
                expected: expected.clone(),
                actual: digest,
            });
        }
        let id = match skill {
            Some(skill) => format!("{skill}{SEPARATOR}{}", manifest.name),
            None => manifest.name.clone(),
        };
        Ok(Self {
            id,
            skill: skill.map(str::to_owned),
            manifest,
            pinned,
            narrowed,
            digest,
            file,
            bytes,
        })
    }

    /// The bundle as the operator's check sees it.
    pub fn presented(&self) -> Presented<'_> {
        Presented {
            id: &self.id,
            name: &self.manifest.name,
            skill: self.skill.is_some(),
            digest: &self.digest,
            grants: &self.manifest.grants,
            manifest: &self.pinned,
        }
    }

    /// Where its component comes from, judged by its bytes against the
    /// plugins `bundled` this build ships.
    pub fn provenance(&self, bundled: &BundledPlugins) -> Provenance {
        bundled.provenance(&self.manifest.name, &self.digest, self.skill.is_some())
    }
}

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
        bytes,
        ..
    } = request;
    let path = dir.join(&manifest.component);
    let (root, dirs) = dirs::resolve(&file, &manifest.grants.dirs, workspace_root)?;
    if wasmparser::Parser::is_core_wasm(&bytes) {
        return Err(BundleError::CoreModule { path });
    }
    let (component, cache) = engine
        .cache
        .load(&engine.engine, (&bytes, &digest), &manifest.name)
        .map_err(|error| BundleError::NotAComponent {
            path: path.clone(),
            message: format!("{error:#}"),
        })?;
    let footprint = Footprint::of(&component, &bytes).map_err(|reason| BundleError::Unsized {
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
        BundleKind::Interpreter => &engine.interpreter_linker,
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
                BundleKind::Interpreter => {
                    Exports::Interpreter(interpreter::GuestIndices::new(&pre).map_err(wrong)?)
                }
                _ => Exports::Tool(tool::GuestIndices::new(&pre).map_err(wrong)?),
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
        Exports::Tool(indices) => describe(engine, &bundle, indices, &path).await?,
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

/// The interface a bundle of `kind` must export, without version.
fn kind_export(kind: BundleKind) -> &'static str {
    match kind {
        BundleKind::Sandbox => WORKSPACE_EXPORT,
        BundleKind::Interpreter => INTERPRETER_EXPORT,
        BundleKind::Tool | BundleKind::Hook => TOOL_EXPORT,
    }
}

/// The world a bundle of `kind` is built against.
fn kind_world(kind: BundleKind) -> &'static str {
    match kind {
        BundleKind::Sandbox => "sandbox-backend",
        BundleKind::Interpreter => "interpreter-plugin",
        BundleKind::Tool => "tool-plugin",
        BundleKind::Hook => "hook-plugin",
    }
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

/// Ask the component for its tools, as a guarded call with the bundle's
/// grants, no state and no tool to call, and validate what it says.
async fn describe(
    engine: &Arc<Engine>,
    bundle: &Arc<Bundle>,
    indices: &tool::GuestIndices,
    path: &Path,
) -> Result<Described, BundleError> {
    let fail = |message: String| BundleError::Describe {
        path: path.to_owned(),
        message,
    };
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
    let described = guarded::call(engine, call, false, body)
        .await
        .result
        .map_err(|error| fail(error.to_string()))?;
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
    Ok(Described(specs, validators))
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

/// `dir` as a person would type it here: relative to the working directory
/// when it lies inside it, else as it is.
fn as_typed(dir: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| dir.strip_prefix(cwd).ok().map(Path::to_owned))
        .filter(|relative| !relative.as_os_str().is_empty())
        .unwrap_or_else(|| dir.to_owned())
}
