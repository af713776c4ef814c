//! How the admin client reaches Kafka, read from the environment variables Strimzi's
//! operators use.
//!
//! | Variable | Meaning |
//! |---|---|
//! | `STRIMZI_KAFKA_BOOTSTRAP_SERVERS` | comma-separated `host:port` list (required) |
//! | `STRIMZI_SECURITY_PROTOCOL` | `PLAINTEXT`, `SSL`, `SASL_PLAINTEXT` or `SASL_SSL`; when empty, derived from the two switches below |
//! | `STRIMZI_TLS_ENABLED` | `true`/`false` (default `false`) |
//! | `STRIMZI_TRUSTSTORE_LOCATION` | PEM file with the CA certificates that sign the brokers' certificates |
//! | `STRIMZI_KEYSTORE_LOCATION` | PEM file with the client certificate chain and its unencrypted private key (mTLS) |
//! | `STRIMZI_TRUSTSTORE_PASSWORD`, `STRIMZI_KEYSTORE_PASSWORD` | accepted and unused: PEM files carry no password |
//! | `STRIMZI_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM` | `HTTPS` (default) checks the broker's host name; empty skips that check (the chain is still verified) |
//! | `STRIMZI_SASL_ENABLED` | `true`/`false` (default `false`) |
//! | `STRIMZI_SASL_MECHANISM` | `scram-sha-512` or `plain` (case-insensitive) |
//! | `STRIMZI_SASL_USERNAME`, `STRIMZI_SASL_PASSWORD` | SASL credentials |
//!
//! PKCS#12 stores are refused with a message asking for PEM.

use std::path::Path;
use std::time::Duration;

use super::error::AdminError;

/// The Kafka `security.protocol` of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecurityProtocol {
    /// No TLS, no authentication.
    Plaintext,
    /// TLS, optionally with a client certificate.
    Ssl,
    /// SASL authentication without TLS.
    SaslPlaintext,
    /// SASL authentication over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// What [`Self::from_name`] accepts, for error messages.
    pub const EXPECTED: &'static str = "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL";

    /// The protocol of Kafka's name for it (any case), `None` for another name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Some(Self::Plaintext),
            "SSL" => Some(Self::Ssl),
            "SASL_PLAINTEXT" => Some(Self::SaslPlaintext),
            "SASL_SSL" => Some(Self::SaslSsl),
            _ => None,
        }
    }

    /// Whether connections use TLS.
    pub fn uses_tls(self) -> bool {
        matches!(self, Self::Ssl | Self::SaslSsl)
    }

    /// Whether connections authenticate with SASL.
    pub fn uses_sasl(self) -> bool {
        matches!(self, Self::SaslPlaintext | Self::SaslSsl)
    }
}

/// A SASL mechanism the client can authenticate with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaslMechanism {
    /// `PLAIN`: user name and password in clear (use with TLS).
    Plain,
    /// `SCRAM-SHA-512`: salted challenge-response.
    ScramSha512,
}

impl SaslMechanism {
    /// The mechanism of Kafka's name for it (any case), `None` for one the client lacks.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_uppercase().as_str() {
            "SCRAM-SHA-512" => Some(Self::ScramSha512),
            "PLAIN" => Some(Self::Plain),
            _ => None,
        }
    }

    /// Kafka's name of the mechanism.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "PLAIN",
            Self::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

/// SASL credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct SaslConfig {
    /// The mechanism.
    pub mechanism: SaslMechanism,
    /// The user name.
    pub username: String,
    /// The password.
    pub password: String,
}

impl std::fmt::Debug for SaslConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SaslConfig")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// TLS material, PEM.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TlsConfig {
    /// CA certificates that sign the brokers' certificates; the system roots are not used.
    pub ca_pem: String,
    /// Client certificate chain and private key, for mutual TLS.
    pub client_identity_pem: Option<String>,
    /// Whether the broker's certificate must name the host connected to.
    pub verify_hostname: bool,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TlsConfig")
            .field("client_certificate", &self.client_identity_pem.is_some())
            .field("verify_hostname", &self.verify_hostname)
            .finish_non_exhaustive()
    }
}

/// Everything the admin client needs to reach Kafka.
#[derive(Clone, Debug)]
pub struct AdminConfig {
    /// `host:port` addresses to bootstrap from.
    pub bootstrap_servers: Vec<String>,
    /// The security protocol of every connection.
    pub security_protocol: SecurityProtocol,
    /// TLS material, required for `SSL` and `SASL_SSL`.
    pub tls: Option<TlsConfig>,
    /// SASL credentials, required for `SASL_PLAINTEXT` and `SASL_SSL`.
    pub sasl: Option<SaslConfig>,
    /// The client id sent with every request.
    pub client_id: String,
    /// Bound on connecting plus one request and its response.
    pub request_timeout: Duration,
    /// Bound on a whole operation, including retries.
    pub operation_timeout: Duration,
    /// How the host names of broker addresses are looked up.
    pub host_resolution: HostResolution,
}

