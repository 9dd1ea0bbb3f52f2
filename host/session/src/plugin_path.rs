//! Where bundles are found: the search path every command loads plugins
//! along, in precedence order.
//!
//! 1. The chosen folders, from the first place that names any:
//!    `--plugins DIR` (repeatable), the `CORDON_PLUGINS` list
//!    (`:`-separated), the path a resumed run recorded, the `plugins` list of
//!    the project's config, that of the user's config; else `./plugins`.
//! 2. The project's folder, `.cordon/plugins`.
//! 3. The user's folder, `$XDG_DATA_HOME/cordon/plugins` (or
//!    `~/.local/share/cordon/plugins`), where `cordon plugins install` puts
//!    bundles.
//!
//! A bundle found in an earlier folder shadows one of the same name in a
//! later folder, with a warning. A chosen folder that does not exist is an
//! error naming where it was chosen and how to choose another; the default
//! and the project's and user's folders are searched when they exist. A
//! resumed run searches exactly the folders it recorded.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Result, SessionError};
use crate::xdg::{self, Base};

/// The environment variable listing plugins folders.
pub const PLUGINS_ENV: &str = "CORDON_PLUGINS";

/// The folder searched when nothing chooses one.
const DEFAULT_FOLDER: &str = "plugins";

/// The project's own plugins folder.
pub const PROJECT_FOLDER: &str = ".cordon/plugins";

/// Why a folder is on the search path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A folder named as a command's argument (`cordon plugins check DIR`).
    Argument,
    /// `--plugins DIR`.
    Flag,
    /// An entry of `CORDON_PLUGINS`.
    Env,
    /// The path the run being resumed recorded.
    Recorded,
    /// The `plugins` list of this config file.
    Config(PathBuf),
    /// `./plugins`, as nothing chose a folder.
    Default,
    /// The project's `.cordon/plugins`.
    Project,
    /// The user's plugins folder.
    User,
}

impl Source {
    /// Whether the folder must exist: one somebody chose does.
    fn chosen(&self) -> bool {
        matches!(
            self,
            Self::Argument | Self::Flag | Self::Env | Self::Recorded | Self::Config(_)
        )
    }

    /// What to do instead when a chosen folder is missing.
    fn remedy(&self) -> String {
        match self {
            Self::Argument => "name another folder".to_owned(),
            Self::Flag => "pass another --plugins DIR".to_owned(),
            Self::Env => format!("fix {PLUGINS_ENV}"),
            Self::Recorded => {
                format!("pass --plugins DIR or set {PLUGINS_ENV} to where its plugins are now")
            }
            Self::Config(file) => format!("fix `plugins` in {}", file.display()),
            Self::Default | Self::Project | Self::User => String::new(),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Argument => f.write_str("argument"),
            Self::Flag => f.write_str("--plugins"),
            Self::Env => f.write_str(PLUGINS_ENV),
            Self::Recorded => f.write_str("recorded by the run"),
            Self::Config(file) => write!(f, "`plugins` in {}", file.display()),
            Self::Default => f.write_str("default"),
            Self::Project => f.write_str("project"),
            Self::User => f.write_str("user"),
        }
    }
}

/// One folder of the search path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    /// The folder, absolute.
    pub path: PathBuf,
    /// Why it is searched.
    pub source: Source,
}

impl Folder {
    /// `path` made absolute, searched for `source`.
    pub fn new(path: &Path, source: Source) -> Self {
        Self {
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_owned()),
            source,
        }
    }
}

/// The folders bundles are loaded from, first searched first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginPath {
    folders: Vec<Folder>,
}

impl PluginPath {
    /// The search path from `chosen` (the folders a flag or the
    /// environment named), else `configured` (the highest-precedence config
    /// file's), else `./plugins`; then the project's and the user's folders.
    pub fn resolve(chosen: Vec<Folder>, configured: Vec<Folder>) -> Self {
        let mut folders = if !chosen.is_empty() {
            chosen
        } else if !configured.is_empty() {
            configured
        } else {
            vec![Folder::new(Path::new(DEFAULT_FOLDER), Source::Default)]
        };
        folders.push(Folder::new(Path::new(PROJECT_FOLDER), Source::Project));
        if let Some(user) = user_folder() {
            folders.push(Folder::new(&user, Source::User));
        }
        let mut path = Self {
            folders: Vec::new(),
        };
        for folder in folders {
            path.push(folder);
        }
        path
    }

    /// Exactly `dirs`, each required, as an embedder or a resumed run names
    /// them.
    pub fn exactly(dirs: impl IntoIterator<Item = PathBuf>, source: &Source) -> Self {
        let mut path = Self {
            folders: Vec::new(),
        };
        for dir in dirs {
            path.push(Folder::new(&dir, source.clone()));
        }
        path
    }

    /// The folders chosen on the command line: the `--plugins` flags, else
    /// the `CORDON_PLUGINS` list `env`.
    pub fn chosen(flags: &[PathBuf], env: Option<OsString>) -> Vec<Folder> {
        if !flags.is_empty() {
            return flags
                .iter()
                .map(|dir| Folder::new(dir, Source::Flag))
                .collect();
        }
        env.map(|list| {
            std::env::split_paths(&list)
                .filter(|dir| !dir.as_os_str().is_empty())
                .map(|dir| Folder::new(&dir, Source::Env))
                .collect()
        })
        .unwrap_or_default()
    }

    fn push(&mut self, folder: Folder) {
        if !self
            .folders
            .iter()
            .any(|known| same_folder(&known.path, &folder.path))
        {
            self.folders.push(folder);
        }
    }

    /// Every folder, first searched first, present or not.
    pub fn folders(&self) -> &[Folder] {
        &self.folders
    }

