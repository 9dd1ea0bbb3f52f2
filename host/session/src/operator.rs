//! The operator's configuration: what every run and every single tool call
//! obeys whatever an agent file says. It lives outside any agent's reach: in
//! the user's config folder, and in the project's `.cordon/` beside the run
//! store, which no component can read or write; a file `--config` or
//! `--grants` names elsewhere is put out of reach too (see
//! `context::operator_reach`).
//!
//! Beside it, the operator's approvals of the grants bundles ask for
//! (`.cordon/grants.toml`, written by `cordon grants approve`).
//!
//! ```toml
//! trusted = ["weather", "maps@sha256:..."]  # bundles whose tool annotations
//!                                          # rules and resume believe, besides
//!                                          # the bundled ones: a name, for the
//!                                          # component the operator approved
//!                                          # under it; a pin, for that digest
//! max-instances = 64                       # the instance pool
//! [files]                                  # file rules for every run
//! deny = ["**/.env", "**/*.pem"]
//! read-only = ["Cargo.lock"]
//! [network]                                # see `network`
//! allow-ranges = ["127.0.0.0/8"]
//! [secrets.weather]
//! api-key = { env = "WEATHER_KEY" }
//! [mcp.docs]                               # see `mcp_servers`
//! origins = ["https://mcp.example.com"]
//! ```
//!
//! The same files hold the user's defaults, which flags and environment
//! variables override: `plugins = ["DIR", ...]` (see `plugin_path`; relative
//! folders are the project's for `.cordon/config.toml`, else the config
//! file's folder's), and the `[defaults]` table (see `defaults`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cordon_kernel::FileRules;
use cordon_wasm::{Approvals, GRANTS_FILE, Trust};
use serde::Deserialize;

use cordon_mcp_client::ServerApproval;

use crate::defaults::{Defaults, DefaultsTable};
use crate::error::{Result, SessionError};
use crate::mcp_servers::ApprovalTable;
use crate::network::{NetworkConfig, NetworkTable, SecretSource};
use crate::plugin_path::{Folder, Source};
use crate::settings::HostSettings;
use crate::xdg::{self, Base};

/// The file an operator config is read from in the project.
pub const PROJECT_CONFIG: &str = ".cordon/config.toml";

