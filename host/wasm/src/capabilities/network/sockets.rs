//! Raw sockets (`wasi:sockets`) and name lookup. A socket sees only
//! addresses, so a component may connect a TCP socket only to an address
//! and port a `tcp://` origin of its grant names literally, and only when
//! that address may be reached at all; it never binds, listens, accepts or
//! uses UDP, and it resolves no name (a lookup is a channel out even when
//! every connection is refused). Each refusal is audited, naming the
//! destination or the name.

use std::net::SocketAddr;
use std::sync::Arc;

use cordon_kernel::Capability;
use wasmtime::component::{Linker, Val};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::sockets::SocketAddrUse;

use super::grant::Allowlist;
use super::policy::NetworkPolicy;
use crate::audit::Audit;

/// The name lookup interface as wasmtime-wasi 48 registers it.
const IP_NAME_LOOKUP: &str = "wasi:sockets/ip-name-lookup@0.2.12";

/// Judge every socket address one call uses against `allowlist` and
/// `policy`, each refusal in `audit`.
pub(crate) fn grant(
    wasi: &mut WasiCtxBuilder,
    allowlist: Arc<Allowlist>,
    policy: Arc<NetworkPolicy>,
    audit: Audit,
) {
    wasi.allow_tcp(true)
        .allow_udp(true)
        .allow_ip_name_lookup(false)
        .socket_addr_check(move |addr: SocketAddr, usage: SocketAddrUse| {
            // Binding an ephemeral port on no particular address is how every
            // connect and send begins; allowing it lets the refusal (and the
            // audit event) name the real destination.
            if is_implicit_bind(addr, usage) {
                return Box::pin(async { true });
            }
            let refusal = match usage {
                SocketAddrUse::TcpConnect if allowlist.allows_socket(addr) => policy
                    .addresses
                    .refusal(addr.ip())
                    .map(|class| format!("{} is {class}", addr.ip())),
                SocketAddrUse::TcpConnect if !allowlist.is_empty() => Some(
                    "connecting a TCP socket to an address no tcp:// origin of the grant names"
                        .into(),
                ),
                other => Some(format!("{} is not granted", socket_use(other))),
            };
            match refusal {
                None => Box::pin(async { true }),
                Some(reason) => {
                    audit.deny(Capability::Network, &addr.to_string(), &reason);
                    Box::pin(async { false })
                }
            }
        });
}

fn is_implicit_bind(addr: SocketAddr, usage: SocketAddrUse) -> bool {
    matches!(usage, SocketAddrUse::TcpBind | SocketAddrUse::UdpBind)
        && addr.ip().is_unspecified()
        && addr.port() == 0
}

fn socket_use(usage: SocketAddrUse) -> &'static str {
    match usage {
        SocketAddrUse::TcpBind => "binding a TCP socket",
        SocketAddrUse::TcpListen => "listening on a TCP socket",
        SocketAddrUse::TcpAccept => "accepting a TCP connection",
        SocketAddrUse::TcpConnect => "connecting a TCP socket",
        SocketAddrUse::UdpBind => "binding a UDP socket",
        SocketAddrUse::UdpSend => "sending a UDP datagram",
        SocketAddrUse::UdpReceive => "receiving a UDP datagram",
    }
}

/// Replace `resolve-addresses`: every lookup is refused and audited, and no
/// query leaves the host.
pub(crate) fn add_lookup_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    audit: fn(&mut T) -> &Audit,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut lookup = linker.instance(IP_NAME_LOOKUP)?;
    lookup.func_new_async("resolve-addresses", move |mut store, _ty, params, results| {
        Box::new(async move {
            let name = match params.get(1) {
                Some(Val::String(name)) => name.clone(),
                _ => String::new(),
            };
            audit(store.data_mut()).deny(
                Capability::Network,
                &name,
                "looking up a name is not granted: the host resolves the hosts of granted requests itself",
            );
            // The network handle is lent for the call; the lend ends here.
            if let Some(Val::Resource(network)) = params.first() {
                network.resource_drop_async(&mut store).await?;
            }
            if let Some(result) = results.first_mut() {
                *result = Val::Result(Err(Some(Box::new(Val::Enum("access-denied".into())))));
            }
            Ok(())
        })
    })
}
