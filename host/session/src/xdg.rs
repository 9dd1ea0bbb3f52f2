//! Cordon's folders in the user's home, as the XDG base directories name
//! them: the cache, the config, the data and the state folders, each `cordon/` under
//! `$XDG_*_HOME` when that is absolute, else under its usual place in `HOME`.

use std::path::PathBuf;

/// The user's base folders Cordon keeps a `cordon/` folder in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// `$XDG_CACHE_HOME`, or `~/.cache`.
    Cache,
    /// `$XDG_CONFIG_HOME`, or `~/.config`.
    Config,
    /// `$XDG_DATA_HOME`, or `~/.local/share`.
    Data,
    /// `$XDG_STATE_HOME`, or `~/.local/state`.
    State,
}

impl Base {
    fn variable(self) -> &'static str {
        match self {
            Self::Cache => "XDG_CACHE_HOME",
            Self::Config => "XDG_CONFIG_HOME",
            Self::Data => "XDG_DATA_HOME",
            Self::State => "XDG_STATE_HOME",
        }
    }

    fn in_home(self) -> &'static str {
        match self {
            Self::Cache => ".cache",
            Self::Config => ".config",
            Self::Data => ".local/share",
            Self::State => ".local/state",
        }
    }
}

/// Cordon's folder under `base`, when the environment names a home.
pub fn cordon_dir(base: Base) -> Option<PathBuf> {
    let root = std::env::var_os(base.variable())
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(base.in_home()))
        })?;
    Some(root.join("cordon"))
}

/// The variable that places Cordon's folder under `base`: `XDG_*_HOME`
/// when it is set and absolute, else `HOME`.
pub fn placed_by(base: Base) -> &'static str {
    match std::env::var_os(base.variable()) {
        Some(root) if std::path::Path::new(&root).is_absolute() => base.variable(),
        _ => "HOME",
    }
}
