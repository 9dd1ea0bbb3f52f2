//! The operator's network settings, from the config's `[network]` and
//! `[secrets]` tables, and the policy the plugin host connects under:
//!
//! ```toml
//! [network]
//! allow-ranges = ["127.0.0.0/8"]      # blocked ranges a connection may reach anyway
//! ca-files = ["certs/internal.pem"]   # authorities TLS trusts besides the public ones
//! [network.resolve]                   # names pinned to addresses, as /etc/hosts does
//! "api.internal.test" = ["10.1.2.3"]
//!
//! [secrets.weather]                   # the values of bundle `weather`'s secrets
//! api-key = { env = "WEATHER_KEY" }   # from a variable of Cordon's environment
//! token = { file = "/run/secrets/t" } # or a file, its content trimmed
//! ```
//!
//! Relative paths are relative to the config file. A value is read when the
//! host is built; one that is missing is a warning and the bundle runs
//! without that secret, as is a declared secret the config does not name.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use cordon_wasm::{NetworkPolicy, Resolver, SecretValue, SecretValues};
use ipnet::IpNet;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde::Deserialize;

use crate::error::{Result, SessionError};

/// `[network]` as a config file writes it.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NetworkTable {
    #[serde(default)]
    allow_ranges: Vec<String>,
    #[serde(default)]
    ca_files: Vec<PathBuf>,
    #[serde(default)]
    resolve: BTreeMap<String, Vec<String>>,
}

/// Where a secret's value comes from.
#[derive(Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub enum SecretSource {
    /// A variable of Cordon's own environment.
    Env(String),
    /// A file.
    File(PathBuf),
}

/// The operator's network settings, from every config file read.
#[derive(Default)]
pub struct NetworkConfig {
    allow_ranges: Vec<IpNet>,
    /// Each file with where it was named: `CONFIG: field ...[i]`.
    ca_files: Vec<(String, PathBuf)>,
    resolve: BTreeMap<String, Vec<IpAddr>>,
    secrets: BTreeMap<String, BTreeMap<String, SecretSource>>,
}

impl NetworkConfig {
    /// Add the settings of `file`'s `[network]` table and `[secrets]`.
    pub fn read(
        &mut self,
        file: &Path,
        table: NetworkTable,
        secrets: BTreeMap<String, BTreeMap<String, SecretSource>>,
    ) -> Result<()> {
        let shown = file.display();
        let invalid = |problem: String| SessionError::Invalid {
            file: shown.to_string(),
            problem,
        };
        for (index, range) in table.allow_ranges.iter().enumerate() {
            let parsed: IpNet = range.parse().map_err(|_| {
                invalid(format!(
                    "field `network.allow-ranges[{index}]` = {range:?}: not an address range such as 127.0.0.0/8 or fd00::/8"
                ))
            })?;
            self.allow_ranges.push(parsed);
        }
        let base = file.parent().unwrap_or(Path::new("."));
        self.ca_files
            .extend(table.ca_files.iter().enumerate().map(|(index, path)| {
                (
                    format!("{shown}: field `network.ca-files[{index}]`"),
                    base.join(path),
                )
            }));
        for (name, addresses) in table.resolve {
            let parsed = addresses
                .iter()
                .map(|address| {
                    address.parse::<IpAddr>().map_err(|_| {
                        invalid(format!(
                            "field `network.resolve.{name:?}`: {address:?} is not an IP address"
                        ))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            if parsed.is_empty() {
                return Err(invalid(format!(
                    "field `network.resolve.{name:?}`: name at least one address"
                )));
            }
            self.resolve.insert(name.to_ascii_lowercase(), parsed);
        }
        for (bundle, named) in secrets {
            let named = named.into_iter().map(|(name, source)| {
                let source = match source {
                    SecretSource::File(path) => SecretSource::File(base.join(path)),
                    other => other,
                };
                (name, source)
            });
            self.secrets.entry(bundle).or_default().extend(named);
        }
        Ok(())
    }

    /// Whether the config gives a source for secret `name` of `bundle`.
    pub fn provides(&self, bundle: &str, name: &str) -> bool {
        self.secrets
            .get(bundle)
            .is_some_and(|named| named.contains_key(name))
    }

    /// What the operator should hear about the secrets of `bundles`, each a
    /// bundle's name and the secrets its manifest declares: a declared
    /// secret the config gives no source, and a source the config gives for
    /// a secret the bundle does not declare.
    pub fn secret_warnings<'a>(
        &self,
        bundles: impl IntoIterator<Item = (&'a str, Vec<&'a str>)>,
    ) -> Vec<String> {
        let mut warnings = Vec::new();
        for (bundle, declared) in bundles {
            for name in &declared {
                if !self.provides(bundle, name) {
                    warnings.push(format!(
                        "bundle `{bundle}` uses secret `{name}`, which the operator config does not provide \
                         (add `{name} = {{ env = \"VARIABLE\" }}` under `[secrets.{bundle}]`); its requests go without it"
                    ));
                }
            }
            for name in self
                .secrets
                .get(bundle)
                .into_iter()
                .flat_map(BTreeMap::keys)
            {
                if !declared.contains(&name.as_str()) {
                    warnings.push(format!(
                        "the operator config provides secret `{name}` of bundle `{bundle}`, which its manifest \
                         does not declare; no request carries it"
                    ));
                }
            }
        }
        warnings
    }

    /// The policy the plugin host connects under; a secret whose value is
    /// missing is left out with a warning.
    pub fn policy(&self) -> Result<NetworkPolicy> {
        let mut roots = Vec::new();
        for (named, file) in &self.ca_files {
            let found: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(file)
                .and_then(|certificates| certificates.collect())
                .map_err(|error| SessionError::CertificateAuthorities {
                    field: named.clone(),
                    problem: format!(
                        "reading the certificate authorities in {}: {error}",
                        file.display()
                    ),
                })?;
            if found.is_empty() {
                return Err(SessionError::CertificateAuthorities {
                    field: named.clone(),
                    problem: format!("{} holds no PEM certificate", file.display()),
                });
            }
            roots.extend(found);
        }
        let mut resolver = Resolver::default();
        for (name, addresses) in &self.resolve {
            resolver = resolver.pin(name, addresses.clone());
        }
        let mut secrets = SecretValues::default();
        for (bundle, named) in &self.secrets {
            for (name, source) in named {
                match value(source) {
                    Ok(value) => secrets.provide(bundle, name, value),
                    Err(reason) => eprintln!(
                        "warning: secret `{name}` of bundle `{bundle}` is not provided: {reason}; the bundle runs without it"
                    ),
                }
            }
        }
        Ok(NetworkPolicy::default()
            .opening(self.allow_ranges.clone())
            .resolving(resolver)
            .trusting(roots)
            .with_secrets(secrets))
    }
}

/// The value `source` holds.
pub(crate) fn value(source: &SecretSource) -> Result<SecretValue, String> {
    let text = match source {
        SecretSource::Env(name) => {
            std::env::var(name).map_err(|_| format!("the variable {name} is not set"))?
        }
        SecretSource::File(path) => std::fs::read_to_string(path)
            .map_err(|error| format!("{}: {error}", path.display()))?
            .trim()
            .to_owned(),
    };
    if text.is_empty() {
        return Err("its value is empty".into());
    }
    Ok(SecretValue::new(text))
}
