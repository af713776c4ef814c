//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677): the client side of the exchange, and
//! the SCRAM-SHA-512 salted password the broker stores for a credential the user operator sets.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use rand::Rng;
use sha2::{Digest, Sha256, Sha512};

use super::error::AdminError;

/// Fewest iterations Kafka accepts for SCRAM-SHA-512.
pub const MIN_ITERATIONS: i32 = 4096;

/// `Hi(password, salt, iterations)`: PBKDF2 with HMAC-SHA-512.
pub fn salted_password(password: &str, salt: &[u8], iterations: u32) -> Vec<u8> {
    ScramHash::Sha512.salted_password(password, salt, iterations)
}

/// The hash function of a SCRAM mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScramHash {
    /// SHA-256, for `SCRAM-SHA-256`.
    Sha256,
    /// SHA-512, for `SCRAM-SHA-512`.
    Sha512,
}

impl ScramHash {
    /// `Hi(password, salt, iterations)`: PBKDF2 with this hash's HMAC.
    fn salted_password(self, password: &str, salt: &[u8], iterations: u32) -> Vec<u8> {
        match self {
            Self::Sha256 => {
                let mut output = vec![0u8; 32];
                pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, iterations, &mut output);
                output
            }
            Self::Sha512 => {
                let mut output = vec![0u8; 64];
                pbkdf2::pbkdf2_hmac::<Sha512>(password.as_bytes(), salt, iterations, &mut output);
                output
            }
        }
    }

    fn hmac(self, key: &[u8], data: &[u8]) -> Result<Vec<u8>, AdminError> {
        let invalid_key = |error: hmac::digest::InvalidLength| scram_error(&error.to_string());
        Ok(match self {
            Self::Sha256 => {
                let mut mac = Hmac::<Sha256>::new_from_slice(key).map_err(invalid_key)?;
                mac.update(data);
                mac.finalize().into_bytes().to_vec()
            }
            Self::Sha512 => {
                let mut mac = Hmac::<Sha512>::new_from_slice(key).map_err(invalid_key)?;
                mac.update(data);
                mac.finalize().into_bytes().to_vec()
            }
        })
    }

    fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Self::Sha256 => Sha256::digest(data).to_vec(),
            Self::Sha512 => Sha512::digest(data).to_vec(),
        }
    }
}

/// `count` random bytes (salts and nonces).
pub fn random_bytes(count: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; count];
    rand::rng().fill(bytes.as_mut_slice());
    bytes
}

/// One SCRAM authentication in progress.
#[derive(Debug)]
pub(crate) struct ScramClient {
    hash: ScramHash,
    password: String,
    client_nonce: String,
    client_first_bare: String,
    server_signature: Vec<u8>,
}

impl ScramClient {
    /// Starts an exchange for `username` with the mechanism of `hash`.
    pub(crate) fn new(hash: ScramHash, username: &str, password: &str) -> Self {
        Self::with_nonce(hash, username, password, STANDARD.encode(random_bytes(24)))
    }

    fn with_nonce(hash: ScramHash, username: &str, password: &str, client_nonce: String) -> Self {
        let name = username.replace('=', "=3D").replace(',', "=2C");
        Self {
            hash,
            password: password.to_owned(),
            client_first_bare: format!("n={name},r={client_nonce}"),
            client_nonce,
            server_signature: Vec::new(),
        }
    }

    /// The first message to send.
    pub(crate) fn client_first(&self) -> Vec<u8> {
        format!("n,,{}", self.client_first_bare).into_bytes()
    }

    /// Answers the server's challenge with the proof.
    pub(crate) fn client_final(&mut self, server_first: &[u8]) -> Result<Vec<u8>, AdminError> {
        let server_first = std::str::from_utf8(server_first)
            .map_err(|_| scram_error("server-first message is not UTF-8"))?;
        let field = |key: &str| {
            server_first
                .split(',')
                .find_map(|part| part.strip_prefix(key))
                .ok_or_else(|| scram_error(&format!("server-first message lacks {key}")))
        };
        let nonce = field("r=")?;
        if !nonce.starts_with(&self.client_nonce) {
            return Err(scram_error("server nonce does not extend the client nonce"));
        }
        let salt = STANDARD
            .decode(field("s=")?)
            .map_err(|_| scram_error("salt is not base64"))?;
        let iterations: u32 = field("i=")?
            .parse()
            .map_err(|_| scram_error("iteration count is not a number"))?;
        let salted = self.hash.salted_password(&self.password, &salt, iterations);
        let client_key = self.hash.hmac(&salted, b"Client Key")?;
        let stored_key = self.hash.digest(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let signature = self.hash.hmac(&stored_key, auth_message.as_bytes())?;
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(key, sig)| key ^ sig)
            .collect();
        let server_key = self.hash.hmac(&salted, b"Server Key")?;
        self.server_signature = self.hash.hmac(&server_key, auth_message.as_bytes())?;
        Ok(format!("{without_proof},p={}", STANDARD.encode(proof)).into_bytes())
    }

