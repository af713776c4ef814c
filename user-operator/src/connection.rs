//! How the user operator's admin client reaches Kafka, as Strimzi's does: the bootstrap
//! servers; TLS trusting the cluster CA certificate when `STRIMZI_CLUSTER_CA_CERT_SECRET_NAME`
//! names its Secret; mutual TLS with the certificate in the Secret that
//! `STRIMZI_EO_KEY_SECRET_NAME` names; then the properties of
//! `STRIMZI_KAFKA_ADMIN_CLIENT_CONFIGURATION`, which may switch to SASL.
//!
//! Supported properties: `security.protocol`, `sasl.mechanism` (`SCRAM-SHA-512`, `PLAIN`),
//! `sasl.jaas.config` (its `username` and `password`), `ssl.endpoint.identification.algorithm`,
//! `request.timeout.ms` and `default.api.timeout.ms`. Others are reported back so that the
//! binary can log that they are ignored.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use strimzi_operator_common::kafka::{
    AdminConfig, SaslConfig, SaslCredentials, SaslMechanism, SecurityProtocol, TlsConfig,
};

use crate::config::{ConfigError, KAFKA_ADMIN_CLIENT_CONFIGURATION, KafkaConnection};

/// Data key prefixes of the operator's certificate in its Secret, in the order they are
/// looked for: Strimzi's entity user operator, then a generic entity operator certificate.
const OPERATOR_CERTIFICATE_ENTRIES: [&str; 2] = ["entity-user-operator", "entity-operator"];

/// The admin client configuration, and the admin client properties that were ignored.
pub fn admin_config(
    connection: &KafkaConnection,
    cluster_ca: Option<&Secret>,
    operator_key: Option<&Secret>,
) -> Result<(AdminConfig, Vec<String>), ConfigError> {
    let mut config = AdminConfig::plaintext(&connection.bootstrap_servers);
    config.client_id = crate::model::OPERATOR_NAME.to_owned();
    if let Some(secret) = cluster_ca {
        let ca_pem = text(secret, "ca.crt")?;
        let client_identity_pem = match operator_key {
            Some(secret) => Some(identity(secret)?),
            None => None,
        };
        config.security_protocol = SecurityProtocol::Ssl;
        config.tls = Some(TlsConfig {
            ca_pem,
            client_identity_pem,
            verify_hostname: true,
        });
    }
    let mut ignored = Vec::new();
    let mut mechanism = None;
    let mut credentials = None;
    for (key, value) in &connection.admin_properties {
        match key.as_str() {
            "security.protocol" => {
                config.security_protocol = SecurityProtocol::from_name(value)
                    .ok_or_else(|| invalid(key, value, SecurityProtocol::EXPECTED))?;
            }
            "sasl.mechanism" => {
                mechanism =
                    Some(SaslMechanism::from_name(value).ok_or_else(|| {
                        invalid(key, value, "SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN")
                    })?);
            }
            "sasl.jaas.config" => {
                let field = |name: &str| {
                    let start = value.find(&format!("{name}=\""))? + name.len() + 2;
                    let end = value[start..].find('"')? + start;
                    Some(value[start..end].to_owned())
                };
                credentials = Some(field("username").zip(field("password")).ok_or_else(|| {
                    invalid(
                        key,
                        strimzi_operator_common::redact::REDACTED,
                        "a JAAS login module line with username=\"...\" and password=\"...\"",
                    )
                })?);
            }
            "ssl.endpoint.identification.algorithm" => {
                if let Some(tls) = config.tls.as_mut() {
                    tls.verify_hostname = value.eq_ignore_ascii_case("https");
                }
            }
            "request.timeout.ms" => config.request_timeout = millis(key, value)?,
            "default.api.timeout.ms" => config.operation_timeout = millis(key, value)?,
            _ => ignored.push(key.clone()),
        }
    }
    if let Some((username, password)) = credentials {
        config.sasl = Some(SaslConfig::Password(SaslCredentials {
            mechanism: mechanism.unwrap_or(SaslMechanism::ScramSha512),
            username,
            password,
        }));
    }
    if config.security_protocol.uses_tls() && config.tls.is_none() {
        return Err(invalid(
            "security.protocol",
            "SSL",
            "STRIMZI_CLUSTER_CA_CERT_SECRET_NAME to name the Secret with the cluster CA certificate",
        ));
    }
    if config.security_protocol.uses_sasl() && config.sasl.is_none() {
        return Err(invalid(
            "sasl.jaas.config",
            "",
            "SASL credentials when security.protocol uses SASL",
        ));
    }
    Ok((config, ignored))
}

