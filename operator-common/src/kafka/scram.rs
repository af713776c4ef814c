//! SCRAM-SHA-512 (RFC 5802): the client side of the exchange, and the salted password the
//! broker stores for a credential.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use rand::Rng;
use sha2::{Digest, Sha512};

use super::error::AdminError;

type HmacSha512 = Hmac<Sha512>;

/// Fewest iterations Kafka accepts for SCRAM-SHA-512.
pub const MIN_ITERATIONS: i32 = 4096;

/// `Hi(password, salt, iterations)`: PBKDF2 with HMAC-SHA-512.
pub fn salted_password(password: &str, salt: &[u8], iterations: u32) -> Vec<u8> {
    let mut output = vec![0u8; 64];
    pbkdf2::pbkdf2_hmac::<Sha512>(password.as_bytes(), salt, iterations, &mut output);
    output
}

/// `count` random bytes (salts and nonces).
pub fn random_bytes(count: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; count];
    rand::rng().fill(bytes.as_mut_slice());
    bytes
}

fn hmac(key: &[u8], data: &[u8]) -> Result<Vec<u8>, AdminError> {
    let mut mac = HmacSha512::new_from_slice(key)
        .map_err(|error| AdminError::Authentication(error.to_string()))?;
    mac.update(data);
    Ok(mac.finalize().into_bytes().to_vec())
}

/// One SCRAM-SHA-512 authentication in progress.
#[derive(Debug)]
pub(crate) struct ScramClient {
    password: String,
    client_nonce: String,
    client_first_bare: String,
    server_signature: Vec<u8>,
}

impl ScramClient {
    /// Starts an exchange for `username`.
    pub(crate) fn new(username: &str, password: &str) -> Self {
        let client_nonce = STANDARD.encode(random_bytes(24));
        let name = username.replace('=', "=3D").replace(',', "=2C");
        Self {
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
        let salted = salted_password(&self.password, &salt, iterations);
        let client_key = hmac(&salted, b"Client Key")?;
        let stored_key = Sha512::digest(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let signature = hmac(&stored_key, auth_message.as_bytes())?;
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(key, sig)| key ^ sig)
            .collect();
        let server_key = hmac(&salted, b"Server Key")?;
        self.server_signature = hmac(&server_key, auth_message.as_bytes())?;
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

    /// Plays the server side of one exchange with the same primitives.
    #[test]
    fn a_client_proof_verifies_on_the_server_side_and_the_server_signature_is_checked() {
        let mut client = ScramClient::new("us,er=1", "pencil");
        let first = String::from_utf8(client.client_first()).unwrap();
        assert!(first.starts_with("n,,n=us=2Cer=3D1,r="));
        let client_nonce = first.split(",r=").nth(1).unwrap().to_owned();
        let salt = b"saltsaltsalt";
        let server_first = format!("r={client_nonce}srv,s={},i=4096", STANDARD.encode(salt));
        let final_message =
            String::from_utf8(client.client_final(server_first.as_bytes()).unwrap()).unwrap();
        let (without_proof, proof) = final_message.split_once(",p=").unwrap();
        let salted = salted_password("pencil", salt, 4096);
        let stored_key = Sha512::digest(hmac(&salted, b"Client Key").unwrap());
        let auth = format!("{},{server_first},{without_proof}", &first[3..]);
        let signature = hmac(&stored_key, auth.as_bytes()).unwrap();
        let client_key: Vec<u8> = STANDARD
            .decode(proof)
            .unwrap()
            .iter()
            .zip(&signature)
            .map(|(p, s)| p ^ s)
            .collect();
        assert_eq!(Sha512::digest(&client_key), stored_key);
        let server_key = hmac(&salted, b"Server Key").unwrap();
        let server_signature = hmac(&server_key, auth.as_bytes()).unwrap();
        let good = format!("v={}", STANDARD.encode(&server_signature));
        client.verify_server_final(good.as_bytes()).unwrap();
        assert!(client.verify_server_final(b"v=AAAA").is_err());
        assert!(client.verify_server_final(b"e=invalid-proof").is_err());
    }

    #[test]
    fn plain_sends_the_user_name_and_password_after_an_empty_authorization_id() {
        assert_eq!(plain_message("alice", "pw"), b"\0alice\0pw");
    }

    #[test]
    fn a_foreign_nonce_is_refused() {
        let mut client = ScramClient::new("user", "pw");
        assert!(client.client_final(b"r=other,s=c2FsdA==,i=4096").is_err());
    }
}
