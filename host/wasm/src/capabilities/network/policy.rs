//! The operator's side of the network, the same for every bundle: which
//! blocked ranges are opened, how names resolve, which certificate
//! authorities TLS trusts besides the public ones, and the values of the
//! secrets bundles use.

use std::sync::Arc;

use ipnet::IpNet;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use tokio_rustls::TlsConnector;

use super::address::AddressPolicy;
use super::resolve::Resolver;
use super::secrets::SecretValues;

/// How the host connects for every bundle.
#[derive(Clone)]
pub struct NetworkPolicy {
    /// The blocked ranges the operator opened.
    pub addresses: AddressPolicy,
    /// How names resolve.
    pub resolver: Resolver,
    /// The values of secrets, by bundle.
    pub secrets: SecretValues,
    pub(crate) tls: TlsConnector,
    roots: Vec<CertificateDer<'static>>,
}

impl Default for NetworkPolicy {
    fn default() -> Self {
        Self {
            addresses: AddressPolicy::default(),
            resolver: Resolver::default(),
            secrets: SecretValues::default(),
            tls: connector(&[]),
            roots: Vec::new(),
        }
    }
}

impl std::fmt::Debug for NetworkPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkPolicy")
            .field("addresses", &self.addresses)
            .field("resolver", &self.resolver)
            .field("secrets", &self.secrets)
            .field("extra roots", &self.roots.len())
            .finish()
    }
}

impl NetworkPolicy {
    /// Open the blocked `ranges`, such as `127.0.0.0/8` for a service on this
    /// machine.
    pub fn opening(mut self, ranges: Vec<IpNet>) -> Self {
        self.addresses = AddressPolicy::opening(ranges);
        self
    }

    /// Resolve names with `resolver`.
    pub fn resolving(mut self, resolver: Resolver) -> Self {
        self.resolver = resolver;
        self
    }

    /// Trust the certificate authorities `roots` besides the public ones.
    pub fn trusting(mut self, roots: Vec<CertificateDer<'static>>) -> Self {
        self.tls = connector(&roots);
        self.roots = roots;
        self
    }

    /// Use `secrets` as the values of bundles' secrets.
    pub fn with_secrets(mut self, secrets: SecretValues) -> Self {
        self.secrets = secrets;
        self
    }

    /// The TLS settings the host's own connections use, for a client of the
    /// host's that is not a component's: the public roots and the
    /// operator's, the server name being the request's own host.
    pub fn tls_config(&self) -> rustls::ClientConfig {
        client_config(&self.roots)
    }

    /// Shared, for the calls that use it.
    pub(crate) fn shared(self) -> Arc<Self> {
        Arc::new(self)
    }
}

/// A TLS client trusting the public roots and `extra`, speaking HTTP/1.1.
fn connector(extra: &[CertificateDer<'static>]) -> TlsConnector {
    TlsConnector::from(Arc::new(client_config(extra)))
}

/// TLS settings trusting the public roots and `extra`, speaking HTTP/1.1.
fn client_config(extra: &[CertificateDer<'static>]) -> rustls::ClientConfig {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for root in extra {
        // A root that does not parse was refused when it was read.
        let _ = roots.add(root.clone());
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring's provider speaks TLS 1.2 and 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}
