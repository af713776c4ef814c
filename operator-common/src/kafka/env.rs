//! How the admin client reaches Kafka, read from the environment variables Strimzi's
//! operators use, as Strimzi 1.2's topic operator reads them for its admin client.
//!
//! | Variable | Meaning |
//! |---|---|
//! | `STRIMZI_KAFKA_BOOTSTRAP_SERVERS` | comma-separated `host:port` list (required) |
//! | `STRIMZI_SECURITY_PROTOCOL` | `PLAINTEXT`, `SSL`, `SASL_PLAINTEXT` or `SASL_SSL`; when empty, `SSL` with `STRIMZI_TLS_ENABLED=true`, else `PLAINTEXT` (as in Strimzi, `STRIMZI_SASL_ENABLED` alone does not make it a SASL protocol); with `STRIMZI_TLS_ENABLED=true` only `SSL` or `SASL_SSL` |
//! | `STRIMZI_TLS_ENABLED` | `true`/`false` (default `false`) |
//! | `STRIMZI_TRUSTSTORE_LOCATION` | the trust store: a PKCS#12 or JKS store (its trusted certificates, e.g. `ca.p12` of the `<cluster>-cluster-ca-cert` Secret) or a PEM file of CA certificates, told apart by content; required with TLS (there is no default trust) |
//! | `STRIMZI_TRUSTSTORE_PASSWORD` | the trust store's password (e.g. `ca.password`); an error without a location; unset, a PKCS#12 store is opened with the empty password and a JKS store without its integrity check; ignored for PEM |
//! | `STRIMZI_KEYSTORE_LOCATION` | the key store for mutual TLS: a PKCS#12 or JKS store with one private key and its chain (e.g. a KafkaUser Secret's `user.p12`), or a PEM file with the chain and an unencrypted key |
//! | `STRIMZI_KEYSTORE_PASSWORD` | the key store's password (e.g. `user.password`); as with Strimzi, a PKCS#12 or JKS key store is used only with it (a warning is logged otherwise); a PEM key store needs none |
//! | `STRIMZI_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM` | `HTTPS` (default) checks the broker's host name; empty skips that check (the chain is still verified) |
//! | `STRIMZI_SASL_ENABLED` | `true`/`false` (default `false`): the SASL settings below are read and checked; they are used when the protocol is `SASL_PLAINTEXT` or `SASL_SSL` (read then even when this is `false`), otherwise a warning says they are not |
//! | `STRIMZI_SASL_MECHANISM` | `plain`, `scram-sha-256` or `scram-sha-512` (case-insensitive) |
//! | `STRIMZI_SASL_USERNAME`, `STRIMZI_SASL_PASSWORD` | SASL credentials, both required unless the custom configuration below is given |
//! | `STRIMZI_SASL_CUSTOM_CONFIG_JSON` | when not blank, replaces the three above: a JSON object (comments allowed) of `sasl.*` properties, not empty; `sasl.mechanism` `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512` with the credentials in `sasl.jaas.config`, or `OAUTHBEARER` with Strimzi OAuth's client (`sasl.login.callback.handler.class` `io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler`) and its options in `sasl.jaas.config`: a static `oauth.access.token`, or the client-credentials grant (`oauth.token.endpoint.uri`, `oauth.client.id`, `oauth.client.secret`, optional `oauth.scope`, `oauth.audience`, `oauth.ssl.truststore.*` for an https endpoint); see [`super::custom_sasl`] for every option read. Anything else is an error naming it |
//!
//! Store passwords and wrong or unreadable stores are errors naming the variable; no store is
//! ever skipped silently.

use super::config::{
    AdminConfig, SaslConfig, SaslCredentials, SaslMechanism, SecurityProtocol, TlsConfig,
    split_list,
};
use super::custom_sasl;
use super::error::AdminError;
use super::stores::StoreFile;

