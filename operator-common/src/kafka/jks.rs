//! A reader of Java's own key store format, JKS, as `keytool -storetype JKS` writes it: its
//! trusted-certificate and private-key entries, the store's integrity check and Sun's key
//! protection of private keys.
//!
//! The format: the magic `FEEDFEED`, a version (1 or 2) and an entry count, all big-endian;
//! then each entry as a tag (1 private key, 2 trusted certificate), an alias and a timestamp,
//! followed by the protected key and its certificate chain, or by one certificate (version 2
//! names each certificate's type, `X.509`); last a SHA-1 digest of the password's UTF-16BE
//! bytes, the words `Mighty Aphrodite` and everything before the digest. A private key is
//! an `EncryptedPrivateKeyInfo` whose data is a 20-byte salt, the key XORed with a stream of
//! chained SHA-1 digests of the password and the salt, and a SHA-1 check of the password and
//! the plain key (a PKCS#8 `PrivateKeyInfo`).

use sha1::{Digest, Sha1};

/// The first four bytes of a JKS store.
pub(crate) const MAGIC: [u8; 4] = [0xFE, 0xED, 0xFE, 0xED];
/// The words mixed into the store's integrity digest.
const INTEGRITY_WORDS: &[u8] = b"Mighty Aphrodite";
/// DER of the OID 1.3.6.1.4.1.42.2.17.1.1, Sun's JKS key protection algorithm.
const KEY_PROTECTOR_OID: [u8; 12] = [
    0x06, 0x0A, 0x2B, 0x06, 0x01, 0x04, 0x01, 0x2A, 0x02, 0x11, 0x01, 0x01,
];
const DIGEST_LENGTH: usize = 20;
const PRIVATE_KEY_TAG: u32 = 1;
const TRUSTED_CERTIFICATE_TAG: u32 = 2;

/// Why a JKS store could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JksError {
    /// The store's integrity digest does not match: a wrong password, or a damaged store.
    #[error("the password is wrong or the store is damaged (integrity check failed)")]
    WrongPassword,
    /// A private key could not be recovered with the password.
    #[error("the private key of entry {alias:?} cannot be recovered with the store password")]
    KeyPassword {
        /// The entry's alias.
        alias: String,
    },
    /// The bytes are not a JKS store this reader knows.
    #[error("not a readable JKS store: {0}")]
    Malformed(String),
}

/// A protected private key with its certificate chain, leaf first, all DER.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct JksPrivateKey {
    /// The entry's alias.
    pub(crate) alias: String,
    /// The key as Sun's key protector wrote it.
    protected: Vec<u8>,
    /// The certificate chain, leaf first.
    pub(crate) chain: Vec<Vec<u8>>,
}

impl JksPrivateKey {
    /// The plain key, a PKCS#8 `PrivateKeyInfo` (DER), recovered with `password`.
    pub(crate) fn key_der(&self, password: &str) -> Result<Vec<u8>, JksError> {
        recover_key(&self.protected, password).ok_or_else(|| JksError::KeyPassword {
            alias: self.alias.clone(),
        })
    }
}

impl std::fmt::Debug for JksPrivateKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("JksPrivateKey")
            .field("alias", &self.alias)
            .field("chain", &self.chain.len())
            .finish_non_exhaustive()
    }
}

/// The entries of a JKS store.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct JksStore {
    /// Trusted certificates (DER), in store order.
    pub(crate) trusted_certificates: Vec<Vec<u8>>,
    /// Private keys, in store order.
    pub(crate) private_keys: Vec<JksPrivateKey>,
}

