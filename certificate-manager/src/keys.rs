//! Private keys: generating new ones and reading the PEM that Strimzi or a user stored.
//!
//! Strimzi creates RSA keys (4096 bits for a CA, 2048 for the certificates it signs), signs
//! with SHA-512 and stores keys as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
//! We read PKCS#8 RSA and ECDSA keys, and also PKCS#1 RSA keys (`RSA PRIVATE KEY`) that
//! older tools write, and always write PKCS#8.
//!
//! RSA keys are generated, and PKCS#1 keys converted, with AWS-LC (`aws-lc-rs`): its RSA-4096
//! generation is about as fast as `openssl genrsa` or faster, where the pure-Rust `rsa` crate
//! took about 1.5 s per key (`cargo bench -p strimzi-certificate-manager --bench
//! key_generation` compares them). Each key is CPU work of a second or so: async callers run
//! it off their runtime (e.g. with `strimzi_operator_common::blocking::CpuPool`).

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::KeySize;
use rcgen::{
    KeyPair, PKCS_ECDSA_P256_SHA256, PKCS_RSA_SHA256, PKCS_RSA_SHA384, PKCS_RSA_SHA512,
    PublicKeyData,
};
use rustls_pki_types::PrivatePkcs8KeyDer;

/// The kind of key generated for a new CA or certificate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KeyAlgorithm {
    /// RSA with a 4096-bit modulus, signing with SHA-512: Strimzi's CA keys.
    #[default]
    Rsa4096,
    /// RSA with a 2048-bit modulus, signing with SHA-512: Strimzi's keys of the certificates
    /// a CA signs.
    Rsa2048,
    /// ECDSA on the P-256 curve with SHA-256: much faster to generate, smaller certificates.
    EcdsaP256,
}

impl std::fmt::Display for KeyAlgorithm {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            KeyAlgorithm::Rsa4096 => "RSA-4096",
            KeyAlgorithm::Rsa2048 => "RSA-2048",
            KeyAlgorithm::EcdsaP256 => "ECDSA P-256",
        })
    }
}

/// Why a key could not be generated or read.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The random key generation failed.
    #[error("generating a {algorithm} key failed: {message}")]
    Generation {
        /// Algorithm of the key being generated.
        algorithm: KeyAlgorithm,
        /// What the crypto library said.
        message: String,
    },
    /// The text is not PEM.
    #[error("not a PEM-encoded private key: {0}")]
    NotPem(String),
    /// The PEM holds something other than a supported private key.
    #[error(
        "unsupported private key ({0}); expected a PKCS#8 `PRIVATE KEY` (RSA or ECDSA) or a PKCS#1 `RSA PRIVATE KEY`"
    )]
    Unsupported(String),
}

impl KeyError {
    /// Stable reason string for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            KeyError::Generation { .. } => "KeyGenerationFailed",
            KeyError::NotPem(_) | KeyError::Unsupported(_) => "InvalidPrivateKey",
        }
    }
}

impl KeyAlgorithm {
    /// The algorithm of the keys of the certificates a CA with keys of this algorithm signs:
    /// RSA-2048 under an RSA CA, as Strimzi's; ECDSA P-256 under an ECDSA one.
    pub fn for_signed_certificates(self) -> Self {
        match self {
            KeyAlgorithm::Rsa4096 | KeyAlgorithm::Rsa2048 => KeyAlgorithm::Rsa2048,
            KeyAlgorithm::EcdsaP256 => KeyAlgorithm::EcdsaP256,
        }
    }
}

/// Generates a new key of the given algorithm.
pub fn generate(algorithm: KeyAlgorithm) -> Result<KeyPair, KeyError> {
    let failed = |message: String| KeyError::Generation { algorithm, message };
    let rsa = |size: KeySize| {
        let key =
            aws_lc_rs::rsa::KeyPair::generate(size).map_err(|error| failed(error.to_string()))?;
        let der = key.as_der().map_err(|error| failed(error.to_string()))?;
        rsa_signing_with_sha512(der.as_ref()).map_err(|error| failed(error.to_string()))
    };
    match algorithm {
        KeyAlgorithm::Rsa4096 => rsa(KeySize::Rsa4096),
        KeyAlgorithm::Rsa2048 => rsa(KeySize::Rsa2048),
        KeyAlgorithm::EcdsaP256 => KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)
            .map_err(|error| failed(error.to_string())),
    }
}

/// Reads a private key from PEM: PKCS#8 (RSA or ECDSA P-256/P-384) or PKCS#1 RSA.
pub fn from_pem(text: &[u8]) -> Result<KeyPair, KeyError> {
    let block = pem::parse(text).map_err(|error| KeyError::NotPem(error.to_string()))?;
    let unsupported = |detail: String| KeyError::Unsupported(detail);
    match block.tag() {
        "PRIVATE KEY" => {
            let key = KeyPair::try_from(block.contents())
                .map_err(|error| unsupported(format!("PKCS#8 key not usable: {error}")))?;
            if !is_rsa(&key) {
                return Ok(key);
            }
            rsa_signing_with_sha512(block.contents())
                .map_err(|error| unsupported(format!("PKCS#8 key not usable: {error}")))
        }
        "RSA PRIVATE KEY" => {
            let key = aws_lc_rs::rsa::KeyPair::from_der(block.contents())
                .map_err(|error| unsupported(format!("PKCS#1 key not readable: {error}")))?;
            let der = key
                .as_der()
                .map_err(|error| unsupported(format!("PKCS#1 key not convertible: {error}")))?;
            rsa_signing_with_sha512(der.as_ref())
                .map_err(|error| unsupported(format!("PKCS#1 key not usable: {error}")))
        }
        other => Err(unsupported(format!("PEM block `{other}`"))),
    }
}

