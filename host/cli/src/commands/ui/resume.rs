//! A decision from the page resumes the run exactly as `cordon runs resume`
//! does, because it is that command: the inspector runs its own binary with
//! the decisions as flags and the settings it was started with (workspace,
//! store, cache, config, approvals, pool) in the environment. The run is
//! assembled from its record as a resume from the terminal assembles it,
//! the store refuses a second driver as it refuses one there, and nothing
//! of the run lives in the inspector.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::Context;
use serde::Deserialize;

use crate::args::GlobalArgs;

/// What a person decided about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Decision {
    Approve,
    Deny,
}

/// How the resume went: its exit code (3 when the run waits again) and
/// what it printed.
pub(crate) struct Resumed {
    pub(crate) code: i32,
    pub(crate) output: String,
}

/// The command that resumes runs, with the inspector's settings.
pub(crate) struct Resumer {
    program: PathBuf,
    env: Vec<(&'static str, OsString)>,
    no_cache: bool,
}

impl Resumer {
    /// Resume runs of the store `store` names with the settings of `global`.
    pub(crate) fn new(global: &GlobalArgs, store: OsString) -> anyhow::Result<Self> {
        let program =
            std::env::current_exe().context("finding the cordon binary to resume runs with")?;
        let absolute = |path: &PathBuf| -> anyhow::Result<OsString> {
            Ok(std::path::absolute(path)
                .with_context(|| format!("resolving {}", path.display()))?
                .into_os_string())
        };
        let mut env = vec![
            ("CORDON_WORKSPACE", absolute(&global.workspace)?),
            ("CORDON_STORE", store),
        ];
        for (name, path) in [
            ("CORDON_CACHE_DIR", &global.cache_dir),
            ("CORDON_CONFIG", &global.config),
            ("CORDON_GRANTS", &global.grants),
        ] {
            if let Some(path) = path {
                env.push((name, absolute(path)?));
            }
        }
        if let Some(max) = global.max_instances {
            env.push(("CORDON_MAX_INSTANCES", max.to_string().into()));
        }
        Ok(Self {
            program,
            env,
            no_cache: global.no_cache,
        })
    }

    /// Resume `run` with `decisions`, telling the model `reason` for each
    /// denial when one is given.
    pub(crate) async fn resume(
        &self,
        run: &str,
        decisions: &BTreeMap<String, Decision>,
        reason: Option<&str>,
    ) -> anyhow::Result<Resumed> {
        let mut command = Command::new(&self.program);
        command.args(["runs", "resume"]);
        if self.no_cache {
            command.arg("--no-cache");
        }
        for (call, decision) in decisions {
            let flag = match decision {
                Decision::Approve => "--approve",
                Decision::Deny => "--deny",
            };
            // Joined with `=`, no id can pass for a flag.
            command.arg(format!("{flag}={call}"));
        }
        if let Some(reason) = reason {
            command.arg(format!("--reason={reason}"));
        }
        command
            .arg("--")
            .arg(run)
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null());
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .context("waiting for the resume")?
            .context("running `cordon runs resume`")?;
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        Ok(Resumed {
            code: output.status.code().unwrap_or(-1),
            output: text,
        })
    }
}