    /// The folders that exist, first searched first. A chosen folder that
    /// does not exist is an error saying where it was chosen; so is a path
    /// on which no folder exists, naming every place looked.
    pub fn present(&self) -> Result<Vec<&Folder>> {
        for folder in &self.folders {
            if folder.source.chosen() && !folder.path.is_dir() {
                return Err(SessionError::NoPluginsFolder {
                    folder: folder.path.clone(),
                    chosen_by: folder.source.to_string(),
                    remedy: folder.source.remedy(),
                });
            }
        }
        let present: Vec<&Folder> = self
            .folders
            .iter()
            .filter(|folder| folder.path.is_dir())
            .collect();
        if present.is_empty() {
            return Err(SessionError::NoPlugins {
                looked: self
                    .folders
                    .iter()
                    .map(|folder| format!("{} ({})", folder.path.display(), folder.source))
                    .collect(),
            });
        }
        Ok(present)
    }

    /// The path as a run's header records it: the folders that exist, as a
    /// JSON list.
    pub fn record(&self) -> String {
        let present: Vec<&Path> = self
            .folders
            .iter()
            .filter(|folder| folder.path.is_dir())
            .map(|folder| folder.path.as_path())
            .collect();
        serde_json::to_string(&present).unwrap_or_default()
    }

    /// The path a run's header recorded: a JSON list, or the one folder
    /// runs recorded before there was a search path.
    pub fn recorded(text: &str) -> Self {
        let dirs: Vec<PathBuf> =
            serde_json::from_str(text).unwrap_or_else(|_| vec![PathBuf::from(text)]);
        Self::exactly(dirs, &Source::Recorded)
    }
}

impl Default for PluginPath {
    /// The path nothing chose: `./plugins`, the project's, the user's.
    fn default() -> Self {
        Self::resolve(Vec::new(), Vec::new())
    }
}

/// Whether `a` and `b` are one folder.
fn same_folder(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}

/// The user's plugins folder: `$XDG_DATA_HOME/cordon/plugins`, or
/// `~/.local/share/cordon/plugins`.
pub fn user_folder() -> Option<PathBuf> {
    Some(xdg::cordon_dir(Base::Data)?.join("plugins"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_come_before_the_environment_which_is_then_ignored() {
        let chosen = PluginPath::chosen(
            &[PathBuf::from("/a"), PathBuf::from("/b")],
            Some(OsString::from("/c:/d")),
        );
        let paths: Vec<&Path> = chosen.iter().map(|folder| folder.path.as_path()).collect();
        assert_eq!(paths, [Path::new("/a"), Path::new("/b")]);
        assert!(chosen.iter().all(|folder| folder.source == Source::Flag));
    }

    #[test]
    fn the_environment_is_a_colon_separated_list() {
        let chosen = PluginPath::chosen(&[], Some(OsString::from("/c::/d")));
        let paths: Vec<&Path> = chosen.iter().map(|folder| folder.path.as_path()).collect();
        assert_eq!(paths, [Path::new("/c"), Path::new("/d")]);
        assert!(chosen.iter().all(|folder| folder.source == Source::Env));
    }

    #[test]
    fn chosen_folders_replace_the_configured_and_the_default_ones() {
        let chosen = vec![Folder::new(Path::new("/a"), Source::Flag)];
        let configured = vec![Folder::new(
            Path::new("/configured"),
            Source::Config(PathBuf::from("/c.toml")),
        )];
        let path = PluginPath::resolve(chosen, configured.clone());
        let sources: Vec<&Source> = path.folders().iter().map(|folder| &folder.source).collect();
        assert_eq!(sources[0], &Source::Flag);
        assert_eq!(sources[1], &Source::Project);
        assert!(!sources.contains(&&Source::Default));
        assert!(
            !sources
                .iter()
                .any(|source| matches!(source, Source::Config(_)))
        );
        let configured_only = PluginPath::resolve(Vec::new(), configured);
        assert!(matches!(
            configured_only.folders()[0].source,
            Source::Config(_)
        ));
        let neither = PluginPath::resolve(Vec::new(), Vec::new());
        assert_eq!(neither.folders()[0].source, Source::Default);
    }

    #[test]
    fn a_missing_chosen_folder_is_named_with_its_remedy() {
        let path = PluginPath::exactly([PathBuf::from("/no/such/plugins")], &Source::Env);
        let error = path.present().unwrap_err().to_string();
        assert!(error.contains("/no/such/plugins"), "{error}");
        assert!(error.contains("fix CORDON_PLUGINS"), "{error}");
    }

    #[test]
    fn a_path_with_no_folder_names_every_place_looked() {
        let path = PluginPath {
            folders: vec![
                Folder::new(Path::new("/no/default"), Source::Default),
                Folder::new(Path::new("/no/user"), Source::User),
            ],
        };
        let error = path.present().unwrap_err().to_string();
        assert!(error.contains("/no/default (default)"), "{error}");
        assert!(error.contains("/no/user (user)"), "{error}");
    }

    #[test]
    fn a_recorded_path_reads_old_single_folders_and_new_lists() {
        let old = PluginPath::recorded("/old/plugins");
        assert_eq!(old.folders()[0].path, Path::new("/old/plugins"));
        let dir = tempfile::tempdir().unwrap();
        let new = PluginPath::exactly([dir.path().to_owned()], &Source::Flag);
        let again = PluginPath::recorded(&new.record());
        assert_eq!(again.folders()[0].path, dir.path());
        assert_eq!(again.folders()[0].source, Source::Recorded);
    }

    #[test]
    fn one_folder_named_twice_is_searched_once() {
        let dir = tempfile::tempdir().unwrap();
        let path =
            PluginPath::exactly([dir.path().to_owned(), dir.path().join(".")], &Source::Flag);
        assert_eq!(path.folders().len(), 1);
    }
}