/// An RSA key (PKCS#8 DER) that signs with SHA-512, as Strimzi's CAs do.
fn rsa_signing_with_sha512(pkcs8: &[u8]) -> Result<KeyPair, rcgen::Error> {
    KeyPair::from_pkcs8_der_and_sign_algo(&PrivatePkcs8KeyDer::from(pkcs8), &PKCS_RSA_SHA512)
}

/// Whether `key` is an RSA key, whatever hash it signs with.
fn is_rsa(key: &KeyPair) -> bool {
    [&PKCS_RSA_SHA256, &PKCS_RSA_SHA384, &PKCS_RSA_SHA512].contains(&key.algorithm())
}

/// The algorithm of a key we read or generated, if it is one we generate.
pub fn algorithm_of(key: &KeyPair) -> Option<KeyAlgorithm> {
    if key.algorithm() == &PKCS_RSA_SHA512 {
        // The public key of a 4096-bit modulus takes about 550 bytes, of 2048 bits 294.
        Some(if key.subject_public_key_info().len() > 400 {
            KeyAlgorithm::Rsa4096
        } else {
            KeyAlgorithm::Rsa2048
        })
    } else if key.algorithm() == &PKCS_ECDSA_P256_SHA256 {
        Some(KeyAlgorithm::EcdsaP256)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn ecdsa_keys_round_trip_through_pkcs8_pem() {
        let key = generate(KeyAlgorithm::EcdsaP256).unwrap();
        let pem = key.serialize_pem();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        let read = from_pem(pem.as_bytes()).unwrap();
        assert_eq!(read.public_key_raw(), key.public_key_raw());
        assert_eq!(algorithm_of(&read), Some(KeyAlgorithm::EcdsaP256));
    }

    #[test]
    fn rsa_keys_are_4096_bits_and_read_back_from_pkcs8_and_pkcs1() {
        use rcgen::PublicKeyData;
        use x509_parser::prelude::FromDer;
        use x509_parser::public_key::PublicKey;
        use x509_parser::x509::SubjectPublicKeyInfo;

        let key = generate(KeyAlgorithm::Rsa4096).unwrap();
        let pkcs8 = key.serialize_pem();
        assert!(pkcs8.starts_with("-----BEGIN PRIVATE KEY-----"));
        let public_key_info = key.subject_public_key_info();
        let (_, public_key_info) = SubjectPublicKeyInfo::from_der(&public_key_info).unwrap();
        let Ok(PublicKey::RSA(public_key)) = public_key_info.parsed() else {
            panic!("not an RSA public key");
        };
        assert_eq!(public_key.key_size(), 4096);
        assert_eq!(public_key.try_exponent().unwrap(), 65537);
        let read = from_pem(pkcs8.as_bytes()).unwrap();
        assert_eq!(read.public_key_raw(), key.public_key_raw());
        assert_eq!(algorithm_of(&read), Some(KeyAlgorithm::Rsa4096));

        // PKCS#8's PrivateKeyInfo holds the PKCS#1 RSAPrivateKey as its third element.
        let pkcs8_der = key.serialize_der();
        let (_, info) = x509_parser::der_parser::der::parse_der_sequence(&pkcs8_der).unwrap();
        let rsa_private_key = info.as_sequence().unwrap()[2].as_slice().unwrap();
        let pkcs1 = pem::encode(&pem::Pem::new("RSA PRIVATE KEY", rsa_private_key));
        let from_pkcs1 = from_pem(pkcs1.as_bytes()).unwrap();
        assert_eq!(from_pkcs1.public_key_raw(), key.public_key_raw());
        assert_eq!(algorithm_of(&from_pkcs1), Some(KeyAlgorithm::Rsa4096));
    }

    #[test]
    fn certificates_signed_by_an_rsa_ca_get_rsa_2048_keys_signing_with_sha512() {
        assert_eq!(
            KeyAlgorithm::Rsa4096.for_signed_certificates(),
            KeyAlgorithm::Rsa2048
        );
        assert_eq!(
            KeyAlgorithm::EcdsaP256.for_signed_certificates(),
            KeyAlgorithm::EcdsaP256
        );
        let key = generate(KeyAlgorithm::Rsa2048).unwrap();
        assert_eq!(key.algorithm(), &PKCS_RSA_SHA512);
        let read = from_pem(key.serialize_pem().as_bytes()).unwrap();
        assert_eq!(read.algorithm(), &PKCS_RSA_SHA512);
        assert_eq!(algorithm_of(&read), Some(KeyAlgorithm::Rsa2048));
    }

    #[test]
    fn garbage_and_other_pem_blocks_are_refused() {
        assert!(matches!(from_pem(b"not a key"), Err(KeyError::NotPem(_))));
        let certificate = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        let error = from_pem(certificate.as_bytes()).unwrap_err();
        assert!(matches!(error, KeyError::Unsupported(_)));
        assert_eq!(error.reason(), "InvalidPrivateKey");
        let bad_pkcs8 = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        assert!(matches!(
            from_pem(bad_pkcs8.as_bytes()),
            Err(KeyError::Unsupported(_))
        ));
    }
}
