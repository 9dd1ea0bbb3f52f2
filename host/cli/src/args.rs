//! The command line, as clap parses it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::loading::LoadDisplay;
use crate::operator::Operator;
use clap::{Args, Parser, Subcommand};
use cordon_kernel::DEFAULT_THREAD;
use cordon_session::plugin_path::{Folder, PLUGINS_ENV, PluginPath, Source};
use cordon_session::store::StoreLocation;

/// Run agents whose tools run as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(
    name = "cordon",
    version,
    about = "Run AI agents whose tools, hooks and sandboxes are WebAssembly components: every call gated by the permission policy and hooks, run in its own sandbox with only the grants its bundle declares, and committed with its step. Build, check and call plugin bundles; serve their tools to MCP clients.",
    long_about = None
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

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

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run an agent on a prompt: model steps, gated tool calls, one commit per step.
    ///
    /// Exits 0 when the model gives its final answer, 1 when the run ends
    /// otherwise (step limit, model error, cancelled), 3 when it waits for
    /// approval (resume with `cordon runs resume`), 2 when it cannot start.
    Run(RunArgs),
    /// Serve the plugins' tools to MCP clients (Claude Code, Codex, Cursor,
    /// VS Code) over stdio, each call through the permission policy, hooks,
    /// sandbox and run store; every call is a committed step of one run.
    Mcp(McpArgs),
    /// Inspect and resume committed runs.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Drive runs others submitted (`cordon run --detach`, `runs resume
    /// --detach`) to a Postgres store, one at a time, each under a lease that
    /// the worker renews and every commit checks; any number of workers on
    /// any number of machines share the store.
    ///
    /// A run whose worker died is claimed again once its lease lapses, and
    /// goes on as a resumed run after a crash would. Exits 0 after Ctrl-C
    /// (once the run in hand settles) or, with --until-idle, when no run is
    /// left to claim.
    Worker(WorkerArgs),
    /// Inspect plugin bundles.
    #[command(subcommand)]
    Plugins(PluginsCommand),
    /// List and call tools.
    #[command(subcommand)]
    Tool(ToolCommand),
    /// Write a new bundle from a template: a manifest with a `[build]` table
    /// and a source file with one working tool (or hook).
    New(NewArgs),
    /// Build bundles from source with their `[build]` commands, then compile
    /// each component into the cache.
    ///
    /// Exits 0 when every bundle built and loads, 1 otherwise.
    Build(BuildArgs),
    /// Cordon's WIT and SDKs, for build commands of languages whose
    /// toolchains make core WebAssembly modules (C, Go).
    #[command(subcommand)]
    Sdk(SdkCommand),
    /// Check and list Agent Skills: folders holding a SKILL.md.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Show, approve and revoke the grants bundles ask for: a bundle loads
    /// only when the operator approved everything it asks, for its exact
    /// component.
    #[command(subcommand)]
    Grants(GrantsCommand),
    /// Print a completion script for SHELL (bash, zsh, fish, elvish,
    /// powershell), such as `cordon completions bash > ~/.local/share/bash-completion/completions/cordon`.
    Completions(CompletionsArgs),
}

/// What `cordon skills` does.
#[derive(Debug, Subcommand)]
pub(crate) enum SkillsCommand {
    /// Check skill folders (or folders of them) against the Agent Skills
    /// format, reporting every problem with its file, field and rule.
    ///
    /// Exits 0 when every skill is valid, 1 otherwise.
    Check(SkillsCheckArgs),
    /// The skills a run would offer, from every place skills are found, in
    /// precedence order, with those shadowed or invalid.
    List(SkillsListArgs),
}

