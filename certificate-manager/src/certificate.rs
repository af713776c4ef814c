//! X.509 certificates as the operator reads them: validity, names, key, and the hash that
//! tells a changed certificate apart.

use std::net::IpAddr;

use rcgen::KeyPair;
use sha1::{Digest, Sha1};
use time::OffsetDateTime;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};

/// Length of the short hash Strimzi puts on pods (`strimzi.io/server-cert-hash`).
const SHORT_THUMBPRINT_LENGTH: usize = 8;

/// Why a certificate could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// The text holds no PEM `CERTIFICATE` block.
    #[error("no PEM certificate found: {0}")]
    NotPem(String),
    /// The DER inside is not an X.509 certificate.
    #[error("not an X.509 certificate: {0}")]
    NotX509(String),
}

impl CertificateError {
    /// Stable reason string for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        "InvalidCertificate"
    }
}

/// The parts of a certificate the lifecycle decisions need, with its DER and PEM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedCertificate {
    der: Vec<u8>,
    not_before: OffsetDateTime,
    not_after: OffsetDateTime,
    subject: String,
    issuer: String,
    dns_names: Vec<String>,
    ip_addresses: Vec<IpAddr>,
    public_key: Vec<u8>,
    is_ca: bool,
}

impl ParsedCertificate {
    /// Reads the first `CERTIFICATE` block of a PEM text.
    pub fn from_pem(text: &[u8]) -> Result<Self, CertificateError> {
        let blocks =
            pem::parse_many(text).map_err(|error| CertificateError::NotPem(error.to_string()))?;
        let block = blocks
            .into_iter()
            .find(|block| block.tag() == "CERTIFICATE")
            .ok_or_else(|| CertificateError::NotPem("no CERTIFICATE block".to_owned()))?;
        Self::from_der(block.contents())
    }

    /// Reads a DER-encoded certificate.
    pub fn from_der(der: &[u8]) -> Result<Self, CertificateError> {
        let (_, certificate) = X509Certificate::from_der(der)
            .map_err(|error| CertificateError::NotX509(error.to_string()))?;
        let validity = certificate.validity();
        let mut dns_names = Vec::new();
        let mut ip_addresses = Vec::new();
        if let Ok(Some(names)) = certificate.subject_alternative_name() {
            for name in &names.value.general_names {
                match name {
                    GeneralName::DNSName(dns) => dns_names.push((*dns).to_owned()),
                    GeneralName::IPAddress(bytes) => {
                        if let Some(address) = ip_from_bytes(bytes) {
                            ip_addresses.push(address);
                        }
                    }
                    _ => {}
                }
            }
        }
        let is_ca = certificate.is_ca();
        Ok(Self {
            der: der.to_vec(),
            not_before: validity.not_before.to_datetime(),
            not_after: validity.not_after.to_datetime(),
            subject: certificate.subject().to_string(),
            issuer: certificate.issuer().to_string(),
            dns_names,
            ip_addresses,
            public_key: certificate.public_key().subject_public_key.data.to_vec(),
            is_ca,
        })
    }

    /// The DER encoding.
    pub fn der(&self) -> &[u8] {
        &self.der
    }

    /// The PEM encoding, as stored in Secrets.
    pub fn to_pem(&self) -> String {
        pem::encode_config(
            &pem::Pem::new("CERTIFICATE", self.der.clone()),
            pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF),
        )
    }

    /// Start of the validity period.
    pub fn not_before(&self) -> OffsetDateTime {
        self.not_before
    }

    /// End of the validity period.
    pub fn not_after(&self) -> OffsetDateTime {
        self.not_after
    }

    /// Subject distinguished name, e.g. `CN=cluster-ca v0, O=io.strimzi`.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// Issuer distinguished name.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// DNS subject alternative names.
    pub fn dns_names(&self) -> &[String] {
        &self.dns_names
    }

    /// IP address subject alternative names.
    pub fn ip_addresses(&self) -> &[IpAddr] {
        &self.ip_addresses
    }

    /// Whether the certificate may sign others (basic constraints `CA:TRUE`).
    pub fn is_ca(&self) -> bool {
        self.is_ca
    }

    /// Whether `key` is the private key of this certificate.
    pub fn matches_key(&self, key: &KeyPair) -> bool {
        self.public_key == key.public_key_raw()
    }

    /// Whether the certificate has expired at `now`.
    pub fn is_expired(&self, now: OffsetDateTime) -> bool {
        self.not_after < now
    }

    /// Whether `now` lies in the last `renewal_days` days of the validity period, when Strimzi
    /// renews a certificate (or warns about a user-supplied one).
    pub fn in_renewal_period(&self, now: OffsetDateTime, renewal_days: u32) -> bool {
        now > self.not_after - time::Duration::days(i64::from(renewal_days))
    }

    /// SHA-1 of the DER as 40 lowercase hex digits, as Strimzi computes certificate thumbprints.
    pub fn thumbprint(&self) -> String {
        Sha1::digest(&self.der)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// The first 8 characters of [`Self::thumbprint`], the hash stub Strimzi puts on pods so a
    /// changed certificate rolls them.
    pub fn short_thumbprint(&self) -> String {
        let mut thumbprint = self.thumbprint();
        thumbprint.truncate(SHORT_THUMBPRINT_LENGTH);
        thumbprint
    }

    /// Whether this certificate's signature verifies with `issuer`'s public key.
    pub fn is_signed_by(&self, issuer: &ParsedCertificate) -> bool {
        let (Ok((_, certificate)), Ok((_, issuer))) = (
            X509Certificate::from_der(&self.der),
            X509Certificate::from_der(&issuer.der),
        ) else {
            return false;
        };
        certificate
            .verify_signature(Some(issuer.public_key()))
            .is_ok()
    }
}

fn ip_from_bytes(bytes: &[u8]) -> Option<IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(bytes).ok().map(IpAddr::from),
        _ => None,
    }
}
