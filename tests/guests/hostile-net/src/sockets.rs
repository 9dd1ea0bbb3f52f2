//! Raw sockets and name lookup through `wasi:sockets`, as `std::net` reaches them.

use std::net::{TcpListener, TcpStream, ToSocketAddrs, UdpSocket};

use cordon_sdk::{Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
pub(crate) struct AddrArgs {
    /// `IP:PORT`, or `NAME:PORT` for a lookup.
    addr: String,
}

macro_rules! socket_tool {
    ($tool:ident, $name:literal, $description:literal, |$addr:ident| $body:expr) => {
        pub(crate) struct $tool;

        impl Tool for $tool {
            const NAME: &'static str = $name;
            const DESCRIPTION: &'static str = $description;
            type Args = AddrArgs;
            type Output = Value;

            fn call(args: AddrArgs) -> Result<Value, ToolError> {
                let $addr = args.addr.as_str();
                $body.map_err(|error: std::io::Error| ToolError::Failed(error.to_string()))
            }
        }
    };
}

socket_tool!(
    Connect,
    "hostile-net.connect",
    "Connect a TCP socket to IP:PORT.",
    |addr| { TcpStream::connect(addr).map(|_| json!({ "connected": true })) }
);

socket_tool!(Lookup, "hostile-net.lookup", "Resolve NAME:PORT.", |addr| {
    addr.to_socket_addrs().map(
        |found| json!({ "addresses": found.map(|found| found.to_string()).collect::<Vec<_>>() }),
    )
});

socket_tool!(Listen, "hostile-net.listen", "Listen on IP:PORT.", |addr| {
    TcpListener::bind(addr).map(|_| json!({ "listening": true }))
});

socket_tool!(
    Udp,
    "hostile-net.udp",
    "Send a UDP datagram to IP:PORT.",
    |addr| {
        UdpSocket::bind("0.0.0.0:0")
            .and_then(|socket| socket.send_to(b"hello", addr))
            .map(|sent| json!({ "sent": sent }))
    }
);
