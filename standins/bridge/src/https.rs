//! HTTPS on the API port (`http.ssl.enable=true`): the mounted PEM certificate chain and
//! key, the protocols of `http.ssl.enabled.protocols` and the cipher suites of
//! `http.ssl.enabled.cipher.suites` (IANA names, as Java names them), served with rustls. The
//! handshakes run in tasks of their own, so a slow client does not hold up the others.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::version::{TLS12, TLS13};
use rustls::{ServerConfig, SupportedProtocolVersion};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::config::{ConfigError, HttpTls};

/// How long a client may take for its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

fn error(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.to_owned(),
        message: message.into(),
    }
}

/// The rustls server configuration of `tls` from the PEM texts `certificate` and `key`. Pure.
pub fn server_config(
    tls: &HttpTls,
    certificate: &str,
    key: &str,
) -> Result<ServerConfig, ConfigError> {
    let chain = CertificateDer::pem_slice_iter(certificate.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            error(
                "http.ssl.certificate.location",
                format!("{}: {e}", tls.certificate),
            )
        })?;
    if chain.is_empty() {
        return Err(error(
            "http.ssl.certificate.location",
            format!("{}: no PEM certificate", tls.certificate),
        ));
    }
    let private_key = PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|e| {
        error(
            "http.ssl.key.location",
            format!("{}: no unencrypted PEM private key: {e}", tls.key),
        )
    })?;
    let mut provider = rustls::crypto::ring::default_provider();
    if !tls.cipher_suites.is_empty() {
        let wanted = &tls.cipher_suites;
        provider
            .cipher_suites
            .retain(|suite| wanted.contains(&format!("{:?}", suite.suite())));
        if provider.cipher_suites.is_empty() {
            return Err(error(
                "http.ssl.enabled.cipher.suites",
                format!("none of {wanted:?} is a cipher suite the stand-in offers"),
            ));
        }
    }
    let mut versions: Vec<&'static SupportedProtocolVersion> = Vec::new();
    if tls.protocols.is_empty() {
        versions.extend([&TLS13, &TLS12]);
    }
    for protocol in &tls.protocols {
        match protocol.as_str() {
            "TLSv1.3" => versions.push(&TLS13),
            "TLSv1.2" => versions.push(&TLS12),
            other => {
                return Err(error(
                    "http.ssl.enabled.protocols",
                    format!("{other:?} is not TLSv1.2 or TLSv1.3"),
                ));
            }
        }
    }
    ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&versions)
        .map_err(|e| error("http.ssl.enabled.protocols", e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, private_key)
        .map_err(|e| error("http.ssl.key.location", format!("{}: {e}", tls.key)))
}

/// Reads the files of `tls` and builds the acceptor.
pub fn acceptor(tls: &HttpTls) -> Result<TlsAcceptor, ConfigError> {
    let certificate = std::fs::read_to_string(&tls.certificate).map_err(|e| {
        error(
            "http.ssl.certificate.location",
            format!("{}: {e}", tls.certificate),
        )
    })?;
    let key = std::fs::read_to_string(&tls.key)
        .map_err(|e| error("http.ssl.key.location", format!("{}: {e}", tls.key)))?;
    Ok(TlsAcceptor::from(Arc::new(server_config(
        tls,
        &certificate,
        &key,
    )?)))
}

/// A listener whose connections have completed a TLS handshake.
pub struct TlsListener {
    connections: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    /// Accepts on `listener`, handshaking with `acceptor`.
    pub fn new(listener: TcpListener, acceptor: TlsAcceptor) -> io::Result<Self> {
        let local = listener.local_addr()?;
        let (sender, connections) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let Ok((stream, address)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                let (acceptor, sender) = (acceptor.clone(), sender.clone());
                tokio::spawn(async move {
                    let handshake =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
                    if let Ok(Ok(stream)) = handshake {
                        let _ = sender.send((stream, address)).await;
                    }
                });
            }
        });
        Ok(Self { connections, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.connections.recv().await {
            Some(connection) => connection,
            // The accepting task never ends while the listener lives.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls(protocols: &[&str], cipher_suites: &[&str]) -> HttpTls {
        HttpTls {
            certificate: "/opt/strimzi/bridge-certs/s/tls.crt".into(),
            key: "/opt/strimzi/bridge-certs/s/tls.key".into(),
            protocols: protocols.iter().map(|p| (*p).to_owned()).collect(),
            cipher_suites: cipher_suites.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    fn pair() -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        let certificate = params.self_signed(&key).unwrap();
        (certificate.pem(), key.serialize_pem())
    }

    #[test]
    fn the_mounted_pair_protocols_and_suites_configure_the_server() {
        let (certificate, key) = pair();
        assert!(server_config(&tls(&[], &[]), &certificate, &key).is_ok());
        assert!(
            server_config(
                &tls(&["TLSv1.2"], &["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]),
                &certificate,
                &key
            )
            .is_ok()
        );
    }

    #[test]
    fn what_cannot_be_served_names_the_key() {
        let (certificate, key) = pair();
        let cases = [
            (
                tls(&["TLSv1.1"], &[]),
                certificate.as_str(),
                key.as_str(),
                "http.ssl.enabled.protocols: \"TLSv1.1\" is not TLSv1.2 or TLSv1.3",
            ),
            (
                tls(&[], &["TLS_RSA_WITH_RC4_128_MD5"]),
                &certificate,
                &key,
                "http.ssl.enabled.cipher.suites: none of",
            ),
            (
                tls(&[], &[]),
                "",
                &key,
                "http.ssl.certificate.location: /opt/strimzi/bridge-certs/s/tls.crt: no PEM certificate",
            ),
            (
                tls(&[], &[]),
                &certificate,
                &certificate,
                "http.ssl.key.location: /opt/strimzi/bridge-certs/s/tls.key: no unencrypted PEM private key",
            ),
        ];
        for (tls, certificate, key, expected) in cases {
            let error = server_config(&tls, certificate, key)
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(expected), "{error:?} vs {expected:?}");
        }
    }
}
