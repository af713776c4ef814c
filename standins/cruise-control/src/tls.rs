//! HTTPS for the REST API: the certificate and key of `cc-certs/`, no client certificates.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// An acceptor for the PEM certificate chain and PKCS#8 key.
pub fn acceptor(chain_pem: &str, key_pem: &str) -> Result<TlsAcceptor, String> {
    let chain = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| format!("cruise-control.crt: {error}"))?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|error| format!("cruise-control.key: {error}"))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|error| error.to_string())?
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .map_err(|error| format!("cruise-control.crt/.key: {error}"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A TCP listener that completes the TLS handshake before handing a connection to axum; a
/// client failing the handshake is dropped.
pub struct TlsListener {
    /// The TCP listener.
    pub tcp: TcpListener,
    /// The TLS acceptor.
    pub acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, address)) = self.tcp.accept().await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, self.acceptor.accept(stream)).await {
                Ok(Ok(tls)) => return (tls, address),
                Ok(Err(error)) => tracing::debug!(%address, %error, "TLS handshake failed"),
                Err(_) => tracing::debug!(%address, "TLS handshake timed out"),
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}
