//! What the guard keeps out of every component's reach whatever it is
//! granted: reserved files and folders, and read-only ones, each with what
//! it is, for the refusal.

use std::fmt;
use std::path::PathBuf;

/// A file or folder no component reaches, with everything beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reserved {
    /// The file or folder.
    pub path: PathBuf,
    /// What it holds, for the refusal.
    pub holds: Holds,
}

impl Reserved {
    /// `path`, which holds `holds`.
    pub fn new(path: impl Into<PathBuf>, holds: Holds) -> Self {
        Self {
            path: path.into(),
            holds,
        }
    }
}

/// What a reserved file or folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Holds {
    /// The workspace root's `.cordon`: the run store and the project's
    /// operator files.
    CordonFolder,
    /// The run store.
    RunStore,
    /// The operator's config or approvals.
    OperatorFiles,
    /// The compile cache and its key.
    CompileCache,
}

impl fmt::Display for Holds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CordonFolder => "Cordon's run store and the project's operator files",
            Self::RunStore => "Cordon's run store",
            Self::OperatorFiles => "the operator's Cordon config or approvals",
            Self::CompileCache => "Cordon's compiled components",
        })
    }
}

/// What a read-only folder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnly {
    /// A folder Cordon loads plugin bundles from.
    Plugins,
    /// A skill's folder.
    Skill,
    /// The Python packages approved for a skill.
    Packages,
}

impl fmt::Display for ReadOnly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Plugins => "a plugins folder Cordon loads bundles from",
            Self::Skill => "a skill's folder",
            Self::Packages => "a skill's package folder",
        })
    }
}
