//! Conversions between the WIT `workspace` types and the kit's.

use crate::exports::cordon::plugin::workspace as wit;
use cordon_sandbox_kit::{Error, shell, workspace};

/// A kit error as the WIT error variant.
pub(crate) fn error_to_wit(error: Error) -> wit::WorkspaceError {
    match error {
        Error::NotFound(message) => wit::WorkspaceError::NotFound(message),
        Error::Denied(message) => wit::WorkspaceError::Denied(message),
        Error::Invalid(message) => wit::WorkspaceError::Invalid(message),
        Error::Failed(message) => wit::WorkspaceError::Failed(message),
    }
}

/// A kit entry as the WIT record.
pub(crate) fn entry_to_wit(entry: workspace::Entry) -> wit::Entry {
    wit::Entry {
        path: entry.path,
        is_dir: entry.is_dir,
        size: entry.size,
    }
}

/// A WIT grep query as the kit's.
pub(crate) fn grep_query_from_wit(query: wit::GrepQuery) -> workspace::GrepQuery {
    workspace::GrepQuery {
        pattern: query.pattern,
        path: query.path,
        file_glob: query.file_glob,
        case_insensitive: query.case_insensitive,
        max_matches: query.max_matches,
    }
}

/// A kit grep result as the WIT record.
pub(crate) fn grep_result_to_wit(result: workspace::GrepResult) -> wit::GrepResult {
    wit::GrepResult {
        matches: result
            .matches
            .into_iter()
            .map(|found| wit::GrepMatch {
                path: found.path,
                line: found.line,
                text: found.text,
            })
            .collect(),
        truncated: result.truncated,
    }
}

/// A WIT command as the kit's.
pub(crate) fn command_from_wit(command: wit::Command) -> workspace::Command {
    workspace::Command {
        line: command.line,
        cwd: command.cwd,
        env: command.env,
        stdin: command.stdin,
        timeout_ms: command.timeout_ms,
    }
}

/// What a command line did, as the WIT record.
pub(crate) fn output_to_wit(output: shell::Output) -> wit::CommandResult {
    wit::CommandResult {
        exit_code: output.exit_code,
        stdout: output.stdout,
        stderr: output.stderr,
        stdout_truncated: output.stdout_truncated,
        stderr_truncated: output.stderr_truncated,
        stopped: output.stopped.map(|stopped| wit::Stopped {
            limit: match stopped.limit {
                shell::Limit::Time => wit::ShellLimit::Time,
                shell::Limit::Commands => wit::ShellLimit::Commands,
                shell::Limit::Nesting => wit::ShellLimit::Nesting,
            },
            detail: stopped.detail,
        }),
    }
}