/// Reads `bytes` as a JKS store. With a password the integrity digest is checked; without one,
/// as Java does, it is not.
pub(crate) fn read(bytes: &[u8], password: Option<&str>) -> Result<JksStore, JksError> {
    let body_length = bytes
        .len()
        .checked_sub(DIGEST_LENGTH)
        .ok_or_else(|| JksError::Malformed("shorter than its integrity digest".to_owned()))?;
    let (body, digest) = bytes.split_at(body_length);
    if let Some(password) = password {
        let mut hasher = Sha1::new();
        hasher.update(utf16_be(password));
        hasher.update(INTEGRITY_WORDS);
        hasher.update(body);
        if hasher.finalize().as_slice() != digest {
            return Err(JksError::WrongPassword);
        }
    }
    let mut reader = Reader { bytes: body };
    if reader.take(4)? != MAGIC {
        return Err(JksError::Malformed("no JKS magic number".to_owned()));
    }
    let version = reader.u32()?;
    if version != 1 && version != 2 {
        return Err(JksError::Malformed(format!("unknown version {version}")));
    }
    let count = reader.u32()?;
    let mut store = JksStore::default();
    for _ in 0..count {
        let tag = reader.u32()?;
        let alias = reader.utf()?;
        reader.take(8)?; // creation time
        match tag {
            PRIVATE_KEY_TAG => {
                let protected = reader.sized(4)?.to_vec();
                let chain_length = reader.u32()?;
                let chain = (0..chain_length)
                    .map(|_| reader.certificate(version))
                    .collect::<Result<Vec<_>, _>>()?;
                store.private_keys.push(JksPrivateKey {
                    alias,
                    protected,
                    chain,
                });
            }
            TRUSTED_CERTIFICATE_TAG => {
                store
                    .trusted_certificates
                    .push(reader.certificate(version)?);
            }
            other => {
                return Err(JksError::Malformed(format!(
                    "entry {alias:?} has the unknown tag {other} (secret keys live in JCEKS or PKCS#12 stores)"
                )));
            }
        }
    }
    if !reader.bytes.is_empty() {
        return Err(JksError::Malformed(
            "bytes left after the last entry".to_owned(),
        ));
    }
    Ok(store)
}

/// The plain PKCS#8 key of Sun's protected key `encrypted_info`, `None` when the password
/// does not recover it.
fn recover_key(encrypted_info: &[u8], password: &str) -> Option<Vec<u8>> {
    let mut info = Der(encrypted_info).sequence()?;
    if !info.sequence()?.0.starts_with(&KEY_PROTECTOR_OID) {
        return None;
    }
    let protected = info.octet_string()?;
    let key_length = protected.len().checked_sub(2 * DIGEST_LENGTH)?;
    let (salt, rest) = protected.split_at(DIGEST_LENGTH);
    let (encrypted, check) = rest.split_at(key_length);
    let password = utf16_be(password);
    let mut stream_block = salt.to_vec();
    let mut key = Vec::with_capacity(key_length);
    for chunk in encrypted.chunks(DIGEST_LENGTH) {
        stream_block = Sha1::new()
            .chain_update(&password)
            .chain_update(&stream_block)
            .finalize()
            .to_vec();
        key.extend(
            chunk
                .iter()
                .zip(&stream_block)
                .map(|(byte, mask)| byte ^ mask),
        );
    }
    let expected = Sha1::new()
        .chain_update(&password)
        .chain_update(&key)
        .finalize();
    (expected.as_slice() == check).then_some(key)
}

/// The password as Java's `char`s, big-endian, as the JKS digests take it.
fn utf16_be(password: &str) -> Vec<u8> {
    password.encode_utf16().flat_map(u16::to_be_bytes).collect()
}

/// Big-endian fields of the store, front to back.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8], JksError> {
        if self.bytes.len() < count {
            return Err(JksError::Malformed("cut short".to_owned()));
        }
        let (taken, rest) = self.bytes.split_at(count);
        self.bytes = rest;
        Ok(taken)
    }

    fn u32(&mut self) -> Result<u32, JksError> {
        let bytes = self.take(4)?;
        Ok(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// A length (of `width` bytes, 2 or 4) and that many bytes.
    fn sized(&mut self, width: usize) -> Result<&'a [u8], JksError> {
        let length = self
            .take(width)?
            .iter()
            .fold(0usize, |length, byte| (length << 8) | usize::from(*byte));
        self.take(length)
    }

    /// Java's modified UTF-8 with a two-byte length (`DataOutput.writeUTF`); the aliases
    /// `keytool` writes are plain UTF-8 in it.
    fn utf(&mut self) -> Result<String, JksError> {
        String::from_utf8(self.sized(2)?.to_vec())
            .map_err(|_| JksError::Malformed("an alias is not UTF-8".to_owned()))
    }

    fn certificate(&mut self, version: u32) -> Result<Vec<u8>, JksError> {
        if version == 2 {
            let kind = self.utf()?;
            if kind != "X.509" {
                return Err(JksError::Malformed(format!(
                    "a certificate of type {kind:?}, not X.509"
                )));
            }
        }
        Ok(self.sized(4)?.to_vec())
    }
}

