//! The command line, as clap parses it: the commands and their groups. Each
//! command's options are defined beside the command (`commands/`); the
//! options every command shares are in [`crate::args`].

use clap::{Args, Parser, Subcommand};

use crate::args::GlobalArgs;
use crate::commands::build::BuildArgs;
use crate::commands::call::CallArgs;
use crate::commands::check::CheckArgs;
use crate::commands::diff::DiffArgs;
use crate::commands::grants::{GrantsApproveArgs, GrantsListArgs, GrantsRevokeArgs};
use crate::commands::install::InstallArgs;
use crate::commands::list::ListArgs;
use crate::commands::mcp::McpArgs;
use crate::commands::new::NewArgs;
use crate::commands::packages::SkillsApproveArgs;
use crate::commands::run::{ResumeArgs, RunArgs};
use crate::commands::runs::{DeleteRunsArgs, ListRunsArgs, ShowRunArgs};
use crate::commands::sdk::{BindingsArgs, ComponentArgs};
use crate::commands::skills::{SkillsCheckArgs, SkillsListArgs};
use crate::commands::ui::UiArgs;
use crate::commands::worker::WorkerArgs;

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
    /// Inspect runs in the browser: the runs and their outcomes, a run's
    /// steps and parallel calls over time with verdicts, hooks, approvals
    /// and sub-agents' runs, a call's arguments, result, events and file
    /// diff; and approve or deny the calls a run waits on, which resumes it
    /// as `runs resume` does. Listens on loopback only, behind a token it
    /// prints with the address.
    Ui(UiArgs),
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
    /// Show the Python packages a skill's scripts import (its
    /// `requirements.txt`, and any named with --package), with the wheel and
    /// SHA-256 each resolves to; approve them, and fetch them into the
    /// package store its runs import from.
    Approve(SkillsApproveArgs),
}

/// What `cordon completions` prints for.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn every_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