impl AdminConfig {
    /// Reads the `STRIMZI_*` variables of the process environment.
    pub fn from_env() -> Result<Self, AdminError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the `STRIMZI_*` variables through `lookup` (name to value).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, AdminError> {
        let get = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_owned())
                .unwrap_or_default()
        };
        let bootstrap = get("STRIMZI_KAFKA_BOOTSTRAP_SERVERS");
        let servers = split_list(&bootstrap);
        if servers.is_empty() || servers.iter().any(|server| !is_host_port(server)) {
            return Err(invalid(
                "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
                &bootstrap,
                "a comma-separated list of host:port",
            ));
        }
        let tls_enabled = parse_bool("STRIMZI_TLS_ENABLED", &get("STRIMZI_TLS_ENABLED"))?;
        let sasl_enabled = parse_bool("STRIMZI_SASL_ENABLED", &get("STRIMZI_SASL_ENABLED"))?;
        let protocol = get("STRIMZI_SECURITY_PROTOCOL");
        let security_protocol = match protocol.to_ascii_uppercase().as_str() {
            // As Strimzi's: from the TLS switch alone; SASL needs the protocol to say so.
            "" if tls_enabled => SecurityProtocol::Ssl,
            "" => SecurityProtocol::Plaintext,
            name => SecurityProtocol::from_name(name).ok_or_else(|| {
                invalid(
                    "STRIMZI_SECURITY_PROTOCOL",
                    &protocol,
                    SecurityProtocol::EXPECTED,
                )
            })?,
        };
        if tls_enabled && !security_protocol.uses_tls() {
            return Err(invalid(
                "STRIMZI_SECURITY_PROTOCOL",
                &protocol,
                "SSL or SASL_SSL, since STRIMZI_TLS_ENABLED is true",
            ));
        }
        let mut unused_settings = Vec::new();
        let tls = if security_protocol.uses_tls() {
            Some(tls_config(&lookup, &get, &mut unused_settings)?)
        } else {
            None
        };
        // Read (and refused when wrong) whenever SASL is enabled, as Strimzi does; used only
        // when the protocol is a SASL one.
        let sasl = if sasl_enabled || security_protocol.uses_sasl() {
            let custom = lookup(custom_sasl::VARIABLE).unwrap_or_default();
            Some(if custom.trim().is_empty() {
                SaslConfig::Password(standard_sasl(&lookup, &get)?)
            } else {
                custom_sasl::parse(&custom)?
            })
        } else {
            None
        };
        let sasl = match sasl {
            Some(_) if !security_protocol.uses_sasl() => {
                unused_settings.push(format!(
                    "STRIMZI_SASL_ENABLED is true but the security protocol is {security_protocol:?}, not SASL_PLAINTEXT or SASL_SSL (set STRIMZI_SECURITY_PROTOCOL): the SASL settings are not used, as in Strimzi"
                ));
                None
            }
            sasl => sasl,
        };
        Ok(Self {
            bootstrap_servers: servers,
            security_protocol,
            tls,
            sasl,
            unused_settings,
            ..Self::plaintext("")
        })
    }
}

/// The TLS settings: the trust store, the key store when it is used, the host name check.
fn tls_config(
    lookup: &impl Fn(&str) -> Option<String>,
    get: &impl Fn(&str) -> String,
    unused_settings: &mut Vec<String>,
) -> Result<TlsConfig, AdminError> {
    let password = |name: &str| lookup(name).filter(|password| !password.is_empty());
    let truststore = get("STRIMZI_TRUSTSTORE_LOCATION");
    let truststore_password = password("STRIMZI_TRUSTSTORE_PASSWORD");
    if truststore.is_empty() && truststore_password.is_some() {
        return Err(invalid(
            "STRIMZI_TRUSTSTORE_LOCATION",
            "",
            "the path of the trust store, since STRIMZI_TRUSTSTORE_PASSWORD is set",
        ));
    }
    let ca_pem = StoreFile::read(
        "STRIMZI_TRUSTSTORE_LOCATION",
        &truststore,
        "STRIMZI_TRUSTSTORE_PASSWORD",
    )?
    .trusted_certificates_pem(truststore_password.as_deref())?;
    let keystore = get("STRIMZI_KEYSTORE_LOCATION");
    let client_identity_pem = if keystore.is_empty() {
        None
    } else {
        let store = StoreFile::read(
            "STRIMZI_KEYSTORE_LOCATION",
            &keystore,
            "STRIMZI_KEYSTORE_PASSWORD",
        )?;
        match password("STRIMZI_KEYSTORE_PASSWORD") {
            Some(password) => Some(store.identity_pem(&password)?),
            None if store.is_pem() => Some(store.identity_pem("")?),
            None => {
                unused_settings.push(format!(
                    "STRIMZI_KEYSTORE_LOCATION={keystore} names a PKCS#12 or JKS store but STRIMZI_KEYSTORE_PASSWORD is not set: \
                     no client certificate is used, as with Strimzi"
                ));
                None
            }
        }
    };
    let algorithm = get("STRIMZI_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM");
    let verify_hostname = match lookup("STRIMZI_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM") {
        None => true,
        Some(_) if algorithm.is_empty() => false,
        Some(_) if algorithm.eq_ignore_ascii_case("HTTPS") => true,
        Some(_) => {
            return Err(invalid(
                "STRIMZI_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM",
                &algorithm,
                "HTTPS or empty",
            ));
        }
    };
    Ok(TlsConfig {
        ca_pem,
        client_identity_pem,
        verify_hostname,
    })
}

