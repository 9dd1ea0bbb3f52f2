//! Loading one bundle: read and validate its manifest (narrowed to the
//! profile of untrusted code for a skill's bundle), read and verify its
//! component, check that the operator approved what it asks for, resolve its
//! directory grants, compile it (through the cache),
//! check that it exports what its kind needs (the tool interface, every hook
//! phase its manifest lists, or the workspace) and that Cordon can satisfy its imports, pre-link
//! it, and ask a tool component to describe its tools.

mod described;
pub(crate) mod load;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::skills::SKILL_TOOL_SEPARATOR as SEPARATOR;
use cordon_kernel::{HookPhase, Reach, ToolSpec};
use wasmtime::component::{ComponentExportIndex, InstancePre};

use crate::approvals::{Admission, Approvals, Presented, Unapproved};
use crate::bindings::{
    CONTRACT_VERSION, INTERPRETER_EXPORT, TOOL_EXPORT, WORKSPACE_EXPORT, after_tool_call,
    before_inference, before_tool_call, interpreter, step_end, tool, workspace,
};
use crate::bundled::{BundledPlugins, Provenance};
use crate::cache::{CacheOutcome, ComponentRead, Digests, sha256_hex};
use crate::capabilities::dirs::{DirMode, ResolvedDir};
use crate::capabilities::network::grant::Allowlist;
use crate::capabilities::network::policy::NetworkPolicy;
use crate::footprint::{Footprint, Unsized};
use crate::manifest::{BundleKind, MANIFEST_FILE, Manifest, ManifestError};
use crate::pin::Pinned;
use crate::profile::UntrustedProfile;
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
    Tool(ToolExports),
    /// The hook phases the manifest lists; phases it does not list stay `None`
    /// even when the component exports them, so they are never called.
    Hooks(HookExports),
    /// A sandbox backend's `workspace` interface.
    Workspace(workspace::GuestIndices),
    /// An interpreter's `interpreter` interface.
    Interpreter(interpreter::GuestIndices),
}

/// A tool component's `tool` interface, and its `call` function on its own:
/// a call type-checks only the function it calls, not the whole interface.
pub(crate) struct ToolExports {
    pub(crate) indices: tool::GuestIndices,
    pub(crate) call: ComponentExportIndex,
}

impl ToolExports {
    /// Look the interface and its `call` up in what `pre` instantiates.
    pub(crate) fn new(pre: &InstancePre<CallState>) -> wasmtime::Result<Self> {
        let indices = tool::GuestIndices::new(pre)?;
        let component = pre.component();
        let interface = format!("{TOOL_EXPORT}@{CONTRACT_VERSION}");
        let call = component
            .get_export_index(None, &interface)
            .and_then(|interface| component.get_export_index(Some(&interface), "call"))
            .ok_or_else(|| wasmtime::format_err!("no `call` in `{interface}`"))?;
        Ok(Self { indices, call })
    }
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

    /// How far its calls can act, from the grants in force: past their step
    /// when they may write a host directory, connect to any origin, or call
    /// other tools. Nothing else a bundle is granted acts outside the call:
    /// state writes, log lines and content travel back with the outcome,
    /// variables and read-only directories are only read, and a question
    /// only asks.
    pub(crate) fn reach(&self) -> Reach {
        let writes_files = self.dirs.iter().any(|dir| dir.mode == DirMode::Rw);
        let connects = !self.network.is_empty();
        let calls_tools = !self.manifest.grants.tools.is_empty();
        if writes_files || connects || calls_tools {
            Reach::Beyond
        } else {
            Reach::Outcome
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
    /// The component file changed between reading its bundle and compiling it.
    #[error("{}: changed while its bundle was loaded: {change}; load it again", path.display())]
    ComponentChanged {
        /// The component file.
        path: PathBuf,
        /// What changed, or why it could not be read again.
        change: String,
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
    /// The component file, as it was found.
    pub(crate) component: ComponentFile,
}

impl Request {
    /// How long the component is.
    pub(crate) fn size(&self) -> usize {
        self.component.size
    }
}

/// A bundle's component file as its bundle was read: its length, and its
/// bytes when they were read to learn its digest.
pub(crate) struct ComponentFile {
    path: PathBuf,
    size: usize,
    bytes: Option<Vec<u8>>,
}

impl ComponentFile {
    /// Its bytes, read now if its digest was remembered rather than read,
    /// which they must still have.
    pub(crate) fn into_bytes(self, digest: &str) -> Result<Vec<u8>, BundleError> {
        if let Some(bytes) = self.bytes {
            return Ok(bytes);
        }
        let bytes = std::fs::read(&self.path).map_err(|source| BundleError::ComponentChanged {
            path: self.path.clone(),
            change: source.to_string(),
        })?;
        let now = sha256_hex(&bytes);
        if now != digest {
            return Err(BundleError::ComponentChanged {
                path: self.path,
                change: format!(
                    "it had sha256 {digest} when its bundle was read and has {now} now"
                ),
            });
        }
        Ok(bytes)
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
        Self::read_with(dir, skill, profile, None)
    }

    /// [`Request::read`], taking the component's digest from `digests`
    /// when they remember the file as it is.
    pub(crate) fn read_with(
        dir: &Path,
        skill: Option<&str>,
        profile: &UntrustedProfile,
        digests: Option<Digests<'_>>,
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
        let found = match digests {
            Some(digests) => digests.read(&path),
            None => std::fs::read(&path).map(ComponentRead::of),
        };
        let ComponentRead {
            digest,
            size,
            bytes,
        } = found.map_err(|source| BundleError::ComponentUnreadable {
            file: file.clone(),
            component: manifest.component.clone(),
            path: path.clone(),
            unbuilt: (source.kind() == std::io::ErrorKind::NotFound && manifest.build.is_some())
                .then(|| as_typed(dir)),
            source,
        })?;
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
            component: ComponentFile { path, size, bytes },
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

/// The interface a bundle of `kind` must export, without version.
pub(crate) fn kind_export(kind: BundleKind) -> &'static str {
    match kind {
        BundleKind::Sandbox => WORKSPACE_EXPORT,
        BundleKind::Interpreter | BundleKind::Command => INTERPRETER_EXPORT,
        BundleKind::Tool | BundleKind::Hook => TOOL_EXPORT,
    }
}

/// The world a bundle of `kind` is built against.
pub(crate) fn kind_world(kind: BundleKind) -> &'static str {
    match kind {
        BundleKind::Sandbox => "sandbox-backend",
        BundleKind::Interpreter | BundleKind::Command => "interpreter-plugin",
        BundleKind::Tool => "tool-plugin",
        BundleKind::Hook => "hook-plugin",
    }
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
