//! The name resolution a remote MCP server's connections go through: the
//! operator's resolver (with its pinned names), then the address checks
//! every bundle's requests pass, so that a granted name that resolves to a
//! private, loopback or metadata address reaches nothing unless the operator
//! opened that range. Connections go only to the addresses that passed;
//! there is no second lookup.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use cordon_wasm::NetworkPolicy;
use mcp_reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Resolves through the network policy, keeping only reachable addresses.
pub(crate) struct VettedResolver {
    pub(crate) policy: Arc<NetworkPolicy>,
}

impl Resolve for VettedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        let host = name.as_str().to_ascii_lowercase();
        Box::pin(async move {
            let found = policy.resolver.resolve(&host).await?;
            let kept = reachable(&policy, &host, &found)?;
            let addrs: Addrs = Box::new(kept.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// The addresses of `found` (those of `host`) a connection may go to; none
/// is an error naming every refused address and why.
pub(crate) fn reachable(
    policy: &NetworkPolicy,
    host: &str,
    found: &[IpAddr],
) -> io::Result<Vec<IpAddr>> {
    let mut kept = Vec::new();
    let mut refused = Vec::new();
    for ip in found {
        match policy.addresses.refusal(*ip) {
            None => kept.push(*ip),
            Some(blocked) => refused.push(format!("{ip} ({blocked})")),
        }
    }
    if kept.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{host} resolves only to blocked addresses: {}; the operator opens a range with `[network] allow-ranges`",
                refused.join(", ")
            ),
        ));
    }
    Ok(kept)
}