/// The standard SASL settings: mechanism, user name and password.
fn standard_sasl(
    lookup: &impl Fn(&str) -> Option<String>,
    get: &impl Fn(&str) -> String,
) -> Result<SaslCredentials, AdminError> {
    let mechanism = get("STRIMZI_SASL_MECHANISM");
    let mechanism = SaslMechanism::from_name(&mechanism).ok_or_else(|| {
        invalid(
            "STRIMZI_SASL_MECHANISM",
            &mechanism,
            "plain, scram-sha-256 or scram-sha-512 (or STRIMZI_SASL_CUSTOM_CONFIG_JSON for another mechanism)",
        )
    })?;
    let username = get("STRIMZI_SASL_USERNAME");
    if username.is_empty() {
        return Err(invalid(
            "STRIMZI_SASL_USERNAME",
            "",
            "a non-empty user name",
        ));
    }
    let password = lookup("STRIMZI_SASL_PASSWORD").unwrap_or_default();
    if password.is_empty() {
        return Err(invalid("STRIMZI_SASL_PASSWORD", "", "a non-empty password"));
    }
    Ok(SaslCredentials {
        mechanism,
        username,
        password,
    })
}

fn is_host_port(server: &str) -> bool {
    server
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
}

fn parse_bool(variable: &str, value: &str) -> Result<bool, AdminError> {
    match value.to_ascii_lowercase().as_str() {
        "" | "false" => Ok(false),
        "true" => Ok(true),
        _ => Err(invalid(variable, value, "true or false")),
    }
}

