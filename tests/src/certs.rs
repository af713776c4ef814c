//! Throwaway certificates for the test environment: a CA per environment, server
//! certificates for 127.0.0.1/localhost, and client certificates for users.

use std::net::{IpAddr, Ipv4Addr};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose, SanType,
};

use crate::error::TestEnvError;

/// A certificate and its private key, both PEM.
#[derive(Clone, Debug)]
pub struct CertifiedPem {
    /// The certificate.
    pub cert: String,
    /// The PKCS#8 private key.
    pub key: String,
}

/// A certificate authority that lives as long as one test environment.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
    name: String,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("TestCa").finish_non_exhaustive()
    }
}

impl TestCa {
    /// A new self-signed CA with the common name `name`.
    pub fn new(name: &str) -> Result<Self, TestEnvError> {
        let key = KeyPair::generate().map_err(certificate)?;
        let issuer = CertifiedIssuer::self_signed(ca_params(name)?, key).map_err(certificate)?;
        Ok(Self {
            issuer,
            name: name.to_owned(),
        })
    }

    /// A new certificate for the same CA name and key, as a CA renewal leaves it; PEM.
    /// Certificates it signs verify against the original certificate too.
    pub fn renewed_pem(&self) -> Result<String, TestEnvError> {
        let mut params = ca_params(&self.name)?;
        params.serial_number = Some(rcgen::SerialNumber::from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
                .to_be_bytes()
                .to_vec(),
        ));
        let renewed = params.self_signed(self.issuer.key()).map_err(certificate)?;
        Ok(renewed.pem())
    }

    /// The CA certificate, PEM.
    pub fn cert_pem(&self) -> String {
        self.issuer.pem()
    }

    /// The CA's private key, PKCS#8 PEM: for tests that hand the CA to an operator (the
    /// user operator signs user certificates with it, and the broker trusts them).
    pub fn key_pem(&self) -> String {
        self.issuer.key().serialize_pem()
    }

    /// A server certificate for `127.0.0.1`, `localhost` and the extra `dns_names`.
    pub fn server(
        &self,
        common_name: &str,
        dns_names: &[&str],
    ) -> Result<CertifiedPem, TestEnvError> {
        self.server_with_ips(common_name, dns_names, &[])
    }

    /// A server certificate for `127.0.0.1`, `localhost`, the extra `dns_names` and the
    /// extra addresses `ips`.
    pub fn server_with_ips(
        &self,
        common_name: &str,
        dns_names: &[&str],
        ips: &[IpAddr],
    ) -> Result<CertifiedPem, TestEnvError> {
        let mut names = vec!["localhost".to_owned()];
        names.extend(dns_names.iter().map(|name| (*name).to_owned()));
        let mut params = CertificateParams::new(names).map_err(certificate)?;
        params
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        params
            .subject_alt_names
            .extend(ips.iter().copied().map(SanType::IpAddress));
        params.distinguished_name = distinguished_name(common_name, None);
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        self.sign(params)
    }

    /// A client certificate with `CN=<common_name>` and, if given, `O=<organization>`
    /// (Kubernetes reads the organization as the user's group).
    pub fn client(
        &self,
        common_name: &str,
        organization: Option<&str>,
    ) -> Result<CertifiedPem, TestEnvError> {
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(certificate)?;
        params.distinguished_name = distinguished_name(common_name, organization);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(params)
    }

    fn sign(&self, params: CertificateParams) -> Result<CertifiedPem, TestEnvError> {
        let key = KeyPair::generate().map_err(certificate)?;
        let cert = params.signed_by(&key, &self.issuer).map_err(certificate)?;
        Ok(CertifiedPem {
            cert: cert.pem(),
            key: key.serialize_pem(),
        })
    }
}

/// A fresh key pair as (PKCS#8 private key, SubjectPublicKeyInfo public key), both PEM; e.g.
/// for signing and checking service-account tokens.
pub fn key_pair_pem() -> Result<(String, String), TestEnvError> {
    let key = KeyPair::generate().map_err(certificate)?;
    Ok((key.serialize_pem(), key.public_key_pem()))
}

/// The parameters of a self-signed CA certificate named `name`.
fn ca_params(name: &str) -> Result<CertificateParams, TestEnvError> {
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(certificate)?;
    params.distinguished_name = distinguished_name(name, None);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    Ok(params)
}

fn distinguished_name(common_name: &str, organization: Option<&str>) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    if let Some(organization) = organization {
        name.push(DnType::OrganizationName, organization);
    }
    name
}

fn certificate(error: rcgen::Error) -> TestEnvError {
    TestEnvError::Certificate(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_server_and_client_certificates_that_openssl_accepts() {
        let ca = TestCa::new("test-ca").unwrap();
        let server = ca.server("kafka", &["broker.local"]).unwrap();
        let client = ca.client("alice", Some("system:masters")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let ca_file = write("ca.crt", &ca.cert_pem());
        for (name, pem) in [("server.crt", &server.cert), ("client.crt", &client.cert)] {
            let cert = write(name, pem);
            let output = std::process::Command::new("openssl")
                .arg("verify")
                .arg("-CAfile")
                .arg(&ca_file)
                .arg(&cert)
                .output()
                .expect("openssl is installed (apt-get install openssl)");
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let text = std::process::Command::new("openssl")
            .args(["x509", "-noout", "-text", "-in"])
            .arg(write("s.crt", &server.cert))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(text.contains("IP Address:127.0.0.1"), "{text}");
        assert!(text.contains("DNS:broker.local"), "{text}");
        assert!(server.key.contains("PRIVATE KEY"));
    }
}