/// The operator's settings, from every config file read.
pub struct Operator {
    /// Whose tool annotations are believed.
    pub trust: Trust,
    /// File rules every run obeys, on top of the agent's.
    pub files: FileRules,
    /// The instance pool's size, when set.
    pub max_instances: Option<u32>,
    /// What the operator approved of bundles' grants.
    pub approvals: Approvals,
    /// Where the approvals are kept.
    pub grants_file: PathBuf,
    /// Every config file read.
    pub config_files: Vec<PathBuf>,
    /// The user's config folder, where the user's config file is or would be.
    pub user_folder: Option<PathBuf>,
    /// How the host connects for every bundle, and the secrets' values.
    pub network: NetworkConfig,
    /// The MCP servers agents may list, by name.
    pub mcp: BTreeMap<String, ServerApproval>,
    /// The plugins folders of the last config file that lists any.
    pub plugins: Vec<Folder>,
    /// The defaults of runs, each from the last config file that sets it.
    pub defaults: Defaults,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ConfigFile {
    #[serde(default)]
    trusted: Vec<String>,
    max_instances: Option<u32>,
    #[serde(default)]
    files: FilesTable,
    #[serde(default)]
    network: NetworkTable,
    #[serde(default)]
    secrets: BTreeMap<String, BTreeMap<String, SecretSource>>,
    #[serde(default)]
    mcp: BTreeMap<String, ApprovalTable>,
    plugins: Option<Vec<PathBuf>>,
    #[serde(default)]
    defaults: DefaultsTable,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FilesTable {
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    read_only: Vec<String>,
}

impl Operator {
    /// The settings `--config` names, or else those of the user's and the
    /// project's config files, where they exist, the project's last; then
    /// `--max-instances`.
    pub fn load(settings: &HostSettings) -> Result<Self> {
        let grants_file = settings
            .grants
            .clone()
            .unwrap_or_else(|| PathBuf::from(GRANTS_FILE));
        let mut operator = Self {
            trust: Trust::bundled(),
            files: FileRules::new(),
            max_instances: None,
            approvals: load_approvals(&grants_file)?,
            grants_file,
            config_files: Vec::new(),
            user_folder: xdg::cordon_dir(Base::Config),
            network: NetworkConfig::default(),
            mcp: BTreeMap::new(),
            plugins: Vec::new(),
            defaults: Defaults::default(),
        };
        let files: Vec<PathBuf> = match &settings.config {
            Some(file) => {
                if !file.is_file() {
                    return Err(SessionError::NoSuchFile {
                        flag: "--config",
                        file: file.clone(),
                    });
                }
                vec![file.clone()]
            }
            None => [user_config(), Some(PathBuf::from(PROJECT_CONFIG))]
                .into_iter()
                .flatten()
                .filter(|file| file.is_file())
                .collect(),
        };
        for file in &files {
            operator.read(file)?;
        }
        operator.config_files = files;
        if let Some(max) = settings.max_instances {
            operator.max_instances = Some(max);
        }
        Ok(operator)
    }

    fn read(&mut self, file: &Path) -> Result<()> {
        let shown = file.display().to_string();
        let invalid = |problem: String| SessionError::Invalid {
            file: shown.clone(),
            problem,
        };
        let text = std::fs::read_to_string(file).map_err(|error| SessionError::Unreadable {
            what: "config",
            file: file.to_owned(),
            error,
        })?;
        let config: ConfigFile = toml::from_str(&text)
            .map_err(|error| invalid(error.to_string().trim_end().to_owned()))?;
        for (index, entry) in config.trusted.iter().enumerate() {
            self.trust = self
                .trust
                .clone()
                .with(entry)
                .map_err(|error| SessionError::Trusted {
                    file: shown.clone(),
                    index,
                    error,
                })?;
        }
        let deny: Vec<&str> = config.files.deny.iter().map(String::as_str).collect();
        let read_only: Vec<&str> = config.files.read_only.iter().map(String::as_str).collect();
        let rules = FileRules::new()
            .with(&deny, &read_only)
            .map_err(|reason| invalid(format!("table `files`: {reason}")))?;
        self.files = std::mem::take(&mut self.files).union(&rules);
        self.network.read(file, config.network, config.secrets)?;
        for (name, table) in config.mcp {
            let approval = table.approval(file, &name)?;
            self.mcp.insert(name, approval);
        }
        let base = relative_base(file);
        if let Some(dirs) = config.plugins {
            self.plugins = dirs
                .iter()
                .map(|dir| Folder::new(&base.join(dir), Source::Config(file.to_owned())))
                .collect();
        }
        self.defaults.read(file, &base, config.defaults)?;
        if let Some(max) = config.max_instances {
            if max == 0 {
                return Err(invalid(
                    "field `max-instances` = 0: the pool needs at least one slot".to_owned(),
                ));
            }
            self.max_instances = Some(max);
        }
        Ok(())
    }
}

/// The approvals kept in `file`: none yet when it does not exist.
pub fn load_approvals(file: &Path) -> Result<Approvals> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(Approvals::parse(file, &text)?),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Approvals::checked()),
        Err(error) => Err(SessionError::Unreadable {
            what: "approvals",
            file: file.to_owned(),
            error,
        }),
    }
}

/// What relative folders in config `file` are relative to: the project
/// holding `.cordon/` for a project's config, else the file's folder.
fn relative_base(file: &Path) -> PathBuf {
    let folder = file.parent().unwrap_or_else(|| Path::new("."));
    let base = if folder.file_name().is_some_and(|name| name == ".cordon") {
        folder.parent().unwrap_or_else(|| Path::new("."))
    } else {
        folder
    };
    if base.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        base.to_owned()
    }
}

/// `$XDG_CONFIG_HOME/cordon/config.toml`, or `~/.config/cordon/config.toml`.
fn user_config() -> Option<PathBuf> {
    Some(xdg::cordon_dir(Base::Config)?.join("config.toml"))
}