fn invalid(variable: &str, value: &str, allowed: &str) -> AdminError {
    AdminError::InvalidConfig {
        variable: variable.to_owned(),
        value: value.to_owned(),
        allowed: allowed.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::collections::HashMap;

    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<AdminConfig, AdminError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        AdminConfig::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn plaintext_needs_only_bootstrap_servers() {
        let config = from(&[("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9092, b:9092")]).unwrap();
        assert_eq!(config.bootstrap_servers, ["a:9092", "b:9092"]);
        assert_eq!(config.security_protocol, SecurityProtocol::Plaintext);
    }

    #[test]
    fn without_a_protocol_sasl_is_checked_but_not_used_as_in_strimzi() {
        let sasl = [
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9092"),
            ("STRIMZI_SASL_ENABLED", "true"),
            ("STRIMZI_SASL_MECHANISM", "scram-sha-512"),
        ];
        // Credentials missing: refused even though they would not be used.
        let error = from(&sasl).unwrap_err().to_string();
        assert!(error.contains("STRIMZI_SASL_USERNAME"), "{error}");
        let mut complete = sasl.to_vec();
        complete.extend([
            ("STRIMZI_SASL_USERNAME", "operator"),
            ("STRIMZI_SASL_PASSWORD", "secret"),
        ]);
        let config = from(&complete).unwrap();
        assert_eq!(config.security_protocol, SecurityProtocol::Plaintext);
        assert_eq!(config.sasl, None, "SASL used without a SASL protocol");
        assert!(
            config.unused_settings[0].contains("the SASL settings are not used"),
            "{:?}",
            config.unused_settings
        );
    }

    #[test]
    fn switches_derive_the_protocol_and_sasl_is_read() {
        for (name, mechanism) in [
            ("scram-sha-512", SaslMechanism::ScramSha512),
            ("SCRAM-SHA-256", SaslMechanism::ScramSha256),
            ("plain", SaslMechanism::Plain),
        ] {
            let config = from(&[
                ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9092"),
                ("STRIMZI_SECURITY_PROTOCOL", "sasl_plaintext"),
                ("STRIMZI_SASL_ENABLED", "true"),
                ("STRIMZI_SASL_MECHANISM", name),
                ("STRIMZI_SASL_USERNAME", "operator"),
                ("STRIMZI_SASL_PASSWORD", "secret"),
                ("STRIMZI_SASL_CUSTOM_CONFIG_JSON", "  "),
            ])
            .unwrap();
            assert_eq!(config.security_protocol, SecurityProtocol::SaslPlaintext);
            let Some(SaslConfig::Password(sasl)) = config.sasl else {
                panic!("expected credentials, got {:?}", config.sasl);
            };
            assert_eq!(sasl.mechanism, mechanism);
            assert_eq!(sasl.password, "secret");
            let shown = format!("{sasl:?}");
            assert!(
                !shown.contains("secret") && shown.contains("password: <redacted>"),
                "{shown}"
            );
        }
    }

    #[test]
    fn tls_material_prints_without_the_private_key() {
        let certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let tls = TlsConfig {
            ca_pem: certificate.repeat(2),
            client_identity_pem: Some(format!(
                "{certificate}-----BEGIN PRIVATE KEY-----\nKEYMATERIAL\n-----END PRIVATE KEY-----\n"
            )),
            verify_hostname: true,
        };
        assert_eq!(
            format!("{tls:?}"),
            "TlsConfig { ca_certificates: 2, client_identity_pem: Some(<redacted>), verify_hostname: true }"
        );
    }

    #[test]
    fn a_mechanism_other_than_the_three_is_refused_by_name() {
        let error = from(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9092"),
            ("STRIMZI_SASL_ENABLED", "true"),
            ("STRIMZI_SASL_MECHANISM", "gssapi"),
            ("STRIMZI_SASL_USERNAME", "operator"),
            ("STRIMZI_SASL_PASSWORD", "secret"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("STRIMZI_SASL_MECHANISM=\"gssapi\" is invalid: plain, scram-sha-256 or scram-sha-512"),
            "{error}"
        );
    }

    #[test]
    fn the_custom_sasl_configuration_replaces_the_standard_settings() {
        let config = from(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9092"),
            ("STRIMZI_SECURITY_PROTOCOL", "SASL_PLAINTEXT"),
            ("STRIMZI_SASL_ENABLED", "true"),
            ("STRIMZI_SASL_MECHANISM", "not read"),
            (
                "STRIMZI_SASL_CUSTOM_CONFIG_JSON",
                r#"{"sasl.mechanism": "SCRAM-SHA-256",
                    "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";"}"#,
            ),
        ])
        .unwrap();
        assert_eq!(
            config.sasl,
            Some(SaslConfig::Password(SaslCredentials {
                mechanism: SaslMechanism::ScramSha256,
                username: "u".to_owned(),
                password: "p".to_owned(),
            }))
        );
    }

    #[test]
    fn pem_files_are_read_and_other_files_are_refused_naming_the_variable() {
        let dir = tempfile::tempdir().unwrap();
        let pem = dir.path().join("ca.crt");
        std::fs::write(
            &pem,
            "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let text = dir.path().join("ca.txt");
        std::fs::write(&text, "not a store").unwrap();
        let config = from(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9093"),
            ("STRIMZI_SECURITY_PROTOCOL", "SSL"),
            ("STRIMZI_TRUSTSTORE_LOCATION", pem.to_str().unwrap()),
            ("STRIMZI_TRUSTSTORE_PASSWORD", "ignored for PEM"),
        ])
        .unwrap();
        assert!(config.tls.unwrap().verify_hostname);
        let error = from(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9093"),
            ("STRIMZI_TLS_ENABLED", "true"),
            ("STRIMZI_TRUSTSTORE_LOCATION", text.to_str().unwrap()),
        ])
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("STRIMZI_TRUSTSTORE_LOCATION="), "{error}");
        assert!(error.contains("PEM, PKCS#12 or JKS"), "{error}");
    }

    #[test]
    fn tls_settings_that_strimzi_refuses_are_refused() {
        let error = from(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9093"),
            ("STRIMZI_TLS_ENABLED", "true"),
            ("STRIMZI_SECURITY_PROTOCOL", "SASL_PLAINTEXT"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with(
                "STRIMZI_SECURITY_PROTOCOL=\"SASL_PLAINTEXT\" is invalid: SSL or SASL_SSL"
            ),
            "{error}"
        );
        let error = from(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9093"),
            ("STRIMZI_TLS_ENABLED", "true"),
            ("STRIMZI_TRUSTSTORE_PASSWORD", "changeit"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("STRIMZI_TRUSTSTORE_LOCATION=\"\" is invalid")
                && error.contains("STRIMZI_TRUSTSTORE_PASSWORD is set"),
            "{error}"
        );
    }

    #[test]
    fn bad_values_name_the_variable_the_value_and_what_is_allowed() {
        let cases: [(&[(&str, &str)], &str); 4] = [
            (&[], "STRIMZI_KAFKA_BOOTSTRAP_SERVERS=\"\" is invalid"),
            (&[("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:b")], "host:port"),
            (
                &[
                    ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:1"),
                    ("STRIMZI_SECURITY_PROTOCOL", "TLS"),
                ],
                "STRIMZI_SECURITY_PROTOCOL=\"TLS\" is invalid: PLAINTEXT, SSL",
            ),
            (
                &[
                    ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:1"),
                    ("STRIMZI_SASL_ENABLED", "yes"),
                ],
                "STRIMZI_SASL_ENABLED=\"yes\" is invalid: true or false",
            ),
        ];
        for (pairs, expected) in cases {
            let error = from(pairs).unwrap_err();
            assert_eq!(error.reason(), "KafkaInvalidConfig");
            assert!(error.to_string().contains(expected), "{error}");
        }
    }
}