/// How the client turns the host names of broker addresses into IP addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostResolution {
    /// The system resolver, as `/etc/resolv.conf` and `/etc/hosts` say.
    #[default]
    System,
    /// Names are never looked up: connecting to a host name fails at once, and only IP
    /// addresses are reached. For a process outside the cluster's network, whose resolver
    /// does not know the cluster's names and must not be asked about them.
    IpAddressesOnly,
}

/// Default bound on one request.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default bound on one operation with its retries.
pub const DEFAULT_OPERATION_TIMEOUT: Duration = Duration::from_secs(60);

impl AdminConfig {
    /// A PLAINTEXT configuration for `bootstrap` (`host:port[,host:port...]`).
    pub fn plaintext(bootstrap: &str) -> Self {
        Self {
            bootstrap_servers: split_list(bootstrap),
            security_protocol: SecurityProtocol::Plaintext,
            tls: None,
            sasl: None,
            client_id: "strimzi-admin".to_owned(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            operation_timeout: DEFAULT_OPERATION_TIMEOUT,
            host_resolution: HostResolution::System,
        }
    }

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
            "" => match (tls_enabled, sasl_enabled) {
                (false, false) => SecurityProtocol::Plaintext,
                (true, false) => SecurityProtocol::Ssl,
                (false, true) => SecurityProtocol::SaslPlaintext,
                (true, true) => SecurityProtocol::SaslSsl,
            },
            name => SecurityProtocol::from_name(name).ok_or_else(|| {
                invalid(
                    "STRIMZI_SECURITY_PROTOCOL",
                    &protocol,
                    SecurityProtocol::EXPECTED,
                )
            })?,
        };
        let tls = if security_protocol.uses_tls() {
            let truststore = get("STRIMZI_TRUSTSTORE_LOCATION");
            let keystore = get("STRIMZI_KEYSTORE_LOCATION");
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
            Some(TlsConfig {
                ca_pem: read_pem("STRIMZI_TRUSTSTORE_LOCATION", &truststore)?,
                client_identity_pem: if keystore.is_empty() {
                    None
                } else {
                    Some(read_pem("STRIMZI_KEYSTORE_LOCATION", &keystore)?)
                },
                verify_hostname,
            })
        } else {
            None
        };
        let sasl = if security_protocol.uses_sasl() {
            let mechanism = get("STRIMZI_SASL_MECHANISM");
            let mechanism = SaslMechanism::from_name(&mechanism).ok_or_else(|| {
                invalid(
                    "STRIMZI_SASL_MECHANISM",
                    &mechanism,
                    "scram-sha-512 or plain",
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
            Some(SaslConfig {
                mechanism,
                username,
                password,
            })
        } else {
            None
        };
        Ok(Self {
            bootstrap_servers: servers,
            security_protocol,
            tls,
            sasl,
            ..Self::plaintext("")
        })
    }
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
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

fn read_pem(variable: &str, location: &str) -> Result<String, AdminError> {
    if location.is_empty() {
        return Err(invalid(variable, location, "the path of a PEM file"));
    }
    let bytes = std::fs::read(Path::new(location)).map_err(|error| {
        invalid(
            variable,
            location,
            &format!("a readable PEM file ({error})"),
        )
    })?;
    match String::from_utf8(bytes) {
        Ok(text) if text.contains("-----BEGIN ") => Ok(text),
        _ => Err(invalid(
            variable,
            location,
            "a PEM file (PKCS#12 and JKS stores are not supported)",
        )),
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
    fn switches_derive_the_protocol_and_sasl_is_read() {
        let config = from(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9092"),
            ("STRIMZI_SASL_ENABLED", "true"),
            ("STRIMZI_SASL_MECHANISM", "scram-sha-512"),
            ("STRIMZI_SASL_USERNAME", "operator"),
            ("STRIMZI_SASL_PASSWORD", "secret"),
        ])
        .unwrap();
        assert_eq!(config.security_protocol, SecurityProtocol::SaslPlaintext);
        let sasl = config.sasl.unwrap();
        assert_eq!(sasl.mechanism, SaslMechanism::ScramSha512);
        assert!(!format!("{sasl:?}").contains("secret"));
    }

    #[test]
    fn pem_files_are_read_and_pkcs12_is_refused_naming_the_variable() {
        let dir = tempfile::tempdir().unwrap();
        let pem = dir.path().join("ca.crt");
        std::fs::write(
            &pem,
            "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let p12 = dir.path().join("ca.p12");
        std::fs::write(&p12, [0x30u8, 0x82, 0x01]).unwrap();
        let config = from(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9093"),
            ("STRIMZI_SECURITY_PROTOCOL", "SSL"),
            ("STRIMZI_TRUSTSTORE_LOCATION", pem.to_str().unwrap()),
        ])
        .unwrap();
        assert!(config.tls.unwrap().verify_hostname);
        let error = from(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "a:9093"),
            ("STRIMZI_TLS_ENABLED", "true"),
            ("STRIMZI_TRUSTSTORE_LOCATION", p12.to_str().unwrap()),
        ])
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("STRIMZI_TRUSTSTORE_LOCATION="), "{error}");
        assert!(error.contains("PKCS#12"), "{error}");
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
