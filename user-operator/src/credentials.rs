//! The content of a user's Secret: a certificate issued from the clients CA for `tls` users
//! (kept while it is good, issued again when the CA certificate changed or it is due for
//! renewal inside a maintenance window), and a SCRAM-SHA-512 password for `scram-sha-512`
//! users (the one the user chose, the one already stored, or a new one).
//!
//! The CA is only read here, never created or changed: that is the cluster operator's job.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use strimzi_certificate_manager::authority::{self, CaAction, CaKind, CaSettings};
use strimzi_certificate_manager::keys::KeyAlgorithm;
use strimzi_certificate_manager::leaf::{self, ExistingLeaf, IssueContext, IssueReason, LeafSpec};
use time::OffsetDateTime;

use crate::config::CaConfig;
use crate::error::UserError;
use crate::model::{self, CA_CERT_KEY, PASSWORD_KEY, SASL_JAAS_CONFIG_KEY};

/// Data key prefix of the user certificate in its Secret (`user.crt`, `user.key`, ...).
const USER_ENTRY: &str = "user";

/// A `tls` user's Secret data and why its certificate is what it is.
#[derive(Debug)]
pub struct UserCertificate {
    /// `ca.crt`, `user.crt`, `user.key` and, with PKCS#12 stores, `user.p12` and
    /// `user.password`.
    pub data: BTreeMap<String, ByteString>,
    /// [`IssueReason::Reused`] when the stored certificate was kept.
    pub reason: IssueReason,
}

/// Issues or reuses the certificate of user `name` from the clients CA in `ca_cert` and
/// `ca_key`. CPU-heavy when a key is generated: run it off the async workers.
pub fn user_certificate(
    ca: &CaConfig,
    ca_cert: Option<&Secret>,
    ca_key: Option<&Secret>,
    name: &str,
    days: (Option<u32>, Option<u32>),
    existing: Option<&Secret>,
    now: OffsetDateTime,
) -> Result<UserCertificate, UserError> {
    let missing = |secret: &str| {
        UserError::InvalidCertificate(format!(
            "The clients CA Secret {}/{secret} does not exist; it is created by the cluster operator (or by you, with generateCertificateAuthority: false)",
            ca.namespace
        ))
    };
    let ca_cert = ca_cert.ok_or_else(|| missing(&ca.cert_secret))?;
    let ca_key = ca_key.ok_or_else(|| missing(&ca.key_secret))?;
    let settings = CaSettings {
        generate: false,
        validity_days: days.0.unwrap_or(ca.validity_days),
        renewal_days: days.1.unwrap_or(ca.renewal_days),
        key_algorithm: KeyAlgorithm::Rsa4096,
        pkcs12: ca.pkcs12,
        ..CaSettings::default()
    };
    let authority = authority::read_signer(CaKind::Clients, &settings, ca_cert, ca_key, now)
        .map_err(|error| UserError::InvalidCertificate(format!("The clients CA: {error}")))?;
    let ca_pem: Vec<u8> = ca_cert
        .data
        .as_ref()
        .and_then(|data| data.get(CA_CERT_KEY))
        .map(|value| value.0.clone())
        .unwrap_or_default();
    let context = IssueContext {
        now,
        window_open: ca.maintenance_windows.contains(now),
        ca_action: &CaAction::Keep,
        trust_pending: false,
    };
    let spec = LeafSpec::user(name);
    let stored_ca = existing
        .and_then(|secret| secret.data.as_ref())
        .and_then(|data| data.get(CA_CERT_KEY));
    let issued = match existing {
        // The clients CA certificate changed since the stored one was issued: issue again,
        // as Strimzi does, so that the Secret's ca.crt and user.crt belong together.
        Some(_) if stored_ca.map(|value| &value.0) != Some(&ca_pem) => {
            leaf::issue(&authority, &spec, IssueReason::CaRenewed, &context)
        }
        Some(secret) => leaf::issue_or_reuse(
            &authority,
            &spec,
            Some(&ExistingLeaf::from_secret(secret, USER_ENTRY)),
            &context,
        ),
        None => leaf::issue_or_reuse(&authority, &spec, None, &context),
    }
    .map_err(|error| UserError::InvalidCertificate(error.to_string()))?;
    let mut data = issued.secret_data();
    data.insert(CA_CERT_KEY.to_owned(), ByteString(ca_pem));
    Ok(UserCertificate {
        data,
        reason: issued.reason,
    })
}

