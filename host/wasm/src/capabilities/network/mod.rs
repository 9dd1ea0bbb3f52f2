//! The network capability: one allowlist of origins per bundle
//! ([`grant`]: what its manifest asks, as the operator's approval narrows
//! it), judged at every point a component reaches out: outgoing HTTP
//! ([`http`], sent by the host's own [`sender`]), raw sockets and name
//! lookup ([`sockets`]). Whatever the allowlist admits, a connection goes
//! only to addresses the operator's [`policy`] lets it reach
//! ([`address`]), after one resolution ([`resolve`]); bodies are bounded
//! ([`body`]); and secrets travel only where they may, never entering the
//! component ([`secrets`]).

pub(crate) mod address;
pub(crate) mod body;
pub(crate) mod grant;
pub(crate) mod http;
pub(crate) mod origin;
pub(crate) mod policy;
pub(crate) mod resolve;
pub(crate) mod secrets;
pub(crate) mod sender;
pub(crate) mod sockets;

use std::collections::BTreeMap;
use std::sync::Arc;

use wasmtime::component::Linker;
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi_http::WasiHttpView;

use crate::audit::Audit;
use crate::limits::NetworkLimits;

use self::grant::Allowlist;
use self::http::HttpAccess;
use self::policy::NetworkPolicy;
use self::secrets::{CallSecrets, SecretUse};

/// What one call of a bundle is granted of the network.
pub(crate) struct Granted<'a> {
    /// The bundle, by name.
    pub(crate) bundle: &'a str,
    /// The secrets it uses and where each may go.
    pub(crate) secrets: &'a BTreeMap<String, SecretUse>,
    /// Where it may connect: what it asks, as the operator approved it.
    pub(crate) allowlist: &'a Arc<Allowlist>,
    /// The operator's rules over every connection, and the secrets' values.
    pub(crate) policy: &'a Arc<NetworkPolicy>,
    pub(crate) limits: NetworkLimits,
}

/// Give one call (labelled `label`) its network: sockets and HTTP judged
/// against its bundle's allowlist and policy, the secrets' placeholders in
/// its environment. What the call's HTTP goes through.
pub(crate) fn grant(
    wasi: &mut WasiCtxBuilder,
    granted: Granted<'_>,
    audit: &Audit,
    label: &str,
) -> HttpAccess {
    sockets::grant(
        wasi,
        Arc::clone(granted.allowlist),
        Arc::clone(granted.policy),
        audit.clone(),
    );
    let secrets = if granted.allowlist.is_empty() {
        CallSecrets::default()
    } else {
        CallSecrets::new(granted.bundle, granted.secrets, &granted.policy.secrets)
    };
    for (name, placeholder) in secrets.env() {
        wasi.env(name, placeholder);
    }
    HttpAccess::new(
        Arc::clone(granted.allowlist),
        Arc::clone(granted.policy),
        granted.limits,
        Arc::new(secrets),
        audit.clone(),
        label,
    )
}

/// Link outgoing HTTP, judged by the store's [`WasiHttpView`] hooks, and
/// the refused name lookup, audited in the trail `audit` finds.
pub(crate) fn add_to_linker<T: WasiHttpView + Send + 'static>(
    linker: &mut Linker<T>,
    audit: fn(&mut T) -> &Audit,
) -> wasmtime::Result<()> {
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)?;
    sockets::add_lookup_to_linker(linker, audit)
}