/// What `cordon completions` prints for.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// What `cordon skills check` checks.
#[derive(Debug, Args)]
pub(crate) struct SkillsCheckArgs {
    /// Skill folders, or folders of skill folders.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What `cordon skills list` lists.
#[derive(Debug, Args)]
pub(crate) struct SkillsListArgs {
    #[command(flatten)]
    pub skills: SkillsArg,
    /// An agent file whose `skills` join the search.
    #[arg(long, env = "CORDON_AGENT")]
    pub agent: Option<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Where skills come from besides the agent file's and the default places
/// (`.agents/skills` of the workspace, `~/.agents/skills`).
#[derive(Debug, Args, Default)]
pub(crate) struct SkillsArg {
    /// A skill folder, or a folder of skills, searched first (repeatable).
    #[arg(long = "skills", value_name = "DIR")]
    pub skills: Vec<PathBuf>,
}

/// What `cordon grants` does.
#[derive(Debug, Subcommand)]
pub(crate) enum GrantsCommand {
    /// Every approval, and every bundle that asks for more than is approved.
    List(GrantsListArgs),
    /// Show what a bundle asks for beyond its approval, and approve it.
    Approve(GrantsApproveArgs),
    /// Withdraw a bundle's approval.
    Revoke(GrantsRevokeArgs),
}

/// What `cordon grants list` looks at.
#[derive(Debug, Args)]
pub(crate) struct GrantsListArgs {
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub skills: SkillsArg,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What `cordon grants approve` approves.
#[derive(Debug, Args)]
pub(crate) struct GrantsApproveArgs {
    /// The bundle: its name, or `SKILL/NAME` for a skill's tool bundle.
    pub bundle: String,
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub skills: SkillsArg,
    /// Grant only this of the origins the bundle asks for, such as
    /// `https://api.github.com` (repeatable); without it, every origin asked.
    #[arg(long = "origin", value_name = "ORIGIN")]
    pub origins: Vec<String>,
    /// Approve without asking (required when not on a terminal).
    #[arg(long)]
    pub yes: bool,
}

/// What `cordon grants revoke` withdraws.
#[derive(Debug, Args)]
pub(crate) struct GrantsRevokeArgs {
    /// The bundle, as approved.
    pub bundle: String,
}

/// What `cordon sdk` does.
#[derive(Debug, Subcommand)]
pub(crate) enum SdkCommand {
    /// Print the folders holding Cordon's WIT and SDKs, as `CORDON_WIT=...`
    /// and `CORDON_SDK=...` lines.
    Path,
    /// Write a world's bindings for a language into a folder.
    Bindings(BindingsArgs),
    /// Make a component of a core module built against a world's bindings,
    /// adapting its WASI preview 1 imports.
    Component(ComponentArgs),
}

/// What `cordon sdk bindings` writes.
#[derive(Debug, Args)]
pub(crate) struct BindingsArgs {
    /// The language: `c` or `go`.
    #[arg(value_enum)]
    pub lang: BindingsLanguage,
    /// The folder to write them to.
    pub out: PathBuf,
    /// The world the bindings are for.
    #[arg(long, default_value = "tool-plugin")]
    pub world: String,
}

/// Languages `cordon sdk bindings` writes bindings for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum BindingsLanguage {
    /// C: `WORLD.h`, `WORLD.c` and `WORLD_component_type.o`.
    C,
    /// Go: a `wit_component` module (`go.mod`, `wit_exports.go`, one package per interface).
    Go,
}

/// What `cordon sdk component` makes.
#[derive(Debug, Args)]
pub(crate) struct ComponentArgs {
    /// The core module, linked with the bindings' component type object.
    pub module: PathBuf,
    /// The component to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Embed this world's component type first, for a module whose toolchain
    /// did not link the bindings' (Go).
    #[arg(long)]
    pub world: Option<String>,
}

/// What `cordon new` writes.
#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// What the bundle provides.
    #[arg(value_enum)]
    pub kind: NewKind,
    /// The bundle's name, which also prefixes its tools' names.
    pub name: String,
    /// The folder to write [default: NAME].
    pub dir: Option<PathBuf>,
    /// The language of the source.
    #[arg(long, value_enum, default_value = "rust")]
    pub lang: Language,
}

/// The kinds of bundle `cordon new` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum NewKind {
    /// A tool bundle.
    Tool,
    /// A hook bundle (Rust).
    Hook,
    /// A sandbox backend (Rust).
    Sandbox,
}

/// The languages bundles are written in.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Language {
    /// Rust, with the `cordon-sdk` crate.
    Rust,
    /// Python, with componentize-py and the `cordon_sdk` package.
    Python,
    /// JavaScript, with componentize-js and the `cordon-sdk` module.
    Js,
    /// C, with clang, wasi-libc and bindings Cordon generates.
    C,
    /// Go, with Go 1.24 or newer and bindings Cordon generates.
    Go,
}