/// Where a SCRAM user's password came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PasswordOrigin {
    /// The Secret the KafkaUser names.
    Chosen,
    /// The user's existing Secret.
    Stored,
    /// Generated now.
    Generated,
}

/// The password of a SCRAM user: read from `chosen` (the Secret the KafkaUser names, already
/// fetched, with its key), else the one in the user's `existing` Secret, else a new one of
/// `length` characters.
pub fn scram_password(
    chosen: Option<(&str, Option<&Secret>, &str)>,
    existing: Option<&Secret>,
    length: usize,
) -> Result<(String, PasswordOrigin), UserError> {
    if let Some((secret_name, secret, key)) = chosen {
        let secret = secret.ok_or_else(|| {
            UserError::InvalidResource(format!(
                "Secret {secret_name} with the requested password does not exist"
            ))
        })?;
        let bytes = secret
            .data
            .as_ref()
            .and_then(|data| data.get(key))
            .ok_or_else(|| {
                UserError::InvalidResource(format!(
                    "Secret {secret_name} has no key {key} with the requested password"
                ))
            })?;
        let password =
            model::read_password(&bytes.0, &format!("Key {key} of Secret {secret_name}"))
                .map_err(|error| UserError::InvalidResource(error.to_string()))?;
        return Ok((password, PasswordOrigin::Chosen));
    }
    match model::stored_password(existing)? {
        Some(password) => Ok((password, PasswordOrigin::Stored)),
        None => Ok((model::generate_password(length), PasswordOrigin::Generated)),
    }
}

