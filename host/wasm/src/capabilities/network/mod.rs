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

use std::sync::Arc;

use wasmtime::component::Linker;
use wasmtime_wasi::WasiCtxBuilder;

use crate::audit::Audit;
use crate::bundle::Bundle;
use crate::sandbox::CallState;

use self::http::HttpAccess;
use self::policy::NetworkPolicy;
use self::secrets::CallSecrets;

/// Give one call of `bundle` (labelled `label`) its network: sockets and
/// HTTP judged against the bundle's allowlist and `policy`, the secrets'
/// placeholders in its environment. What the call's HTTP goes through.
pub(crate) fn grant(
    wasi: &mut WasiCtxBuilder,
    bundle: &Bundle,
    policy: &Arc<NetworkPolicy>,
    audit: &Audit,
    label: &str,
) -> HttpAccess {
    sockets::grant(
        wasi,
        Arc::clone(&bundle.network),
        Arc::clone(policy),
        audit.clone(),
    );
    let secrets = if bundle.network.is_empty() {
        CallSecrets::default()
    } else {
        CallSecrets::new(
            &bundle.manifest.name,
            &bundle.manifest.secrets,
            &policy.secrets,
        )
    };
    for (name, placeholder) in secrets.env() {
        wasi.env(name, placeholder);
    }
    HttpAccess::new(
        Arc::clone(&bundle.network),
        Arc::clone(policy),
        bundle.manifest.limits.network,
        Arc::new(secrets),
        audit.clone(),
        label,
    )
}

/// Link outgoing HTTP and the refused name lookup.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)?;
    sockets::add_lookup_to_linker(linker)
}
