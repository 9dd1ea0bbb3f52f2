//! `cordon`: run agents whose tools are sandboxed WebAssembly components;
//! build, check, list, call and serve plugin bundles, each call in its own
//! sandbox.
//!
//! Exit codes: 0 success; 1 a tool call failed (its kind is printed) or a run
//! ended without a final answer; 2 the command could not run (bad usage, an
//! unreadable store, a bundle that does not load under `--strict`); 3 a run
//! waits for approval.

mod approve;
mod args;
mod cli;
mod commands;
mod embedded;
mod events;
mod loading;
mod present;
mod progress;
mod table;
mod telemetry;

use std::process::ExitCode;

use cordon_session::{context, operator, skillset, store};

use clap::Parser;

use crate::cli::{
    Cli, Command, GrantsCommand, PluginsCommand, RunsCommand, SdkCommand, SkillsCommand,
    ToolCommand,
};

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let cli = Cli::parse();
    let telemetry = match telemetry::init(cli.global.verbose) {
        Ok(telemetry) => telemetry,
        Err(error) => {
            eprintln!("cordon: {error}");
            return ExitCode::from(2);
        }
    };
    let runtime = match runtime_for(&cli.command).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cordon: cannot start the async runtime: {error}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => commands::run::run(&cli.global, args).await,
            Command::Mcp(args) => commands::mcp::run(&cli.global, args).await,
            Command::Worker(args) => commands::worker::run(&cli.global, args).await,
            Command::Ui(args) => commands::ui::run(&cli.global, args).await,
            Command::Runs(RunsCommand::Resume(args)) => {
                commands::run::resume(&cli.global, *args).await
            }
            Command::Runs(RunsCommand::List(args)) => commands::runs::list(&cli.global, args).await,
            Command::Runs(RunsCommand::Show(args)) => commands::runs::show(&cli.global, args).await,
            Command::Runs(RunsCommand::Delete(args)) => {
                commands::runs::delete(&cli.global, args).await
            }
            Command::Runs(RunsCommand::Diff(args)) => commands::diff::diff(&cli.global, args).await,
            Command::Plugins(PluginsCommand::Check(args)) => {
                commands::check::run(&cli.global, args).await
            }
            Command::Plugins(PluginsCommand::Install(args)) => commands::install::run(args),
            Command::Tool(ToolCommand::List(args)) => commands::list::run(&cli.global, args).await,
            Command::Tool(ToolCommand::Call(args)) => commands::call::run(&cli.global, args).await,
            Command::New(args) => commands::new::run(&cli.global, args),
            Command::Build(args) => commands::build::run(&cli.global, args).await,
            Command::Sdk(SdkCommand::Path) => commands::sdk::path(&cli.global),
            Command::Sdk(SdkCommand::Bindings(args)) => commands::sdk::bindings(&cli.global, args),
            Command::Sdk(SdkCommand::Component(args)) => {
                commands::sdk::component(&cli.global, args)
            }
            Command::Skills(SkillsCommand::Check(args)) => commands::skills::check(args),
            Command::Skills(SkillsCommand::List(args)) => commands::skills::list(&cli.global, args),
            Command::Skills(SkillsCommand::Approve(args)) => {
                commands::packages::approve(&cli.global, args).await
            }
            Command::Grants(GrantsCommand::List(args)) => commands::grants::list(&cli.global, args),
            Command::Grants(GrantsCommand::Approve(args)) => {
                commands::grants::approve(&cli.global, args)
            }
            Command::Grants(GrantsCommand::Revoke(args)) => {
                commands::grants::revoke(&cli.global, args)
            }
            Command::Completions(args) => Ok(completions(&args)),
        }
    });
    // A sandbox backend's thread stuck in a system call (a FIFO in the
    // workspace) was already abandoned at its call's deadline; do not wait for
    // it on the way out.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    telemetry.shutdown();
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("cordon: {}", said(&error));
            ExitCode::from(2)
        }
    }
}

/// `error` and its causes on one line, each cause once: a message that
/// already says its cause (`cannot read x: No such file`) is not followed by
/// it again.
fn said(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// The async runtime `command` runs on. The MCP server over stdio serves
/// one client and answers it from one thread: on a single-threaded runtime a
/// request and its call never wake another worker or move between cores,
/// which is most of what a trivial call costs above the protocol's own round
/// trip. A component still yields at every epoch tick, so a client's
/// cancellation reaches a call while it runs and calls made together share
/// the thread, and a sandbox backend works on a thread of its own. Everything
/// else, the MCP server over HTTP with its many clients among it, runs on
/// all cores.
fn runtime_for(command: &Command) -> tokio::runtime::Builder {
    match command {
        // One client over stdio is answered soonest from one thread; HTTP
        // serves many at once, on every core.
        Command::Mcp(args) if args.http.is_none() => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
}

/// Print the completion script for `args.shell`.
fn completions(args: &cli::CompletionsArgs) -> ExitCode {
    use clap::CommandFactory;
    let mut command = cli::Cli::command();
    clap_complete::generate(args.shell, &mut command, "cordon", &mut std::io::stdout());
    ExitCode::SUCCESS
}

/// Writing to a pipe whose reader has gone (`cordon runs list | head`) ends
/// the process at once and quietly, as it does every other Unix tool, rather
/// than failing each later print with a panic. Only a pipe on standard output
/// gets that: anywhere else a stray write to a closed pipe (a build command's
/// reader gone) stays an ignored error, as Rust sets it up.
fn quiet_on_closed_pipe() {
    // SAFETY: `fstat` fills a zeroed `stat` for an open or closed descriptor
    // and touches nothing else; restoring a signal's default disposition at
    // start-up, before any other thread exists, races with nothing; the
    // host's own sockets never raise SIGPIPE (they send with MSG_NOSIGNAL).
    unsafe {
        let mut status: libc::stat = std::mem::zeroed();
        let piped = libc::fstat(libc::STDOUT_FILENO, &mut status) == 0
            && (status.st_mode & libc::S_IFMT) == libc::S_IFIFO;
        if piped {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_said_is_not_said_again() {
        let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let error = anyhow::Error::new(missing)
            .context("x.toml: cannot read model script: No such file")
            .context("agent.toml: field `model` = \"scripted:x.toml\"");
        assert_eq!(
            said(&error),
            "agent.toml: field `model` = \"scripted:x.toml\": x.toml: cannot read model script: No such file"
        );
        let plain = anyhow::anyhow!("refused").context("loading");
        assert_eq!(said(&plain), "loading: refused");
    }
}
