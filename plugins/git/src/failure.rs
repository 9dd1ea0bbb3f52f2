//! How a git command fails: git's own exit statuses and message prefixes.

use std::fmt::Display;

/// Why a command stopped.
#[derive(Debug)]
pub enum Failure {
    /// Something in the repository or the arguments cannot be read:
    /// `fatal: …`, exit 128.
    Fatal(String),
    /// A bad command line: `error: …`, exit 129.
    Usage(String),
    /// A subcommand this read-only git does not have: exit 1.
    Refused(String),
}

impl Failure {
    pub fn fatal(message: impl Display) -> Self {
        Self::Fatal(message.to_string())
    }

    pub fn usage(message: impl Display) -> Self {
        Self::Usage(message.to_string())
    }

    /// Prints the failure on stderr and gives the exit status.
    pub fn report(self) -> i32 {
        match self {
            Self::Fatal(message) => {
                eprintln!("fatal: {message}");
                128
            }
            Self::Usage(message) => {
                eprintln!("error: {message}");
                129
            }
            Self::Refused(message) => {
                eprintln!("git: {message}");
                1
            }
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        Self::fatal(error)
    }
}

/// Turns any error of gitoxide into a fatal failure.
pub trait OrFatal<T> {
    fn or_fatal(self) -> Result<T, Failure>;
}

impl<T, E: Display> OrFatal<T> for Result<T, E> {
    fn or_fatal(self) -> Result<T, Failure> {
        self.map_err(Failure::fatal)
    }
}