    /// Checks that the server knew the credential too.
    pub(crate) fn verify_server_final(&self, server_final: &[u8]) -> Result<(), AdminError> {
        let text = String::from_utf8_lossy(server_final);
        if let Some(error) = text.strip_prefix("e=") {
            return Err(AdminError::Authentication(error.to_owned()));
        }
        let signature = text
            .strip_prefix("v=")
            .and_then(|value| {
                STANDARD
                    .decode(value.split(',').next().unwrap_or(value))
                    .ok()
            })
            .ok_or_else(|| scram_error("server-final message lacks v="))?;
        if signature == self.server_signature {
            Ok(())
        } else {
            Err(scram_error("server signature does not match"))
        }
    }
}

/// The `PLAIN` mechanism's single message.
pub(crate) fn plain_message(username: &str, password: &str) -> Vec<u8> {
    format!("\0{username}\0{password}").into_bytes()
}

fn scram_error(message: &str) -> AdminError {
    AdminError::Authentication(format!("SCRAM: {message}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Plays the server side of one exchange with the same primitives, for both hashes.
    #[test]
    fn a_client_proof_verifies_on_the_server_side_and_the_server_signature_is_checked() {
        for hash in [ScramHash::Sha256, ScramHash::Sha512] {
            let mut client = ScramClient::new(hash, "us,er=1", "pencil");
            let first = String::from_utf8(client.client_first()).unwrap();
            assert!(first.starts_with("n,,n=us=2Cer=3D1,r="));
            let client_nonce = first.split(",r=").nth(1).unwrap().to_owned();
            let salt = b"saltsaltsalt";
            let server_first = format!("r={client_nonce}srv,s={},i=4096", STANDARD.encode(salt));
            let final_message =
                String::from_utf8(client.client_final(server_first.as_bytes()).unwrap()).unwrap();
            let (without_proof, proof) = final_message.split_once(",p=").unwrap();
            let salted = hash.salted_password("pencil", salt, 4096);
            let stored_key = hash.digest(&hash.hmac(&salted, b"Client Key").unwrap());
            let auth = format!("{},{server_first},{without_proof}", &first[3..]);
            let signature = hash.hmac(&stored_key, auth.as_bytes()).unwrap();
            let client_key: Vec<u8> = STANDARD
                .decode(proof)
                .unwrap()
                .iter()
                .zip(&signature)
                .map(|(p, s)| p ^ s)
                .collect();
            assert_eq!(hash.digest(&client_key), stored_key);
            let server_key = hash.hmac(&salted, b"Server Key").unwrap();
            let server_signature = hash.hmac(&server_key, auth.as_bytes()).unwrap();
            let good = format!("v={}", STANDARD.encode(&server_signature));
            client.verify_server_final(good.as_bytes()).unwrap();
            assert!(client.verify_server_final(b"v=AAAA").is_err());
            assert!(client.verify_server_final(b"e=invalid-proof").is_err());
        }
    }

    /// The SCRAM-SHA-256 example exchange of RFC 7677, section 3.
    #[test]
    fn scram_sha_256_matches_the_rfc_7677_example() {
        let mut client = ScramClient::with_nonce(
            ScramHash::Sha256,
            "user",
            "pencil",
            "rOprNGfwEbeRWgbNEkqO".to_owned(),
        );
        assert_eq!(client.client_first(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
                            s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let client_final = client.client_final(server_first.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(client_final).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        client
            .verify_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
    }

    #[test]
    fn plain_sends_the_user_name_and_password_after_an_empty_authorization_id() {
        assert_eq!(plain_message("alice", "pw"), b"\0alice\0pw");
    }

    #[test]
    fn a_foreign_nonce_is_refused() {
        let mut client = ScramClient::new(ScramHash::Sha512, "user", "pw");
        assert!(client.client_final(b"r=other,s=c2FsdA==,i=4096").is_err());
    }
}
