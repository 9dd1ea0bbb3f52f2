//! Secrets a component uses and never sees. A manifest names each secret it
//! needs and where it may go:
//!
//! ```toml
//! [secrets.github]
//! header = "authorization"          # the one header it may travel in
//! prefix = "Bearer "                # what comes before it there
//! origins = ["https://api.github.com"]
//! ```
//!
//! The operator provides the value (from the environment or a file, never
//! the manifest). For each call the component gets a placeholder instead,
//! fresh and random, in the variable `CORDON_SECRET_GITHUB`; it writes the
//! header as `authorization: Bearer <placeholder>`, and the host puts the
//! value there, only on a request to one of the secret's origins that the
//! bundle is granted. A placeholder anywhere else (another origin, the URL,
//! another header, the body or its trailers) refuses the request, audited.
//! The value never enters the component: where a response carries it back
//! (a server echoing the request), the host replaces it with the
//! placeholder before the component reads it; such a request asks for, and
//! takes only, a plain response, where the value can be found. Events name
//! a secret, never its value.

use std::collections::BTreeMap;
use std::fmt;

use http::HeaderName;
use serde::{Deserialize, Serialize};

use super::grant;
use super::origin::{Host, Origin, Scheme};
use crate::manifest::checks::{ManifestError, Validator};

/// The prefix of the variables that carry placeholders.
pub const SECRET_ENV_PREFIX: &str = "CORDON_SECRET_";

/// One secret as a manifest declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretUse {
    /// The header it travels in.
    pub header: String,
    /// What comes before it in the header.
    #[serde(default)]
    pub prefix: String,
    /// Where it may go.
    pub origins: Vec<String>,
}

/// Check `[secrets]`: names, headers, prefixes and origins, each origin one
/// that `network` (the bundle's `grants.network`) covers.
pub(crate) fn validate(
    secrets: &BTreeMap<String, SecretUse>,
    network: &[String],
    check: &Validator<'_>,
) -> Result<(), ManifestError> {
    let granted = grant::parse_all(network, |_, _, reason| reason).unwrap_or_default();
    for (name, secret) in secrets {
        let field = |part: &str| format!("secrets.{name}.{part}");
        let name_ok = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !name_ok {
            return Err(check.invalid(
                &format!("secrets.{name}"),
                name,
                "name a secret with 1 to 64 lowercase letters, digits, `-` or `_`",
            ));
        }
        let header = HeaderName::from_bytes(secret.header.as_bytes())
            .map_err(|_| check.invalid(&field("header"), &secret.header, "not a header name"))?;
        if wasmtime_wasi_http::DEFAULT_FORBIDDEN_HEADERS.contains(&header) {
            return Err(check.invalid(
                &field("header"),
                &secret.header,
                "a component may not set this header",
            ));
        }
        if !secret.prefix.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            return Err(check.invalid(&field("prefix"), &secret.prefix, "use printable ASCII"));
        }
        if secret.origins.is_empty() {
            return Err(check.invalid(
                &field("origins"),
                &secret.origins,
                "name the origins the secret may go to",
            ));
        }
        let origins = grant::parse_all(&secret.origins, |index, origin, reason| {
            check.invalid(&format!("{}[{index}]", field("origins")), origin, &reason)
        })?;
        for (index, origin) in origins.iter().enumerate() {
            let field = format!("{}[{index}]", field("origins"));
            if origin.scheme() == Scheme::Tcp {
                return Err(check.invalid(
                    &field,
                    origin.to_string(),
                    "a secret travels in an HTTP header",
                ));
            }
            if !granted.iter().any(|asked| asked.covers(origin)) {
                return Err(check.invalid(
                    &field,
                    origin.to_string(),
                    "is not inside the bundle's grants.network",
                ));
            }
        }
    }
    Ok(())
}

/// The variable a secret's placeholder is in: `CORDON_SECRET_` and its name
/// in capitals, `-` as `_`.
pub fn env_name(secret: &str) -> String {
    format!(
        "{SECRET_ENV_PREFIX}{}",
        secret.to_ascii_uppercase().replace('-', "_")
    )
}

/// A secret's value, which prints as `[secret]`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    /// `value`, kept from every printout.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value itself, for the request that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[secret]")
    }
}

/// The values the operator provides, by bundle and secret name.
#[derive(Debug, Clone, Default)]
pub struct SecretValues {
    values: BTreeMap<String, BTreeMap<String, SecretValue>>,
}

impl SecretValues {
    /// Provide `value` for secret `name` of bundle `bundle`.
    pub fn provide(&mut self, bundle: &str, name: &str, value: SecretValue) {
        self.values
            .entry(bundle.to_owned())
            .or_default()
            .insert(name.to_owned(), value);
    }

    fn get(&self, bundle: &str, name: &str) -> Option<&SecretValue> {
        self.values.get(bundle)?.get(name)
    }
}

/// One secret as one call holds it.
#[derive(Debug, Clone)]
pub(crate) struct CallSecret {
    pub(crate) name: String,
    pub(crate) header: HeaderName,
    pub(crate) prefix: String,
    pub(crate) origins: Vec<Origin>,
    pub(crate) value: SecretValue,
    pub(crate) placeholder: String,
}

/// The secrets of one call, each with its fresh placeholder.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallSecrets {
    pub(crate) secrets: Vec<CallSecret>,
}

impl CallSecrets {
    /// The secrets bundle `bundle` declares in `uses` that the operator
    /// provided in `values`, each with a new placeholder.
    pub(crate) fn new(
        bundle: &str,
        uses: &BTreeMap<String, SecretUse>,
        values: &SecretValues,
    ) -> Self {
        let secrets = uses
            .iter()
            .filter_map(|(name, secret)| {
                let value = values.get(bundle, name)?.clone();
                Some(CallSecret {
                    name: name.clone(),
                    header: HeaderName::from_bytes(secret.header.as_bytes()).ok()?,
                    prefix: secret.prefix.clone(),
                    origins: grant::parse_all(&secret.origins, |_, _, _| ()).ok()?,
                    value,
                    placeholder: placeholder(name),
                })
            })
            .collect();
        Self { secrets }
    }

    /// Whether the call has no secret.
    pub(crate) fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The variables holding the placeholders.
    pub(crate) fn env(&self) -> impl Iterator<Item = (String, &str)> {
        self.secrets
            .iter()
            .map(|secret| (env_name(&secret.name), secret.placeholder.as_str()))
    }

    /// The secret whose placeholder `bytes` hold, if any.
    pub(crate) fn placeholder_in(&self, bytes: &[u8]) -> Option<&CallSecret> {
        self.secrets
            .iter()
            .find(|secret| memchr::memmem::find(bytes, secret.placeholder.as_bytes()).is_some())
    }

    /// The longest placeholder, in bytes.
    pub(crate) fn longest_placeholder(&self) -> usize {
        self.secrets
            .iter()
            .map(|secret| secret.placeholder.len())
            .max()
            .unwrap_or(0)
    }
}

impl CallSecret {
    /// Whether the secret may go on a request over `scheme` to `host:port`.
    pub(crate) fn may_go_to(&self, scheme: Scheme, host: &Host, port: u16) -> bool {
        self.origins
            .iter()
            .any(|origin| origin.matches(scheme, host, port))
    }
}

/// A fresh placeholder for secret `name`: its name and 128 random bits. It
/// need not be secret (the component holds it), only unlike anything else a
/// request carries; whatever it is, the value goes nowhere but the secret's
/// header on its origins.
fn placeholder(name: &str) -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        bytes = nanos.to_le_bytes();
    }
    format!("cordon-secret-{name}-{}", hex::encode(bytes))
}
