//! TLS for broker connections: rustls with the ring provider, trust from a PEM CA bundle,
//! optional client certificate for mutual TLS.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use tokio_rustls::TlsConnector;

use super::config::TlsConfig;
use super::error::AdminError;

/// A connector for `config`.
pub(crate) fn connector(config: &TlsConfig) -> Result<TlsConnector, AdminError> {
    let relaxed = (!config.verify_hostname).then_some(Relaxed::AnyHostName);
    build_connector(config, relaxed)
}

/// A connector for `config` that accepts whatever certificate the server presents, for
/// reading that certificate and comparing it with an expected one (no data is sent on its
/// connections); it still presents the client certificate of `config`.
pub(crate) fn inspecting_connector(config: &TlsConfig) -> Result<TlsConnector, AdminError> {
    build_connector(config, Some(Relaxed::AnyCertificate))
}

fn build_connector(
    config: &TlsConfig,
    relaxed: Option<Relaxed>,
) -> Result<TlsConnector, AdminError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    for certificate in certificates(&config.ca_pem, "CA bundle")? {
        roots
            .add(certificate)
            .map_err(|error| AdminError::Tls(format!("CA certificate refused: {error}")))?;
    }
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|error| AdminError::Tls(error.to_string()))?;
    let verifier: Arc<dyn ServerCertVerifier> = match relaxed {
        None => verifier,
        Some(relaxed) => Arc::new(RelaxedVerifier { verifier, relaxed }),
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| AdminError::Tls(error.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let client = match &config.client_identity_pem {
        None => builder.with_no_client_auth(),
        Some(pem) => {
            let chain = certificates(pem, "client certificate")?;
            let key = PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|error| {
                AdminError::Tls(format!(
                    "no unencrypted private key in the keystore: {error}"
                ))
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|error| AdminError::Tls(format!("client certificate refused: {error}")))?
        }
    };
    Ok(TlsConnector::from(Arc::new(client)))
}

/// The server name to check the broker's certificate against.
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, AdminError> {
    ServerName::try_from(host.to_owned())
        .map_err(|error| AdminError::Tls(format!("invalid broker host {host:?}: {error}")))
}

fn certificates(pem: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, AdminError> {
    let certificates = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| AdminError::Tls(format!("{what}: {error}")))?;
    if certificates.is_empty() {
        return Err(AdminError::Tls(format!("{what}: no certificate found")));
    }
    Ok(certificates)
}

/// What a [`RelaxedVerifier`] accepts that `WebPkiServerVerifier` refuses.
#[derive(Clone, Copy, Debug)]
enum Relaxed {
    /// Any host name (Kafka's empty `ssl.endpoint.identification.algorithm`); the chain is
    /// verified.
    AnyHostName,
    /// Any certificate: nothing of it is verified but the handshake's signatures.
    AnyCertificate,
}

/// Verifies like `WebPkiServerVerifier`, except what `relaxed` accepts.
#[derive(Debug)]
struct RelaxedVerifier {
    verifier: Arc<WebPkiServerVerifier>,
    relaxed: Relaxed,
}

impl ServerCertVerifier for RelaxedVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Relaxed::AnyCertificate = self.relaxed {
            return Ok(ServerCertVerified::assertion());
        }
        match self.verifier.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.verifier.supported_verify_schemes()
    }
}
