//! The plugins of the search path on their own, loaded as a run loads them
//! (under the operator's approvals, trust and safeguards) but with no agent,
//! skills or model: what commands that list or call tools outside a run
//! stand on.

use std::path::Path;
use std::sync::Arc;

use cordon_kernel::{EventSink, FileRules};
use cordon_wasm::{PluginHost, Plugins};

use crate::context;
use crate::error::Result;
use crate::operator::Operator;
use crate::plugin_path::PluginPath;
use crate::settings::HostSettings;

/// The operator's settings, the plugin host and the plugins it loaded.
pub struct Toolbox {
    /// The operator's settings the plugins loaded under.
    pub operator: Operator,
    /// The plugin host, for what else a command connects (MCP servers).
    pub host: PluginHost,
    /// Every bundle of the search path that loaded.
    pub plugins: Plugins,
}

impl Toolbox {
    /// Load the bundles of the search path `path` chooses under the
    /// operator's config (a bundle that does not load is left out with an
    /// error, or stops everything when `strict`), with the run store in
    /// `store` out of every component's reach, telling `live` what the
    /// calls do.
    pub async fn open(
        settings: &HostSettings,
        path: impl FnOnce(&Operator) -> PluginPath,
        strict: bool,
        store: Option<&Path>,
        live: Arc<dyn EventSink>,
    ) -> Result<Self> {
        let operator = Operator::load(settings)?;
        let host = context::host(settings, &operator)?;
        let path = path(&operator);
        let report =
            context::load_all(&host, &operator, &settings.workspace, &path, strict).await?;
        let safeguards = context::safeguards(
            settings,
            &operator,
            &FileRules::new(),
            (store, &settings.workspace),
            &path,
        );
        let plugins = context::plugins(&host, report.bundles, live, safeguards)?;
        Ok(Self {
            operator,
            host,
            plugins,
        })
    }
}
