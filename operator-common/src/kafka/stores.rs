//! Trust stores and key stores as Kafka's Java client opens them: PKCS#12 and JKS files with
//! their password, and PEM files (whose password is ignored). The format is told by the
//! content, not by the file name. What a store holds comes out as PEM for [`super::TlsConfig`].
//!
//! As Java's trust manager does, a trust store trusts its trusted-certificate entries and the
//! leaf certificate of each private-key entry. A key store must hold exactly one private key
//! with its certificate chain.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use p12_keystore::{KeyStore, KeyStoreEntry, Pkcs12Archive, Pkcs12ImportPolicy};

use super::error::AdminError;
use super::jks::{self, JksError};

/// The first four bytes of a JCEKS store, which this reader refuses by name.
const JCEKS_MAGIC: [u8; 4] = [0xCE, 0xCE, 0xCE, 0xCE];
/// The tag of a DER `SEQUENCE`, the first byte of a PKCS#12 file.
const DER_SEQUENCE: u8 = 0x30;

/// A store file, read and told apart by its content.
pub(crate) struct StoreFile {
    variable: String,
    location: String,
    password_variable: String,
    content: StoreContent,
}

enum StoreContent {
    Pem(String),
    Pkcs12(Vec<u8>),
    Jks(Vec<u8>),
}

impl StoreFile {
    /// Reads the file at `location`, named by the setting `variable`; `password_variable` names
    /// the setting of its password in error messages.
    pub(crate) fn read(
        variable: &str,
        location: &str,
        password_variable: &str,
    ) -> Result<Self, AdminError> {
        let error = |allowed: String| invalid(variable, location, &allowed);
        if location.is_empty() {
            return Err(error("the path of a PEM, PKCS#12 or JKS file".to_owned()));
        }
        let bytes = std::fs::read(location)
            .map_err(|io| error(format!("a readable PEM, PKCS#12 or JKS file ({io})")))?;
        let content = if bytes.starts_with(&jks::MAGIC) {
            StoreContent::Jks(bytes)
        } else if bytes.starts_with(&JCEKS_MAGIC) {
            return Err(error(
                "a PEM, PKCS#12 or JKS file, not a JCEKS store (convert it with keytool -importkeystore -deststoretype PKCS12)".to_owned(),
            ));
        } else if bytes.first() == Some(&DER_SEQUENCE) {
            StoreContent::Pkcs12(bytes)
        } else {
            match String::from_utf8(bytes) {
                Ok(text) if text.contains("-----BEGIN ") => StoreContent::Pem(text),
                _ => {
                    return Err(error(
                        "a PEM, PKCS#12 or JKS file (this file is none of them)".to_owned(),
                    ));
                }
            }
        };
        Ok(Self {
            variable: variable.to_owned(),
            location: location.to_owned(),
            password_variable: password_variable.to_owned(),
            content,
        })
    }

    /// Whether the file is PEM, which needs no password.
    pub(crate) fn is_pem(&self) -> bool {
        matches!(self.content, StoreContent::Pem(_))
    }

    /// The certificates the store trusts, PEM. Without a password a PKCS#12 store is opened
    /// with the empty one, and a JKS store is read without its integrity check (as Java does).
    pub(crate) fn trusted_certificates_pem(
        &self,
        password: Option<&str>,
    ) -> Result<String, AdminError> {
        let certificates = match &self.content {
            StoreContent::Pem(text) => return Ok(text.clone()),
            StoreContent::Pkcs12(bytes) => {
                let archive = Pkcs12Archive::from_pkcs12(bytes, password.unwrap_or(""))
                    .map_err(|error| self.pkcs12_error(&error, password))?;
                let is_key_leaf = |id: &Option<Vec<u8>>| {
                    id.as_ref().is_some_and(|id| {
                        archive
                            .keys
                            .iter()
                            .any(|key| key.local_key_id.as_ref().is_some_and(|own| own.0 == *id))
                    })
                };
                let trusted: Vec<Vec<u8>> = archive
                    .certs
                    .iter()
                    .filter(|bag| bag.trusted || is_key_leaf(&bag.local_key_id))
                    .map(|bag| bag.cert.as_der().to_vec())
                    .collect();
                if trusted.is_empty() && !archive.certs.is_empty() {
                    return Err(self.error(
                        "a PKCS#12 trust store whose certificates are marked trusted as Java \
                         requires (this one has certificates without that mark, as `openssl \
                         pkcs12 -export` writes them without `-jdktrust anyExtendedKeyUsage`; \
                         Java ignores them too)",
                    ));
                }
                trusted
            }
            StoreContent::Jks(bytes) => {
                let store = jks::read(bytes, password).map_err(|error| self.jks_error(&error))?;
                let mut trusted = store.trusted_certificates;
                trusted.extend(
                    store
                        .private_keys
                        .into_iter()
                        .filter_map(|key| key.chain.into_iter().next()),
                );
                trusted
            }
        };
        if certificates.is_empty() {
            return Err(self.error("a trust store holding at least one certificate"));
        }
        Ok(certificates
            .iter()
            .map(|der| pem_block("CERTIFICATE", der))
            .collect())
    }

