//! The options every command shares, and the groups of options several
//! commands take in (`#[command(flatten)]`): where plugins, skills and the run
//! store come from, how a run is set up and its sandbox. Each command's own
//! options live beside it, in `commands/`.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use cordon_session::plugin_path::{Folder, PLUGINS_ENV, PluginPath, Source};
use cordon_session::store::StoreLocation;

use crate::loading::LoadDisplay;
use crate::operator::Operator;

/// Options shared by every command.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Workspace root: bundles' directory grants resolve under it.
    #[arg(long, global = true, env = "CORDON_WORKSPACE", default_value = ".")]
    pub workspace: PathBuf,
    /// Directory for compiled components [default: $XDG_CACHE_HOME/cordon or ~/.cache/cordon].
    #[arg(long, global = true, env = "CORDON_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Compile every component on every start instead of caching.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// The operator config (trusted bundles, file rules, the instance pool)
    /// [default: ~/.config/cordon/config.toml, then .cordon/config.toml].
    #[arg(long, global = true, env = "CORDON_CONFIG")]
    pub config: Option<PathBuf>,
    /// The operator's approvals of bundles' grants [default: .cordon/grants.toml].
    #[arg(long, global = true, env = "CORDON_GRANTS")]
    pub grants: Option<PathBuf>,
    /// How many component instances may run at once; a call waits for a free
    /// one [default: 64].
    #[arg(long, global = true, env = "CORDON_MAX_INSTANCES", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_instances: Option<u32>,
    /// More diagnostics on stderr (-v, -vv, -vvv). CORDON_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl GlobalArgs {
    /// The host settings these flags make.
    pub(crate) fn settings(&self) -> cordon_session::HostSettings {
        cordon_session::HostSettings {
            workspace: self.workspace.clone(),
            cache_dir: self.cache_dir.clone(),
            no_cache: self.no_cache,
            config: self.config.clone(),
            grants: self.grants.clone(),
            max_instances: self.max_instances,
            progress: Some(cordon_session::settings::Watcher(Arc::new(
                LoadDisplay::new(self.verbose),
            ))),
        }
    }
}

/// Where skills come from besides the agent file's and the default places
/// (`.agents/skills` of the workspace, `~/.agents/skills`).
#[derive(Debug, Args, Default)]
pub(crate) struct SkillsArg {
    /// A skill folder, or a folder of skills, searched first (repeatable).
    #[arg(long = "skills", value_name = "DIR")]
    pub skills: Vec<PathBuf>,
}

/// How a run is set up; shared by `run` and `runs resume`.
#[derive(Debug, Args)]
pub(crate) struct AgentArgs {
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub strict: StrictArg,
    /// Agent file (name, instructions, model, tools, max-steps, permissions).
    /// Without one: every tool, 12 steps, and every call asks for approval.
    #[arg(long, env = "CORDON_AGENT")]
    pub agent: Option<PathBuf>,
    /// The model: `scripted:FILE`, `openai:MODEL` (key in OPENAI_API_KEY) or
    /// `anthropic:MODEL` (key in ANTHROPIC_API_KEY); overrides the agent file's.
    #[arg(long, env = "CORDON_MODEL")]
    pub model: Option<String>,
    /// The provider's base URL, such as `http://localhost:11434/v1` for Ollama;
    /// overrides the agent file's `base-url` and OPENAI_BASE_URL / ANTHROPIC_BASE_URL.
    #[arg(long, env = "CORDON_BASE_URL")]
    pub base_url: Option<String>,
    /// A permissions file (`default`, `allow`, `ask`, `deny`) that replaces the
    /// agent's `[permissions]`.
    #[arg(long, env = "CORDON_PERMISSIONS")]
    pub permissions: Option<PathBuf>,
    /// Print JSON lines (progress, then the outcome) instead of text; never prompts.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub skills: SkillsArg,
}

/// Which sandbox backend holds the agent's workspace, and how it writes.
#[derive(Debug, Default, Args)]
pub(crate) struct SandboxArgs {
    /// The sandbox backend bundle (`dir`, `memory`, ...) the built-in tools
    /// `read`, `write`, `edit`, `glob`, `grep` and `bash` reach; overrides the
    /// agent file's `sandbox`. Without one the agent has no workspace tools.
    #[arg(long, env = "CORDON_SANDBOX")]
    pub sandbox: Option<String>,
    /// Stage file changes and commit them with each step; the folder changes
    /// only after the commit. The default unless the agent file says
    /// `trusted = true`.
    #[arg(long, conflicts_with = "direct")]
    pub transactional: bool,
    /// Let the backend write the folder directly (only as its grant allows).
    #[arg(long)]
    pub direct: bool,
    /// Start a `memory` workspace empty instead of seeded from the workspace folder.
    #[arg(long)]
    pub no_seed: bool,
}

/// Where committed runs live.
#[derive(Debug, Args)]
pub(crate) struct StoreArg {
    /// The run store: a SQLite file, or a `postgres://user@host/db` URL that
    /// several Cordon processes share [default: .cordon/cordon.db of the
    /// workspace].
    #[arg(
        id = "store",
        long = "store",
        env = "CORDON_STORE",
        value_name = "PATH|URL"
    )]
    given: Option<PathBuf>,
}

impl StoreArg {
    /// The store named, else the one of the workspace `global` names.
    pub(crate) fn location(&self, global: &GlobalArgs) -> StoreLocation {
        match &self.given {
            Some(given) => StoreLocation::named(given),
            None => StoreLocation::File(cordon_session::store::default_path(&global.workspace)),
        }
    }
}

/// Where plugins come from.
#[derive(Debug, Args, Default)]
pub(crate) struct PluginsArg {
    /// A plugins folder, searched first (repeatable); over CORDON_PLUGINS (a
    /// `:`-separated list) and the config's `plugins` [default: ./plugins;
    /// then always .cordon/plugins and ~/.local/share/cordon/plugins].
    #[arg(id = "plugins", long = "plugins", value_name = "DIR")]
    given: Vec<PathBuf>,
    /// Folders a command's own arguments name, searched before the flags'.
    #[arg(skip)]
    arguments: Vec<PathBuf>,
}

impl PluginsArg {
    /// The folders the command's arguments and `--plugins` chose, else those
    /// of `CORDON_PLUGINS`.
    fn chosen(&self) -> Vec<Folder> {
        if self.arguments.is_empty() {
            return PluginPath::chosen(&self.given, std::env::var_os(PLUGINS_ENV));
        }
        self.arguments
            .iter()
            .map(|dir| Folder::new(dir, Source::Argument))
            .chain(self.given.iter().map(|dir| Folder::new(dir, Source::Flag)))
            .collect()
    }

    /// The search path: the chosen folders, else the config's, else
    /// `./plugins`; then the project's and the user's.
    pub(crate) fn path(&self, operator: &Operator) -> PluginPath {
        PluginPath::resolve(self.chosen(), operator.plugins.clone())
    }

    /// `dirs`, named as the command's arguments, searched before the
    /// `--plugins` folders.
    pub(crate) fn prepend(&mut self, dirs: Vec<PathBuf>) {
        self.arguments.splice(0..0, dirs);
    }

    /// Whether `--plugins` or `CORDON_PLUGINS` chose folders.
    pub(crate) fn is_given(&self) -> bool {
        !self.chosen().is_empty()
    }
}

/// What to do about a bundle that does not load.
#[derive(Debug, Args)]
pub(crate) struct StrictArg {
    /// Stop when any bundle does not load, instead of leaving it out with an
    /// error and serving the rest.
    #[arg(long)]
    pub strict: bool,
}
