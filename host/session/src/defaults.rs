//! The user's defaults for runs, from the `[defaults]` table of the config
//! files: what a run uses when neither a flag, an environment variable nor
//! the agent file says. The project's config overrides the user's, field by
//! field.
//!
//! ```toml
//! [defaults]
//! model = "anthropic:claude-sonnet-4-5"  # when no --model, CORDON_MODEL or agent `model`
//! permissions = "permissions.toml"       # when no --permissions and no agent file
//! max-steps = 30                         # when no agent file
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Result, SessionError};

/// A default and the config file that set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromConfig<T> {
    /// The value.
    pub value: T,
    /// The config file it was read from.
    pub file: PathBuf,
}

impl<T> FromConfig<T> {
    fn new(file: &Path, value: T) -> Self {
        Self {
            value,
            file: file.to_owned(),
        }
    }
}

/// A default model: its spec, and the folder a `scripted:FILE` is relative to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultModel {
    /// The model spec, such as `openai:gpt-5-mini`.
    pub spec: String,
    /// What a relative file in the spec is relative to.
    pub base: PathBuf,
}

/// The run defaults of every config file read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defaults {
    /// The model of a run that names none.
    pub model: Option<FromConfig<DefaultModel>>,
    /// The permissions file of a run with no agent file and no
    /// `--permissions`.
    pub permissions: Option<FromConfig<PathBuf>>,
    /// The step limit of a run with no agent file.
    pub max_steps: Option<FromConfig<u32>>,
}

/// The `[defaults]` table as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct DefaultsTable {
    model: Option<String>,
    permissions: Option<PathBuf>,
    max_steps: Option<u32>,
}

impl Defaults {
    /// Take what config `file`'s `table` sets, its relative paths under
    /// `base`.
    pub(crate) fn read(&mut self, file: &Path, base: &Path, table: DefaultsTable) -> Result<()> {
        let invalid = |problem: String| SessionError::Invalid {
            file: file.display().to_string(),
            problem,
        };
        if let Some(spec) = table.model {
            if !spec
                .split_once(':')
                .is_some_and(|(provider, model)| !provider.is_empty() && !model.is_empty())
            {
                return Err(invalid(format!(
                    "field `defaults.model` = {spec:?}: expected PROVIDER:MODEL, such as \
                     `openai:gpt-5-mini`, `anthropic:claude-sonnet-4-5` or `scripted:FILE`"
                )));
            }
            self.model = Some(FromConfig::new(
                file,
                DefaultModel {
                    spec,
                    base: base.to_owned(),
                },
            ));
        }
        if let Some(permissions) = table.permissions {
            self.permissions = Some(FromConfig::new(file, base.join(permissions)));
        }
        if let Some(steps) = table.max_steps {
            if steps == 0 {
                return Err(invalid(
                    "field `defaults.max-steps` = 0: a run needs at least one step".to_owned(),
                ));
            }
            self.max_steps = Some(FromConfig::new(file, steps));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> DefaultsTable {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_later_file_overrides_field_by_field() {
        let mut defaults = Defaults::default();
        let user = Path::new("/home/u/.config/cordon/config.toml");
        let project = Path::new("/p/.cordon/config.toml");
        defaults
            .read(
                user,
                Path::new("/home/u/.config/cordon"),
                table("model = \"openai:gpt-5-mini\"\nmax-steps = 30"),
            )
            .unwrap();
        defaults
            .read(
                project,
                Path::new("/p"),
                table("model = \"scripted:replies.json\""),
            )
            .unwrap();
        let model = defaults.model.unwrap();
        assert_eq!(model.value.spec, "scripted:replies.json");
        assert_eq!(model.value.base, Path::new("/p"));
        assert_eq!(model.file, project);
        let steps = defaults.max_steps.unwrap();
        assert_eq!((steps.value, steps.file.as_path()), (30, user));
    }

    #[test]
    fn bad_values_name_the_file_and_field() {
        let file = Path::new("/p/.cordon/config.toml");
        let mut defaults = Defaults::default();
        let error = defaults
            .read(file, Path::new("/p"), table("model = \"gpt-5\""))
            .unwrap_err()
            .to_string();
        assert!(error.contains("/p/.cordon/config.toml: field `defaults.model` = \"gpt-5\""));
        let error = defaults
            .read(file, Path::new("/p"), table("max-steps = 0"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("field `defaults.max-steps` = 0"), "{error}");
        assert!(toml::from_str::<DefaultsTable>("colour = true").is_err());
    }
}