/// DER elements, front to back: just what an `EncryptedPrivateKeyInfo` needs.
struct Der<'a>(&'a [u8]);

impl<'a> Der<'a> {
    fn element(&mut self, tag: u8) -> Option<&'a [u8]> {
        let (&found, rest) = self.0.split_first()?;
        if found != tag {
            return None;
        }
        let (&first, mut rest) = rest.split_first()?;
        let length = if first < 0x80 {
            usize::from(first)
        } else {
            let width = usize::from(first & 0x7F);
            if width == 0 || width > 4 || rest.len() < width {
                return None;
            }
            let (bytes, after) = rest.split_at(width);
            rest = after;
            bytes
                .iter()
                .fold(0usize, |length, byte| (length << 8) | usize::from(*byte))
        };
        if rest.len() < length {
            return None;
        }
        let (content, after) = rest.split_at(length);
        self.0 = after;
        Some(content)
    }

    fn sequence(&mut self) -> Option<Der<'a>> {
        self.element(0x30).map(Der)
    }

    fn octet_string(&mut self) -> Option<&'a [u8]> {
        self.element(0x04)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A store with one trusted certificate entry, built by hand as `keytool` lays it out.
    fn store_with_certificate(password: &str, certificate: &[u8]) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend(2u32.to_be_bytes());
        bytes.extend(1u32.to_be_bytes());
        bytes.extend(TRUSTED_CERTIFICATE_TAG.to_be_bytes());
        bytes.extend(2u16.to_be_bytes());
        bytes.extend(b"ca");
        bytes.extend(0u64.to_be_bytes());
        bytes.extend(5u16.to_be_bytes());
        bytes.extend(b"X.509");
        bytes.extend(u32::try_from(certificate.len()).unwrap().to_be_bytes());
        bytes.extend(certificate);
        let digest = Sha1::new()
            .chain_update(utf16_be(password))
            .chain_update(INTEGRITY_WORDS)
            .chain_update(&bytes)
            .finalize();
        bytes.extend(digest);
        bytes
    }

    #[test]
    fn a_trusted_certificate_is_read_and_the_integrity_digest_checks_the_password() {
        let bytes = store_with_certificate("changeit", b"DER");
        let store = read(&bytes, Some("changeit")).unwrap();
        assert_eq!(store.trusted_certificates, [b"DER".to_vec()]);
        assert!(store.private_keys.is_empty());
        assert_eq!(read(&bytes, Some("wrong")), Err(JksError::WrongPassword));
        assert_eq!(read(&bytes, None).unwrap(), store);
    }

    #[test]
    fn a_cut_store_is_malformed_not_a_panic() {
        let bytes = store_with_certificate("changeit", b"DER");
        for length in 0..bytes.len() - DIGEST_LENGTH {
            let mut cut = bytes[..length].to_vec();
            cut.extend([0u8; DIGEST_LENGTH]);
            assert!(matches!(read(&cut, None), Err(JksError::Malformed(_))));
        }
    }

    #[test]
    fn a_protected_key_is_recovered_only_with_its_password() {
        let password = utf16_be("secret");
        let key = b"a PKCS#8 key longer than one SHA-1 block".to_vec();
        let salt = [7u8; DIGEST_LENGTH];
        let mut stream_block = salt.to_vec();
        let mut protected = salt.to_vec();
        for chunk in key.chunks(DIGEST_LENGTH) {
            stream_block = Sha1::new()
                .chain_update(&password)
                .chain_update(&stream_block)
                .finalize()
                .to_vec();
            protected.extend(chunk.iter().zip(&stream_block).map(|(b, m)| b ^ m));
        }
        protected.extend(
            Sha1::new()
                .chain_update(&password)
                .chain_update(&key)
                .finalize(),
        );
        let mut algorithm = KEY_PROTECTOR_OID.to_vec();
        algorithm.extend([0x05, 0x00]);
        let mut inner = vec![0x30, u8::try_from(algorithm.len()).unwrap()];
        inner.extend(algorithm);
        inner.extend([0x04, u8::try_from(protected.len()).unwrap()]);
        inner.extend(protected);
        let mut info = vec![0x30, u8::try_from(inner.len()).unwrap()];
        info.extend(inner);
        assert_eq!(recover_key(&info, "secret"), Some(key));
        assert_eq!(recover_key(&info, "Secret"), None);
    }
}
