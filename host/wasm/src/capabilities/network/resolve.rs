//! Name resolution for the connections the host makes on a component's
//! behalf. A request's host is resolved once; every address is judged, and
//! the connection goes only to the addresses that passed, so a name that
//! resolves differently a moment later (DNS rebinding) changes nothing. The
//! operator may pin names to addresses (`[network.resolve]`), as
//! `/etc/hosts` does; other names go to the system's resolver. A component
//! never resolves a name itself: `wasi:sockets/ip-name-lookup` is refused.

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;

/// A lookup in flight.
pub type Lookup<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;

/// What turns a host name into addresses.
pub trait Resolve: Send + Sync + 'static {
    /// The addresses of `name`.
    fn resolve<'a>(&'a self, name: &'a str) -> Lookup<'a>;
}

/// The system's resolver, through tokio.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve<'a>(&'a self, name: &'a str) -> Lookup<'a> {
        Box::pin(async move {
            let found = tokio::net::lookup_host((name, 0)).await?;
            Ok(found.map(|addr| addr.ip()).collect())
        })
    }
}

/// Names the operator pinned to addresses, and a resolver for the rest.
#[derive(Clone)]
pub struct Resolver {
    pinned: BTreeMap<String, Vec<IpAddr>>,
    rest: Arc<dyn Resolve>,
}

impl Default for Resolver {
    fn default() -> Self {
        Self::new(Arc::new(SystemResolver))
    }
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver")
            .field("pinned", &self.pinned)
            .finish_non_exhaustive()
    }
}

impl Resolver {
    /// Resolve every name with `rest`.
    pub fn new(rest: Arc<dyn Resolve>) -> Self {
        Self {
            pinned: BTreeMap::new(),
            rest,
        }
    }

    /// Resolve `name` (lowercase) to `addresses` only.
    pub fn pin(mut self, name: &str, addresses: Vec<IpAddr>) -> Self {
        self.pinned.insert(name.to_ascii_lowercase(), addresses);
        self
    }

    /// The addresses of `name`; none is an error.
    pub async fn resolve(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        let found = match self.pinned.get(name) {
            Some(addresses) => addresses.clone(),
            None => self.rest.resolve(name).await?,
        };
        if found.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{name} has no address"),
            ));
        }
        Ok(found)
    }
}
