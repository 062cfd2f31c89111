//! TLS terminated by our server (rustls): certificates from PEM files, HTTP/2 and HTTP/1.1 by
//! ALPN, and optionally client certificates (mTLS) checked against a CA, whose holder becomes
//! the caller through [`MutualTls`].

use super::auth::{Authenticator, Principal};
use crate::error::{A2AError, ErrorKind, Result};
use async_trait::async_trait;
use http::Request;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

fn config_error(what: &str, e: impl std::fmt::Display) -> A2AError {
    A2AError::new(ErrorKind::InvalidParams, format!("TLS {what}: {e}"))
}

/// Whether a client must present a certificate of the client CA (mutual TLS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientCertificate {
    /// No certificate is asked for.
    None,
    /// The handshake fails without one: the only way in.
    Required,
    /// Asked for, and one from another CA fails the handshake, but a client may come without
    /// one: when another scheme (an API key, a token) may admit it instead. The authenticator
    /// and the card's requirements then decide, as they do without TLS.
    Optional,
}

/// A server config from a PEM certificate chain and private key. With `client_ca`, clients
/// present a certificate issued by one of its certificates (mutual TLS), as `client` says.
pub fn server_config(
    cert: &Path,
    key: &Path,
    client_ca: Option<&Path>,
    client: ClientCertificate,
) -> Result<Arc<rustls::ServerConfig>> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| config_error("certificate", e))?;
    if chain.is_empty() {
        return Err(config_error("certificate", format!("no certificate in {}", cert.display())));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| config_error("key", e))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| config_error("protocols", e))?;
    let builder = match client_ca.filter(|_| client != ClientCertificate::None) {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_file_iter(ca).map_err(|e| config_error("client CA", e))? {
                roots.add(c.map_err(|e| config_error("client CA", e))?).map_err(|e| config_error("client CA", e))?;
            }
            let mut verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            if client == ClientCertificate::Optional {
                verifier = verifier.allow_unauthenticated();
            }
            let verifier = verifier.build().map_err(|e| config_error("client CA", e))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|e| config_error("certificate and key", e))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The client certificate of the connection a request came on (verified by the TLS layer).
#[derive(Debug, Clone)]
pub struct PeerCertificate(pub Arc<CertificateDer<'static>>);

impl PeerCertificate {
    /// Lowercase hex SHA-256 of the certificate (DER): a stable name for its holder.
    pub fn fingerprint(&self) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(self.0.as_ref()).iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// `service` with the connection's client certificate (if any) added to every request.
pub(crate) fn with_peer_certificate<S: Clone>(service: S, conn: &rustls::ServerConnection) -> WithPeer<S> {
    let cert =
        conn.peer_certificates().and_then(|c| c.first()).map(|c| PeerCertificate(Arc::new(c.clone().into_owned())));
    WithPeer { inner: service, cert }
}

#[derive(Clone)]
pub(crate) struct WithPeer<S> {
    inner: S,
    cert: Option<PeerCertificate>,
}

impl<S, B> hyper::service::Service<Request<B>> for WithPeer<S>
where
    S: hyper::service::Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn call(&self, mut req: Request<B>) -> Self::Future {
        if let Some(cert) = &self.cert {
            req.extensions_mut().insert(cert.clone());
        }
        self.inner.call(req)
    }
}

/// Callers identified by their client certificate (mTLS, with [`server_config`]'s
/// `client_ca`): the principal is the name given for the certificate's SHA-256 fingerprint,
/// or, with [`MutualTls::any_verified`], `cert:<fingerprint>` for any certificate the CA
/// issued.
#[derive(Default)]
pub struct MutualTls {
    names: HashMap<String, Principal>,
    any_verified: bool,
}

impl MutualTls {
    pub fn new() -> Self {
        Self::default()
    }

    /// The certificate with this SHA-256 fingerprint (hex) is `principal`.
    pub fn with_certificate(mut self, fingerprint: &str, principal: Principal) -> Self {
        self.names.insert(fingerprint.to_ascii_lowercase().replace(':', ""), principal);
        self
    }

    /// Accepts every certificate the CA verified, named by its fingerprint.
    pub fn any_verified(mut self) -> Self {
        self.any_verified = true;
        self
    }
}

#[async_trait]
impl Authenticator for MutualTls {
    async fn authenticate(&self, request: &http::request::Parts) -> Result<Option<Principal>> {
        let Some(cert) = request.extensions.get::<PeerCertificate>() else { return Ok(None) };
        let fingerprint = cert.fingerprint();
        if let Some(p) = self.names.get(&fingerprint) {
            return Ok(Some(p.clone()));
        }
        if self.any_verified {
            return Ok(Some(Principal::named(format!("cert:{fingerprint}"), Vec::new())));
        }
        Err(super::auth::unauthenticated("the client certificate is not one this agent knows"))
    }

    fn challenge(&self) -> &str {
        "mTLS realm=\"a2a\""
    }
}