/// The certificate chain and key of the operator from its Secret, as one PEM.
fn identity(secret: &Secret) -> Result<String, ConfigError> {
    for entry in OPERATOR_CERTIFICATE_ENTRIES {
        let certificate = data(secret, &format!("{entry}.crt"));
        let key = data(secret, &format!("{entry}.key"));
        if let (Some(certificate), Some(key)) = (certificate, key) {
            return Ok(format!("{certificate}{key}"));
        }
    }
    Err(ConfigError::Invalid {
        variable: crate::config::EO_KEY_SECRET_NAME,
        value: secret.name_any(),
        expected: "a Secret with entity-user-operator.crt and entity-user-operator.key (PEM)"
            .to_owned(),
    })
}

fn data(secret: &Secret, key: &str) -> Option<String> {
    secret
        .data
        .as_ref()
        .and_then(|data| data.get(key))
        .and_then(|value| String::from_utf8(value.0.clone()).ok())
}

fn text(secret: &Secret, key: &str) -> Result<String, ConfigError> {
    data(secret, key).ok_or_else(|| ConfigError::Invalid {
        variable: crate::config::CLUSTER_CA_CERT_SECRET_NAME,
        value: secret.name_any(),
        expected: format!("a Secret with a PEM {key}"),
    })
}

fn millis(key: &str, value: &str) -> Result<Duration, ConfigError> {
    value
        .trim()
        .parse()
        .map(Duration::from_millis)
        .map_err(|_| invalid(key, value, "milliseconds"))
}

fn invalid(key: &str, value: &str, expected: &str) -> ConfigError {
    ConfigError::Invalid {
        variable: KAFKA_ADMIN_CLIENT_CONFIGURATION,
        value: format!("{key}={value}"),
        expected: expected.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use k8s_openapi::ByteString;
    use std::collections::BTreeMap;

    fn secret(name: &str, data: &[(&str, &str)]) -> Secret {
        let mut secret = Secret::default();
        secret.metadata.name = Some(name.to_owned());
        secret.data = Some(
            data.iter()
                .map(|(key, value)| ((*key).to_owned(), ByteString(value.as_bytes().to_vec())))
                .collect(),
        );
        secret
    }

    fn connection(properties: &[(&str, &str)]) -> KafkaConnection {
        KafkaConnection {
            bootstrap_servers: "kafka:9091".into(),
            cluster_ca_cert_secret: None,
            operator_key_secret: None,
            admin_properties: properties
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn plaintext_tls_and_mutual_tls() {
        let (config, ignored) = admin_config(&connection(&[]), None, None).unwrap();
        assert_eq!(config.security_protocol, SecurityProtocol::Plaintext);
        assert!(ignored.is_empty());
        let ca = secret("ca", &[("ca.crt", "CA")]);
        let operator = secret(
            "eo",
            &[
                ("entity-user-operator.crt", "CRT"),
                ("entity-user-operator.key", "KEY"),
            ],
        );
        let (config, _) = admin_config(&connection(&[]), Some(&ca), Some(&operator)).unwrap();
        assert_eq!(config.security_protocol, SecurityProtocol::Ssl);
        let tls = config.tls.unwrap();
        assert_eq!(tls.ca_pem, "CA");
        assert_eq!(tls.client_identity_pem.as_deref(), Some("CRTKEY"));
        let error = admin_config(&connection(&[]), Some(&ca), Some(&secret("eo", &[])))
            .unwrap_err()
            .to_string();
        assert!(error.contains("STRIMZI_EO_KEY_SECRET_NAME"), "{error}");
    }

    #[test]
    fn properties_switch_to_sasl_and_unknown_ones_are_reported() {
        let (config, ignored) = admin_config(
            &connection(&[
                ("security.protocol", "SASL_PLAINTEXT"),
                ("sasl.mechanism", "SCRAM-SHA-512"),
                (
                    "sasl.jaas.config",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" password=\"s3cret\";",
                ),
                ("request.timeout.ms", "5000"),
                ("retries", "3"),
            ]),
            None,
            None,
        )
        .unwrap();
        assert_eq!(config.security_protocol, SecurityProtocol::SaslPlaintext);
        let Some(SaslConfig::Password(sasl)) = config.sasl else {
            panic!("expected a user name and password, got {:?}", config.sasl);
        };
        assert_eq!(
            (sasl.username.as_str(), sasl.password.as_str()),
            ("admin", "s3cret")
        );
        assert_eq!(config.request_timeout, Duration::from_secs(5));
        assert_eq!(ignored, vec!["retries".to_owned()]);
        for bad in [
            vec![("security.protocol", "SSL")],
            vec![("security.protocol", "SASL_PLAINTEXT")],
            vec![("sasl.mechanism", "GSSAPI")],
        ] {
            let error = admin_config(&connection(&bad), None, None)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("STRIMZI_KAFKA_ADMIN_CLIENT_CONFIGURATION"),
                "{error}"
            );
        }
    }
}
