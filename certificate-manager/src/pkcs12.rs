//! PKCS#12 key stores and trust stores that Java opens, each protected by a random password.
//!
//! Trusted certificates carry Oracle's trusted-key-usage attribute; without it Java's
//! `KeyStore` silently ignores certificate-only entries of a PKCS#12 file.

use p12_keystore::{Certificate, KeyStore, KeyStoreEntry, PrivateKey, PrivateKeyChain};
use rand::Rng;
use rand::distr::Alphanumeric;
use rcgen::KeyPair;

use crate::certificate::ParsedCertificate;

/// Length of generated store passwords, as Strimzi's password generator uses.
const PASSWORD_LENGTH: usize = 12;

/// Why a store could not be written.
#[derive(Debug, thiserror::Error)]
#[error("writing a PKCS#12 store failed: {0}")]
pub struct Pkcs12Error(String);

impl Pkcs12Error {
    /// Stable reason string for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        "Pkcs12Failed"
    }
}

/// A PKCS#12 file with the password that opens it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pkcs12Store {
    /// The PKCS#12 bytes.
    pub bytes: Vec<u8>,
    /// The store password.
    pub password: String,
}

/// A random alphanumeric store password.
pub fn random_password() -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(PASSWORD_LENGTH)
        .map(char::from)
        .collect()
}

/// A trust store holding `certificates` as trusted entries under their aliases, protected by
/// `password`.
pub fn trust_store<'a>(
    certificates: impl IntoIterator<Item = (&'a str, &'a ParsedCertificate)>,
    password: &str,
) -> Result<Pkcs12Store, Pkcs12Error> {
    let mut store = KeyStore::new();
    for (alias, certificate) in certificates {
        store.add_entry(
            alias,
            KeyStoreEntry::Certificate(to_p12_certificate(certificate)?),
        );
    }
    write(&store, password)
}

/// A key store holding `key` with its certificate `chain` (leaf first) under `alias`, protected
/// by a new random password.
pub fn key_store(
    alias: &str,
    key: &KeyPair,
    chain: &[&ParsedCertificate],
) -> Result<Pkcs12Store, Pkcs12Error> {
    let private_key = PrivateKey::from_der(key.serialized_der())
        .map_err(|error| Pkcs12Error(format!("private key: {error}")))?;
    let certificates = chain
        .iter()
        .map(|certificate| to_p12_certificate(certificate))
        .collect::<Result<Vec<_>, _>>()?;
    let local_key_id = certificates
        .first()
        .map(|leaf| sha1_of(leaf.as_der()))
        .unwrap_or_default();
    let mut store = KeyStore::new();
    store.add_entry(
        alias,
        KeyStoreEntry::PrivateKeyChain(PrivateKeyChain::new(
            local_key_id,
            private_key,
            certificates,
        )),
    );
    write(&store, &random_password())
}

fn write(store: &KeyStore, password: &str) -> Result<Pkcs12Store, Pkcs12Error> {
    let bytes = store
        .writer(password)
        .write()
        .map_err(|error| Pkcs12Error(error.to_string()))?;
    Ok(Pkcs12Store {
        bytes,
        password: password.to_owned(),
    })
}

fn to_p12_certificate(certificate: &ParsedCertificate) -> Result<Certificate, Pkcs12Error> {
    Certificate::from_der(certificate.der())
        .map_err(|error| Pkcs12Error(format!("certificate: {error}")))
}

fn sha1_of(bytes: &[u8]) -> Vec<u8> {
    use sha1::Digest;
    sha1::Sha1::digest(bytes).to_vec()
}