/// A SCRAM user's Secret data: `password` and `sasl.jaas.config`.
pub fn scram_data(user: &str, password: &str) -> BTreeMap<String, ByteString> {
    BTreeMap::from([
        (
            PASSWORD_KEY.to_owned(),
            ByteString(password.as_bytes().to_vec()),
        ),
        (
            SASL_JAAS_CONFIG_KEY.to_owned(),
            ByteString(model::sasl_jaas_config(user, password).into_bytes()),
        ),
    ])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use strimzi_certificate_manager::certificate::ParsedCertificate;
    use strimzi_certificate_manager::maintenance::MaintenanceWindows;

    fn secret(name: &str, data: &[(&str, &[u8])]) -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(key, value)| ((*key).to_owned(), ByteString(value.to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        }
    }

    fn ca_config() -> CaConfig {
        CaConfig {
            cert_secret: "c-clients-ca-cert".into(),
            key_secret: "c-clients-ca".into(),
            namespace: "ns".into(),
            validity_days: 365,
            renewal_days: 30,
            pkcs12: false,
            maintenance_windows: MaintenanceWindows::default(),
        }
    }

    /// CA Secrets of a new ECDSA clients CA (fast), as the cluster operator writes them.
    fn clients_ca(now: OffsetDateTime) -> (Secret, Secret) {
        let settings = CaSettings {
            key_algorithm: KeyAlgorithm::EcdsaP256,
            ..CaSettings::default()
        };
        let reconciled =
            authority::reconcile(CaKind::Clients, "c", &settings, None, None, now, true).unwrap();
        (
            reconciled.cert_secret.unwrap(),
            reconciled.key_secret.unwrap(),
        )
    }

    #[test]
    fn a_missing_ca_secret_is_named() {
        let error = user_certificate(
            &ca_config(),
            None,
            None,
            "alice",
            (None, None),
            None,
            OffsetDateTime::now_utc(),
        )
        .unwrap_err();
        assert!(
            matches!(&error, UserError::InvalidCertificate(message) if message.contains("ns/c-clients-ca-cert")),
            "{error:?}"
        );
    }

    #[test]
    fn a_certificate_is_kept_until_the_ca_certificate_changes() {
        let now = OffsetDateTime::now_utc();
        let (cert, key) = clients_ca(now);
        let config = ca_config();
        // Issuing a first certificate generates an RSA-2048 key: once, here.
        let first = user_certificate(
            &config,
            Some(&cert),
            Some(&key),
            "alice",
            (None, None),
            None,
            now,
        )
        .unwrap();
        assert_eq!(first.reason, IssueReason::Missing);
        let issued = ParsedCertificate::from_pem(&first.data["user.crt"].0).unwrap();
        assert!(
            issued.subject().contains("CN=alice"),
            "{}",
            issued.subject()
        );
        let stored = Secret {
            data: Some(first.data.clone()),
            ..Secret::default()
        };
        let again = user_certificate(
            &config,
            Some(&cert),
            Some(&key),
            "alice",
            (None, None),
            Some(&stored),
            now,
        )
        .unwrap();
        assert_eq!(again.reason, IssueReason::Reused);
        assert_eq!(again.data, first.data);

        // The same CA key with a new certificate: the user certificate is issued again.
        let mut renewed = cert.clone();
        let forced = renewed
            .metadata
            .annotations
            .get_or_insert_with(Default::default);
        forced.insert("strimzi.io/force-renew".into(), "true".into());
        let settings = CaSettings {
            key_algorithm: KeyAlgorithm::EcdsaP256,
            ..CaSettings::default()
        };
        let later = now + time::Duration::seconds(5);
        let renewed = authority::reconcile(
            CaKind::Clients,
            "c",
            &settings,
            Some(&renewed),
            Some(&key),
            later,
            true,
        )
        .unwrap();
        let renewed_cert = renewed.cert_secret.unwrap();
        let reissued = user_certificate(
            &config,
            Some(&renewed_cert),
            Some(&key),
            "alice",
            (None, None),
            Some(&stored),
            later,
        )
        .unwrap();
        assert_eq!(reissued.reason, IssueReason::CaRenewed);
        assert_eq!(
            reissued.data["ca.crt"],
            renewed_cert.data.as_ref().unwrap()["ca.crt"]
        );
    }

    #[test]
    fn passwords_come_from_the_chosen_secret_then_the_stored_one() {
        let chosen = secret("pw", &[("p", b"chosen")]);
        let stored = secret("alice", &[(PASSWORD_KEY, b"stored")]);
        let (password, origin) =
            scram_password(Some(("pw", Some(&chosen), "p")), Some(&stored), 8).unwrap();
        assert_eq!(
            (password.as_str(), origin),
            ("chosen", PasswordOrigin::Chosen)
        );
        let (password, origin) = scram_password(None, Some(&stored), 8).unwrap();
        assert_eq!(
            (password.as_str(), origin),
            ("stored", PasswordOrigin::Stored)
        );
        let (password, origin) = scram_password(None, None, 8).unwrap();
        assert_eq!((password.len(), origin), (8, PasswordOrigin::Generated));
        for (secret, key) in [(None, "p"), (Some(&chosen), "other")] {
            let error = scram_password(Some(("pw", secret, key)), None, 8).unwrap_err();
            assert!(matches!(error, UserError::InvalidResource(_)), "{error:?}");
        }
        let data = scram_data("alice", "pw");
        assert_eq!(data[PASSWORD_KEY].0, b"pw");
        assert!(String::from_utf8_lossy(&data[SASL_JAAS_CONFIG_KEY].0).contains("alice"));
    }
}
