//! The network capability. No manifest section grants it yet: every socket
//! address a call uses is refused and audited, naming the destination, and
//! name lookup is off. Network grants take their place here, as one
//! allowlist every enforcement point consults.

use std::net::SocketAddr;

use cordon_kernel::Capability;
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::sockets::SocketAddrUse;

use crate::audit::Audit;

/// Refuse every socket address one call uses, each refusal in `audit`.
pub(crate) fn refuse_all(wasi: &mut WasiCtxBuilder, audit: Audit) {
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
            audit.deny(
                Capability::Network,
                &addr.to_string(),
                &format!("{} is not granted", socket_use(usage)),
            );
            Box::pin(async { false })
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
