//! A tool component for the host's network tests. Each tool reaches out one
//! way a component can (an HTTP request of any shape, many at once, a raw
//! socket, a lookup, a listener, a datagram) and returns what it observed,
//! or lets the refusal surface as its tool error, so a test can assert what
//! the host allowed, refused and audited.

mod fetch;
mod parallel;
mod sockets;

cordon_sdk::export_tools!(
    fetch::Fetch,
    fetch::Many,
    fetch::Placeholder,
    parallel::Parallel,
    sockets::Connect,
    sockets::Lookup,
    sockets::Listen,
    sockets::Udp,
);
