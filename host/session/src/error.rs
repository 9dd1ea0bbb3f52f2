//! What stops a host from being assembled, as values a caller can match:
//! each says what it was doing and names the file, field, flag or value at
//! fault, in the words the CLI prints. A failure of a crate beneath keeps its
//! own type, as the source or as the error itself.

use std::path::PathBuf;

use cordon_kernel::{AgentError, CommitError, PolicyError, StateDisagreement};
use cordon_mcp_client::{ConnectError, Refusal};
use cordon_wasm::{
    ApprovalsError, BundleError, CacheKeyError, EngineError, ManifestError, TrustError,
    WorkspaceError,
};

/// Why the operator's settings, a plugin host, a run's assembly or a run
/// store could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A file a flag names is not there.
    #[error("{flag} {}: no such file", file.display())]
    NoSuchFile {
        /// The flag, as typed.
        flag: &'static str,
        /// The file it names.
        file: PathBuf,
    },
    /// A file Cordon reads could not be read.
    #[error("reading the {what} {}", file.display())]
    Unreadable {
        /// What the file holds: `config`, `approvals`, ...
        what: &'static str,
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        error: std::io::Error,
    },
    /// A file holds a value Cordon cannot take: `problem` names the field
    /// and the value and says what is wrong with it.
    #[error("{file}: {problem}")]
    Invalid {
        /// The file, as shown.
        file: String,
        /// The field, its value and what is wrong.
        problem: String,
    },
    /// The approvals file is not valid.
    #[error(transparent)]
    Approvals(#[from] ApprovalsError),
    /// An entry of the operator's `trusted` list is not valid.
    #[error("{file}: field `trusted[{index}]`: {error}")]
    Trusted {
        /// The config file, as shown.
        file: String,
        /// The entry's place in the list.
        index: usize,
        /// What is wrong with it.
        error: TrustError,
    },
    /// The engine could not be made.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A bundled plugin's manifest is not valid: this build of Cordon is
    /// broken.
    #[error(transparent)]
    Bundled(#[from] ManifestError),
    /// The compile cache folder lies inside the workspace, where a component
    /// could swap what the host runs.
    #[error(
        "the compile cache {} lies inside the workspace {}, where a component could replace the native code Cordon runs; {chosen_by} chose it: choose a folder outside the workspace with --cache-dir DIR, or run with --no-cache",
        dir.display(),
        workspace.display()
    )]
    CacheInside {
        /// The cache folder.
        dir: PathBuf,
        /// What chose it: a flag or an environment variable.
        chosen_by: String,
        /// The workspace.
        workspace: PathBuf,
    },
    /// The compile cache's key could not be read or made.
    #[error("the compile cache needs its key; or run with --no-cache")]
    CacheKey(#[source] CacheKeyError),
    /// A certificate authority file the network config names is unusable.
    #[error("{field}: {problem}")]
    CertificateAuthorities {
        /// The file and field that name it.
        field: String,
        /// What is wrong.
        problem: String,
    },
    /// A plugins folder that was chosen (by a flag, the environment or a
    /// config) does not exist.
    #[error("the plugins folder {} ({chosen_by}) does not exist; {remedy}", folder.display())]
    NoPluginsFolder {
        /// The folder.
        folder: PathBuf,
        /// Who chose it.
        chosen_by: String,
        /// What to do about it.
        remedy: String,
    },
    /// No folder of the plugins search path exists.
    #[error(
        "no plugins folder found (looked in {}); pass --plugins DIR, set {}, or install bundles with `cordon plugins install DIR`",
        looked.join(", "),
        crate::plugin_path::PLUGINS_ENV
    )]
    NoPlugins {
        /// Every place looked, with who chose it.
        looked: Vec<String>,
    },
    /// The plugins folders could not be loaded at all.
    #[error("loading the plugins folders")]
    Load(#[source] BundleError),
    /// Bundles did not load, and the command was told to stop then.
    #[error(
        "{0} bundle error(s) and --strict; run `cordon plugins check` with the same plugins folders for details"
    )]
    Strict(usize),
    /// Bundles offer one tool name twice: each clash.
    #[error("{}", shown(.0))]
    Bundles(Vec<BundleError>),
    /// A plugin's tools clash with the built-in tools or an MCP server's.
    #[error(
        "tools [{}] are provided twice: a plugin's tools clash with the built-in tools (`read`, `write`, `edit`, `glob`, `grep`, `bash`, `skill`) or an MCP server's (`SERVER.TOOL`)",
        .0.join(", ")
    )]
    ProvidedTwice(Vec<String>),
    /// The agent file is not valid.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// A permissions file is not valid.
    #[error(transparent)]
    Permissions(#[from] PolicyError),
    /// The operator's default permissions file is not valid.
    #[error("{error} (the `defaults.permissions` of {})", config.display())]
    DefaultPermissions {
        /// The config that names the permissions file.
        config: PathBuf,
        /// What is wrong with it.
        error: PolicyError,
    },
    /// The agent's `hooks` names a hook bundle that is not loaded.
    #[error(
        "{agent}: field `hooks`: no hook bundle `{name}` ({}){}",
        listed(loaded),
        nearest.as_ref().map(|near| format!("; the nearest is `{near}`")).unwrap_or_default()
    )]
    UnknownHook {
        /// The agent file, as shown.
        agent: String,
        /// The name it gives.
        name: String,
        /// The hook bundles loaded.
        loaded: Vec<String>,
        /// The loaded name nearest to it, when one is near.
        nearest: Option<String>,
    },
    /// A bundle's state key declaration is not valid.
    #[error("{}: state.{key:?}: {reason}", manifest.display())]
    StateKey {
        /// The bundle's manifest.
        manifest: PathBuf,
        /// The key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// Two bundles declare one state key differently.
    #[error(
        "{disagreement} ({}): two bundles that write one key must agree on it; leave one of them out of the plugins folder",
        manifest.display()
    )]
    BundlesDisagree {
        /// How they disagree.
        disagreement: Box<StateDisagreement>,
        /// The manifest of the later bundle.
        manifest: PathBuf,
    },
    /// The agent declares a state key otherwise than a bundle that writes it.
    #[error(
        "{agent}: {disagreement} ({}): write `{} = \"{}\"` in the agent's `[state.{:?}]`, or remove that table to adopt the bundle's declaration",
        manifest.display(),
        disagreement.field,
        disagreement.bundle,
        disagreement.key
    )]
    AgentDisagrees {
        /// The agent file, as shown.
        agent: String,
        /// How they disagree.
        disagreement: Box<StateDisagreement>,
        /// The bundle's manifest.
        manifest: PathBuf,
    },
    /// The agent's sandbox backend could not be bound.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// The agent lists an MCP server the operator did not approve as it asks.
    #[error(transparent)]
    McpRefused(Box<Refusal>),
    /// An MCP server could not be reached, and the run was told to stop then.
    #[error(transparent)]
    McpUnreachable(#[from] ConnectError),
    /// The run store could not be opened or created.
    #[error("opening the run store {location}")]
    Store {
        /// The store, as shown.
        location: String,
        /// Why.
        #[source]
        error: CommitError,
    },
    /// No run store is at the default place yet.
    #[error(
        "no run store at {}: no run was made with it yet (`cordon run` creates it; `--store` or CORDON_STORE names another)",
        .0.display()
    )]
    NoStore(PathBuf),
    /// `last` names the newest run of a store that has none.
    #[error("`last` names the newest run, and the store has none")]
    NoRuns,
    /// The run store failed.
    #[error(transparent)]
    Commit(#[from] CommitError),
}

impl From<Refusal> for SessionError {
    fn from(refusal: Refusal) -> Self {
        Self::McpRefused(Box::new(refusal))
    }
}

/// The hook bundles `loaded`, or that none is.
fn listed(loaded: &[String]) -> String {
    if loaded.is_empty() {
        "none is loaded".to_owned()
    } else {
        format!("those loaded: {}", loaded.join(", "))
    }
}

/// Every error of `errors`, one after another.
fn shown(errors: &[BundleError]) -> String {
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    shown.join("; ")
}

/// What a fallible step of assembling a host gives back.
pub type Result<T, E = SessionError> = std::result::Result<T, E>;