/// What `cordon build` builds.
#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// Bundle folders, or folders of bundle folders.
    #[arg(default_value = ".")]
    pub dirs: Vec<PathBuf>,
    /// Do not compile the built components into the cache.
    #[arg(long)]
    pub no_compile: bool,
    /// Approve what each bundle built asks for, for the component just built
    /// and its manifest, as `cordon grants approve NAME --yes` would: the
    /// author's own bundle, callable at once. Prints what is approved and
    /// what changed since the last approval.
    #[arg(long)]
    pub approve: bool,
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

/// How `cordon mcp` serves.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub strict: StrictArg,
    /// Agent file whose `tools`, `[permissions]` and `[state]` the served
    /// calls obey. Without one: every tool, and every call asks for approval
    /// (through the client's elicitation, or denied where it has none).
    #[arg(long, env = "CORDON_AGENT")]
    pub agent: Option<PathBuf>,
    /// A permissions file (`default`, `allow`, `ask`, `deny`) that replaces the
    /// agent's `[permissions]`.
    #[arg(long, env = "CORDON_PERMISSIONS")]
    pub permissions: Option<PathBuf>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub skills: SkillsArg,
    #[command(flatten)]
    pub store: StoreArg,
    /// Serve streamable HTTP at `http://ADDR/mcp` instead of stdio, such as
    /// `127.0.0.1:8750` (port 0 picks one and prints it).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Let `--http` bind an address other than loopback: anyone who reaches
    /// the port can then call the tools.
    #[arg(long, requires = "http")]
    pub allow_non_loopback: bool,
    /// How far each call's step commit reaches before the client gets its
    /// answer.
    #[arg(long, env = "CORDON_DURABILITY", value_enum, default_value_t = CommitDurability::Disk)]
    pub durability: CommitDurability,
}

/// How far a served call's step commit reaches before it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CommitDurability {
    /// On the disk: a power loss keeps every answered call's record.
    Disk,
    /// Out of the process: every reader sees it and a crash of Cordon keeps
    /// it; it reaches the disk soon after (within 10 ms for a SQLite store,
    /// within three `wal_writer_delay`s for Postgres), so a power loss may
    /// lose the records of the calls answered last (never part of one). A
    /// call that changes workspace files commits on disk all the same.
    Process,
}

impl From<CommitDurability> for cordon_kernel::Durability {
    fn from(durability: CommitDurability) -> Self {
        match durability {
            CommitDurability::Disk => Self::Disk,
            CommitDurability::Process => Self::Process,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// What to ask the agent.
    pub prompt: String,
    /// Id for the new run [default: generated from the time].
    #[arg(long)]
    pub run_id: Option<String>,
    /// The thread the run joins: its runs share thread-scoped state.
    #[arg(long, env = "CORDON_THREAD", default_value = DEFAULT_THREAD)]
    pub thread: String,
    /// Go on with an earlier run's conversation: the newest run, or
    /// `--continue=RUN`. The new run joins that run's thread, and the model
    /// sees what was said and done there before the prompt.
    #[arg(
        long = "continue",
        value_name = "RUN",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "last"
    )]
    pub continues: Option<String>,
    /// Commit the prompt and queue the run for a worker (`cordon worker`)
    /// instead of driving it here; needs a Postgres store.
    #[arg(long)]
    pub detach: bool,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub store: StoreArg,
}

/// How `cordon worker` claims runs.
#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub strict: StrictArg,
    /// The name this worker claims runs under, as the queue records it
    /// [default: HOST:PID].
    #[arg(long)]
    pub name: Option<String>,
    /// How long a claim holds without renewal, in milliseconds; the worker
    /// renews it every third of that. A dead worker's run is claimed again
    /// once this passes.
    #[arg(long, value_name = "MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(100..))]
    pub lease_ms: u64,
    /// How long to wait before looking again when no run is runnable, in
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub poll_ms: u64,
    /// Exit when no run is left to claim, instead of waiting for more.
    #[arg(long)]
    pub until_idle: bool,
    /// Print JSON lines (each claim, the runs' progress and outcomes) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Subcommand)]