    /// The store's private key and certificate chain, PEM (chain first, leaf on top).
    pub(crate) fn identity_pem(&self, password: &str) -> Result<String, AdminError> {
        let (key, chain) = match &self.content {
            StoreContent::Pem(text) => return Ok(text.clone()),
            StoreContent::Pkcs12(bytes) => {
                let store = KeyStore::from_pkcs12(bytes, password, Pkcs12ImportPolicy::Strict)
                    .map_err(|error| self.pkcs12_error(&error, Some(password)))?;
                let mut keys = store.entries().filter_map(|(_, entry)| match entry {
                    KeyStoreEntry::PrivateKeyChain(chain) => Some(chain),
                    _ => None,
                });
                let (Some(chain), None) = (keys.next(), keys.next()) else {
                    return Err(self.one_key_error());
                };
                (
                    chain.key().as_der().to_vec(),
                    chain
                        .certs()
                        .iter()
                        .map(|certificate| certificate.as_der().to_vec())
                        .collect::<Vec<_>>(),
                )
            }
            StoreContent::Jks(bytes) => {
                let store =
                    jks::read(bytes, Some(password)).map_err(|error| self.jks_error(&error))?;
                let mut keys = store.private_keys.into_iter();
                let (Some(key), None) = (keys.next(), keys.next()) else {
                    return Err(self.one_key_error());
                };
                let key_der = key
                    .key_der(password)
                    .map_err(|error| self.jks_error(&error))?;
                (key_der, key.chain)
            }
        };
        if chain.is_empty() {
            return Err(self.error("a key store whose private key has its certificate chain"));
        }
        let mut pem: String = chain
            .iter()
            .map(|der| pem_block("CERTIFICATE", der))
            .collect();
        pem.push_str(&pem_block("PRIVATE KEY", &key));
        Ok(pem)
    }

    fn pkcs12_error(
        &self,
        error: &p12_keystore::error::Error,
        password: Option<&str>,
    ) -> AdminError {
        match (error, password) {
            (p12_keystore::error::Error::MacError(_), None) => self.error(&format!(
                "a PKCS#12 store that opens without a password; set {} to its password",
                self.password_variable
            )),
            (p12_keystore::error::Error::MacError(_), Some(_)) => self.error(&format!(
                "a PKCS#12 store that {} opens (the password is wrong or the store is damaged: integrity check failed)",
                self.password_variable
            )),
            (other, _) => self.error(&format!("a readable PKCS#12 store ({other})")),
        }
    }

    fn jks_error(&self, error: &JksError) -> AdminError {
        match error {
            JksError::WrongPassword | JksError::KeyPassword { .. } => self.error(&format!(
                "a JKS store that {} opens ({error})",
                self.password_variable
            )),
            JksError::Malformed(_) => self.error(&error.to_string()),
        }
    }

    fn one_key_error(&self) -> AdminError {
        self.error("a key store holding exactly one private key with its certificate chain")
    }

    fn error(&self, allowed: &str) -> AdminError {
        invalid(&self.variable, &self.location, allowed)
    }
}

/// `der` as one PEM block labelled `label`.
fn pem_block(label: &str, der: &[u8]) -> String {
    let encoded = STANDARD.encode(der);
    let mut pem = format!("-----BEGIN {label}-----\n");
    for line in encoded.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {label}-----\n"));
    pem
}

fn invalid(variable: &str, value: &str, allowed: &str) -> AdminError {
    AdminError::InvalidConfig {
        variable: variable.to_owned(),
        value: value.to_owned(),
        allowed: allowed.to_owned(),
    }
}