pub(crate) enum RunsCommand {
    /// Every run in the store, newest first: when it was made, its thread,
    /// agent, steps and outcome.
    List(ListRunsArgs),
    /// One run's committed history: messages, tool calls, verdicts, state, commits.
    Show(ShowRunArgs),
    /// The file changes a run committed, as a unified diff.
    ///
    /// Shows each changed path from before the run (or the step) to after it.
    Diff(DiffArgs),
    /// Continue a run from its last commit, deciding the calls it waits on.
    ///
    /// The run remembers its agent file, model, permissions file and plugins
    /// folder; flags given here override them. Exit codes as for `cordon run`.
    Resume(Box<ResumeArgs>),
    /// Forget runs whole: their commits, state and file changes. The
    /// thread's state stays.
    Delete(DeleteRunsArgs),
}

#[derive(Debug, Args)]
pub(crate) struct DeleteRunsArgs {
    /// The run ids (`last` for the newest run).
    #[arg(required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Args)]
pub(crate) struct ListRunsArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ShowRunArgs {
    /// The run id (`last` for the newest run).
    pub run: String,
    #[command(flatten)]
    pub store: StoreArg,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The run id (`last` for the newest run).
    pub run: String,
    /// Only the changes of this model step, as progress and `runs show`
    /// number them.
    #[arg(long)]
    pub step: Option<u32>,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Args)]
pub(crate) struct ResumeArgs {
    /// The run id (`last` for the newest run).
    pub run: String,
    /// Approve a pending call by id (repeatable).
    #[arg(long = "approve", value_name = "CALL")]
    pub approve: Vec<String>,
    /// Deny a pending call by id (repeatable).
    #[arg(long = "deny", value_name = "CALL")]
    pub deny: Vec<String>,
    /// Approve every pending call not named by --deny.
    #[arg(long, conflicts_with = "deny_all")]
    pub approve_all: bool,
    /// Deny every pending call not named by --approve.
    #[arg(long)]
    pub deny_all: bool,
    /// Why the denied calls are denied; the model reads it.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Queue the run, with these decisions, for a worker (`cordon worker`)
    /// instead of driving it here; needs a Postgres store, and a decision
    /// for every call the run waits on. A run that was queued before goes
    /// back to the workers without this flag.
    #[arg(long)]
    pub detach: bool,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PluginsCommand {
    /// Validate every bundle on the plugins search path and show its tools,
    /// grants and limits, and what is shadowed.
    ///
    /// Exits 0 when every bundle is valid, 1 otherwise.
    Check(CheckArgs),
    /// Copy bundles into the user's plugins folder, where every command
    /// finds them (`~/.local/share/cordon/plugins`), or the project's.
    ///
    /// Each bundle is checked first and copied as its manifest and component;
    /// one installed under the same name is replaced. Exits 1 when a bundle
    /// was not whole and was left out.
    Install(InstallArgs),
}

#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// Bundle folders, or folders of bundle folders.
    #[arg(required_unless_present = "bundled")]
    pub dirs: Vec<PathBuf>,
    /// Install the bundled plugins (jq, files, notes, http, redactor, guard,
    /// budget, dir, memory, python) from the source tree this cordon was
    /// built from, once built there.
    #[arg(long)]
    pub bundled: bool,
    /// Install into the project's `.cordon/plugins` instead.
    #[arg(long)]
    pub project: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Plugins folders, searched first, as `--plugins DIR` each.
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub plugins: PluginsArg,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolCommand {
    /// List the tools of every bundle.
    List(ListArgs),
    /// Call one tool and print its output.
    ///
    /// Exits 0 on success and 1 on a tool error, printing its kind: invalid-input,
    /// denied, failed, timeout, limit, crashed or not-found.
    Call(CallArgs),
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

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub strict: StrictArg,
    /// Also list the tools of the MCP servers this agent file lists,
    /// admitted and connected as a run would.
    #[arg(long, value_name = "FILE")]
    pub agent: Option<PathBuf>,
    /// Print the full tool specs as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool's name, for example `jq.query`.
    pub tool: String,
    #[command(flatten)]
    pub plugins: PluginsArg,
    #[command(flatten)]
    pub strict: StrictArg,
    /// Arguments as a JSON object; `@FILE` reads them from a file, `-` from stdin.
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// The thread whose state the tool reads and writes.
    #[arg(long, env = "CORDON_THREAD", default_value = DEFAULT_THREAD)]
    pub thread: String,
    #[command(flatten)]
    pub store: StoreArg,
    /// Print one JSON document with the output or error and every event.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn every_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
