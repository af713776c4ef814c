//! The topic operator's configuration, from Strimzi's environment variables: the shared
//! operator settings (with `STRIMZI_RESOURCE_LABELS` as the KafkaTopic selector), the Kafka
//! connection, finalizers, batching, alterable configs, the cluster config review, the
//! throttle of replica movements and Cruise Control.
//!
//! In the entity operator, the cluster operator sets `STRIMZI_TLS_ENABLED` and mounts the
//! certificates, as Strimzi's does, without naming the files: when TLS is on and
//! `STRIMZI_TRUSTSTORE_LOCATION` / `STRIMZI_KEYSTORE_LOCATION` are unset, the operator uses the
//! mounted cluster CA certificate ([`ENTITY_OPERATOR_TRUSTSTORE`]) and its own certificate and
//! key ([`ENTITY_OPERATOR_CERTS`]) when they exist.

use strimzi_operator_common::config::{self as common, OperatorConfig};
use strimzi_operator_common::cruise_control::{Credentials, CruiseControlClient, REST_API_PORT};
use strimzi_operator_common::http_client::{Server, ServerTls};
use strimzi_operator_common::kafka::{AdminConfig, AdminError, HostResolution, TlsConfig};

use crate::model::AlterableConfigs;
use strimzi_operator_common::batch::BatchSettings;

/// Label selector of the KafkaTopics to manage, e.g. `strimzi.io/cluster=my-cluster`.
pub const RESOURCE_LABELS: &str = "STRIMZI_RESOURCE_LABELS";
/// Whether KafkaTopics get the finalizer that deletes their topic (default `true`).
pub const USE_FINALIZERS: &str = "STRIMZI_USE_FINALIZERS";
/// Requests queued per Kafka operation before reconciliations wait (default 1024).
pub const MAX_QUEUE_SIZE: &str = "STRIMZI_MAX_QUEUE_SIZE";
/// Topics per Kafka request at most (default 100).
pub const MAX_BATCH_SIZE: &str = "STRIMZI_MAX_BATCH_SIZE";
/// How long a batch waits to fill, in milliseconds (default 100).
pub const MAX_BATCH_LINGER_MS: &str = "STRIMZI_MAX_BATCH_LINGER_MS";
/// `ALL`, `NONE` or the comma-separated topic configs the operator may change (default `ALL`).
pub const ALTERABLE_TOPIC_CONFIG: &str = "STRIMZI_ALTERABLE_TOPIC_CONFIG";
/// Whether to skip the start-up review of the broker config (default `false`).
pub const SKIP_CLUSTER_CONFIG_REVIEW: &str = "STRIMZI_SKIP_CLUSTER_CONFIG_REVIEW";

/// Bytes per second each broker may replicate for the operator's replica movements
/// (default 10 MiB/s; 0 leaves them unthrottled).
pub const REPLICATION_THROTTLE: &str = "STRIMZI_REPLICATION_THROTTLE_BYTES_PER_SECOND";
/// Whether replication-factor changes go through Cruise Control (default `false`).
pub const CRUISE_CONTROL_ENABLED: &str = "STRIMZI_CRUISE_CONTROL_ENABLED";
/// Host of Cruise Control's REST API (default `localhost`).
pub const CRUISE_CONTROL_HOSTNAME: &str = "STRIMZI_CRUISE_CONTROL_HOSTNAME";
/// Port of Cruise Control's REST API (default 9090).
pub const CRUISE_CONTROL_PORT: &str = "STRIMZI_CRUISE_CONTROL_PORT";
/// Whether Cruise Control's REST API uses TLS (default `false`).
pub const CRUISE_CONTROL_SSL_ENABLED: &str = "STRIMZI_CRUISE_CONTROL_SSL_ENABLED";
/// Whether Cruise Control's REST API asks for HTTP basic authentication (default `false`).
pub const CRUISE_CONTROL_AUTH_ENABLED: &str = "STRIMZI_CRUISE_CONTROL_AUTH_ENABLED";
/// File with the CA certificate of Cruise Control's server certificate.
pub const CRUISE_CONTROL_CA_PATH: &str = "STRIMZI_CRUISE_CONTROL_CA_PATH";
/// File with the REST API user name.
pub const CRUISE_CONTROL_API_USER_PATH: &str = "STRIMZI_CRUISE_CONTROL_API_USER_PATH";
/// File with the REST API password.
pub const CRUISE_CONTROL_API_PASS_PATH: &str = "STRIMZI_CRUISE_CONTROL_API_PASS_PATH";
/// Where the entity operator mounts the topic operator's Cruise Control user name (from the
/// Secret `<cluster>-entity-topic-operator-cc-api`).
pub const ENTITY_OPERATOR_CC_API_USER: &str = "/etc/eto-cc-api/topic-operator.apiAdminName";
/// Where the entity operator mounts the topic operator's Cruise Control password.
pub const ENTITY_OPERATOR_CC_API_PASSWORD: &str = "/etc/eto-cc-api/topic-operator.apiAdminPassword";

/// Default of [`REPLICATION_THROTTLE`]: 10 MiB/s.
const DEFAULT_REPLICATION_THROTTLE: u64 = 10 * 1024 * 1024;
/// How long one call to Cruise Control may take.
const CRUISE_CONTROL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The cluster CA certificate as the entity operator mounts it.
pub const ENTITY_OPERATOR_TRUSTSTORE: &str = "/etc/tls-sidecar/cluster-ca-certs/ca.crt";
/// The folder where the entity operator mounts the topic operator's certificate
/// (`entity-operator.crt`) and key (`entity-operator.key`).
pub const ENTITY_OPERATOR_CERTS: &str = "/etc/eto-certs";

/// Kafka requests of one kind handled at once.
const BATCHES_IN_FLIGHT: usize = 4;

/// A configuration value is missing or invalid.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A shared operator setting.
    #[error(transparent)]
    Operator(#[from] common::ConfigError),
    /// A Kafka connection setting.
    #[error(transparent)]
    Kafka(#[from] AdminError),
    /// A file of the Cruise Control settings could not be read.
    #[error("{variable}: cannot read {path}: {message}")]
    CruiseControlFile {
        /// The variable naming the file.
        variable: &'static str,
        /// The file.
        path: String,
        /// Why it could not be read.
        message: String,
    },
}

/// Everything the topic operator is configured with.
#[derive(Debug, Clone)]
pub struct TopicOperatorConfig {
    /// Namespaces, selector, intervals, logging, HTTP port, leader election.
    pub operator: OperatorConfig,
    /// How to reach Kafka.
    pub kafka: AdminConfig,
    /// Whether deleting a KafkaTopic deletes its topic (through a finalizer).
    pub use_finalizers: bool,
    /// How Kafka requests are batched.
    pub batching: BatchSettings,
    /// Which topic configs may be changed.
    pub alterable: AlterableConfigs,
    /// Whether to skip the start-up review of the broker config.
    pub skip_cluster_config_review: bool,
    /// Bytes per second for the operator's replica movements; `None` for no throttle.
    pub replication_throttle: Option<u64>,
    /// The Cruise Control that changes replication factors, when enabled.
    pub cruise_control: Option<CruiseControlClient>,
}

impl TopicOperatorConfig {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the configuration through `lookup` (variable name to value).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        // The topic operator selects its resources with STRIMZI_RESOURCE_LABELS.
        let operator = OperatorConfig::from_lookup(|name| {
            if name == common::CUSTOM_RESOURCE_SELECTOR {
                get(RESOURCE_LABELS)
            } else {
                get(name)
            }
        })?;
        let truststore = "STRIMZI_TRUSTSTORE_LOCATION";
        let mounted_truststore = || {
            std::path::Path::new(ENTITY_OPERATOR_TRUSTSTORE)
                .is_file()
                .then(|| ENTITY_OPERATOR_TRUSTSTORE.to_owned())
        };
        let mut kafka = AdminConfig::from_lookup(|name: &str| {
            if name == truststore {
                get(name).or_else(mounted_truststore)
            } else {
                lookup(name)
            }
        })?;
        if get("STRIMZI_KEYSTORE_LOCATION").is_none()
            && let Some(tls) = kafka.tls.as_mut()
            && tls.client_identity_pem.is_none()
        {
            tls.client_identity_pem = mounted_identity(std::path::Path::new(ENTITY_OPERATOR_CERTS));
        }
        kafka.client_id = "strimzi-topic-operator".to_owned();
        Ok(Self {
            operator,
            use_finalizers: common::flag(USE_FINALIZERS, get(USE_FINALIZERS), true)?,
            batching: BatchSettings {
                max_queue_size: common::positive(MAX_QUEUE_SIZE, get(MAX_QUEUE_SIZE), 1024)?,
                max_batch_size: common::positive(MAX_BATCH_SIZE, get(MAX_BATCH_SIZE), 100)?,
                max_linger: common::millis(MAX_BATCH_LINGER_MS, get(MAX_BATCH_LINGER_MS), 100)?,
                max_in_flight: BATCHES_IN_FLIGHT,
            },
            alterable: AlterableConfigs::parse(&get(ALTERABLE_TOPIC_CONFIG).unwrap_or_default()),
            skip_cluster_config_review: common::flag(
                SKIP_CLUSTER_CONFIG_REVIEW,
                get(SKIP_CLUSTER_CONFIG_REVIEW),
                false,
            )?,
            replication_throttle: replication_throttle(get(REPLICATION_THROTTLE))?,
            cruise_control: if common::flag(
                CRUISE_CONTROL_ENABLED,
                get(CRUISE_CONTROL_ENABLED),
                false,
            )? {
                Some(cruise_control(&get, kafka.host_resolution)?)
            } else {
                None
            },
            kafka,
        })
    }
}

/// The throttle rate of `value`: 10 MiB/s when unset, `None` for 0.
fn replication_throttle(value: Option<String>) -> Result<Option<u64>, ConfigError> {
    let Some(text) = value else {
        return Ok(Some(DEFAULT_REPLICATION_THROTTLE));
    };
    let rate: u64 = text
        .trim()
        .parse()
        .map_err(|_| common::ConfigError::Invalid {
            variable: REPLICATION_THROTTLE,
            value: text.clone(),
            expected: "a number of bytes per second (0 for no throttle)".to_owned(),
        })?;
    Ok((rate > 0).then_some(rate))
}

/// The Cruise Control client of the `STRIMZI_CRUISE_CONTROL_*` variables, with the
/// credentials and CA read from the files they name (by default where the entity operator
/// mounts them).
fn cruise_control(
    get: &impl Fn(&str) -> Option<String>,
    host_resolution: HostResolution,
) -> Result<CruiseControlClient, ConfigError> {
    let host = get(CRUISE_CONTROL_HOSTNAME).unwrap_or_else(|| "localhost".to_owned());
    let port = match get(CRUISE_CONTROL_PORT) {
        None => REST_API_PORT,
        Some(text) => text
            .trim()
            .parse()
            .map_err(|_| common::ConfigError::Invalid {
                variable: CRUISE_CONTROL_PORT,
                value: text.clone(),
                expected: "a port number".to_owned(),
            })?,
    };
    let file = |variable: &'static str, default: &str| {
        let path = get(variable).unwrap_or_else(|| default.to_owned());
        std::fs::read_to_string(&path)
            .map(|text| text.trim().to_owned())
            .map_err(|error| ConfigError::CruiseControlFile {
                variable,
                path,
                message: error.to_string(),
            })
    };
    let tls = if common::flag(
        CRUISE_CONTROL_SSL_ENABLED,
        get(CRUISE_CONTROL_SSL_ENABLED),
        false,
    )? {
        Some(ServerTls {
            config: TlsConfig {
                ca_pem: file(CRUISE_CONTROL_CA_PATH, ENTITY_OPERATOR_TRUSTSTORE)?,
                client_identity_pem: None,
                verify_hostname: true,
            },
            server_name: host.clone(),
        })
    } else {
        None
    };
    let credentials = if common::flag(
        CRUISE_CONTROL_AUTH_ENABLED,
        get(CRUISE_CONTROL_AUTH_ENABLED),
        false,
    )? {
        Some(Credentials {
            user: file(CRUISE_CONTROL_API_USER_PATH, ENTITY_OPERATOR_CC_API_USER)?,
            password: file(
                CRUISE_CONTROL_API_PASS_PATH,
                ENTITY_OPERATOR_CC_API_PASSWORD,
            )?,
        })
    } else {
        None
    };
    Ok(CruiseControlClient::new(
        Server {
            host,
            port,
            tls,
            host_resolution,
        },
        credentials,
        CRUISE_CONTROL_TIMEOUT,
    ))
}

/// The certificate and key the entity operator mounts in `folder`, as one PEM (certificate
/// first), if both files are there.
fn mounted_identity(folder: &std::path::Path) -> Option<String> {
    let certificate = std::fs::read_to_string(folder.join("entity-operator.crt")).ok()?;
    let key = std::fs::read_to_string(folder.join("entity-operator.key")).ok()?;
    Some(format!("{}\n{key}", certificate.trim_end()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::collections::BTreeMap;
    use std::time::Duration;
    use strimzi_operator_common::config::WatchedNamespaces;
    use strimzi_operator_common::kafka::{OAuthBearerConfig, SaslConfig, SecurityProtocol};

    fn read(pairs: &[(&str, &str)]) -> Result<TopicOperatorConfig, ConfigError> {
        let mut variables: BTreeMap<&str, &str> = BTreeMap::from([
            ("STRIMZI_NAMESPACE", "topics"),
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "localhost:9092"),
        ]);
        variables.extend(pairs.iter().copied());
        TopicOperatorConfig::from_lookup(|name| variables.get(name).map(|v| (*v).to_owned()))
    }

    #[test]
    fn the_entity_operator_mounts_give_the_client_identity() {
        let folder = tempfile::tempdir().unwrap();
        assert_eq!(mounted_identity(folder.path()), None);
        std::fs::write(folder.path().join("entity-operator.crt"), "CERT\n").unwrap();
        assert_eq!(mounted_identity(folder.path()), None, "no key yet");
        std::fs::write(folder.path().join("entity-operator.key"), "KEY\n").unwrap();
        assert_eq!(
            mounted_identity(folder.path()).as_deref(),
            Some("CERT\nKEY\n")
        );
    }

    #[test]
    fn strimzi_defaults() {
        let config = read(&[]).unwrap();
        assert!(config.use_finalizers);
        assert_eq!(config.batching.max_queue_size, 1024);
        assert_eq!(config.batching.max_batch_size, 100);
        assert_eq!(config.batching.max_linger, Duration::from_millis(100));
        assert_eq!(config.alterable, AlterableConfigs::All);
        assert!(!config.skip_cluster_config_review);
        assert_eq!(
            config.operator.full_reconciliation_interval,
            Duration::from_secs(120)
        );
        assert_eq!(config.operator.selector_string(), None);
    }

    #[test]
    fn reads_every_variable() {
        let config = read(&[
            ("STRIMZI_NAMESPACE", "a,b"),
            ("STRIMZI_RESOURCE_LABELS", "strimzi.io/cluster=my-cluster"),
            ("STRIMZI_USE_FINALIZERS", "false"),
            ("STRIMZI_MAX_QUEUE_SIZE", "10"),
            ("STRIMZI_MAX_BATCH_SIZE", "5"),
            ("STRIMZI_MAX_BATCH_LINGER_MS", "7"),
            ("STRIMZI_ALTERABLE_TOPIC_CONFIG", "NONE"),
            ("STRIMZI_SKIP_CLUSTER_CONFIG_REVIEW", "true"),
        ])
        .unwrap();
        assert_eq!(
            config.operator.namespaces,
            WatchedNamespaces::List(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            config.operator.selector_string().as_deref(),
            Some("strimzi.io/cluster=my-cluster")
        );
        assert!(!config.use_finalizers);
        assert_eq!(config.batching.max_queue_size, 10);
        assert_eq!(config.batching.max_batch_size, 5);
        assert_eq!(config.batching.max_linger, Duration::from_millis(7));
        assert_eq!(config.alterable, AlterableConfigs::None);
        assert!(config.skip_cluster_config_review);
    }

    #[test]
    fn replication_throttle() {
        assert_eq!(
            read(&[]).unwrap().replication_throttle,
            Some(10 * 1024 * 1024)
        );
        let config = read(&[("STRIMZI_REPLICATION_THROTTLE_BYTES_PER_SECOND", "0")]).unwrap();
        assert_eq!(config.replication_throttle, None);
        let config = read(&[("STRIMZI_REPLICATION_THROTTLE_BYTES_PER_SECOND", "2048")]).unwrap();
        assert_eq!(config.replication_throttle, Some(2048));
        let error = read(&[("STRIMZI_REPLICATION_THROTTLE_BYTES_PER_SECOND", "fast")])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("STRIMZI_REPLICATION_THROTTLE_BYTES_PER_SECOND"),
            "{error}"
        );
    }

    #[test]
    fn cruise_control_reads_its_credentials_and_ca_from_files() {
        assert!(read(&[]).unwrap().cruise_control.is_none());
        let folder = tempfile::tempdir().unwrap();
        let path = |name: &str| folder.path().join(name).display().to_string();
        std::fs::write(folder.path().join("user"), "topic-operator\n").unwrap();
        std::fs::write(folder.path().join("password"), "secret\n").unwrap();
        std::fs::write(folder.path().join("ca.crt"), "CA").unwrap();
        let (user, password, ca) = (path("user"), path("password"), path("ca.crt"));
        let enabled = [
            ("STRIMZI_CRUISE_CONTROL_ENABLED", "true"),
            (
                "STRIMZI_CRUISE_CONTROL_HOSTNAME",
                "my-cluster-cruise-control.kafka.svc",
            ),
            ("STRIMZI_CRUISE_CONTROL_PORT", "9091"),
            ("STRIMZI_CRUISE_CONTROL_SSL_ENABLED", "true"),
            ("STRIMZI_CRUISE_CONTROL_AUTH_ENABLED", "true"),
            ("STRIMZI_CRUISE_CONTROL_API_USER_PATH", user.as_str()),
            ("STRIMZI_CRUISE_CONTROL_API_PASS_PATH", password.as_str()),
            ("STRIMZI_CRUISE_CONTROL_CA_PATH", ca.as_str()),
        ];
        let client = format!("{:?}", read(&enabled).unwrap().cruise_control.unwrap());
        assert!(
            client.contains("my-cluster-cruise-control.kafka.svc"),
            "{client}"
        );
        assert!(client.contains("9091"), "{client}");
        assert!(client.contains("topic-operator"), "{client}");
        assert!(!client.contains("secret"), "no password in logs: {client}");
        let missing = path("nothing");
        let mut without_password = enabled.to_vec();
        without_password[6] = ("STRIMZI_CRUISE_CONTROL_API_PASS_PATH", missing.as_str());
        let error = read(&without_password).unwrap_err().to_string();
        assert!(
            error.contains("STRIMZI_CRUISE_CONTROL_API_PASS_PATH"),
            "{error}"
        );
        let plain = read(&[("STRIMZI_CRUISE_CONTROL_ENABLED", "true")]).unwrap();
        assert!(plain.cruise_control.is_some(), "plain HTTP needs no file");
    }

    #[test]
    fn the_start_line_shows_the_settings_but_not_the_secrets() {
        let folder = tempfile::tempdir().unwrap();
        let file = |name: &str, content: &str| {
            let path = folder.path().join(name);
            std::fs::write(&path, content).unwrap();
            path.display().to_string()
        };
        let certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let truststore = file("ca.crt", certificate);
        let keystore = file(
            "user.pem",
            &format!(
                "{certificate}-----BEGIN PRIVATE KEY-----\nkey-s3cret\n-----END PRIVATE KEY-----\n"
            ),
        );
        let cc_user = file("cc-user", "topic-operator-cc\n");
        let cc_password = file("cc-password", "cc-s3cret\n");
        let config = read(&[
            ("STRIMZI_MAX_BATCH_SIZE", "77"),
            ("STRIMZI_TLS_ENABLED", "true"),
            ("STRIMZI_SECURITY_PROTOCOL", "SASL_SSL"),
            ("STRIMZI_TRUSTSTORE_LOCATION", &truststore),
            ("STRIMZI_KEYSTORE_LOCATION", &keystore),
            ("STRIMZI_SASL_ENABLED", "true"),
            ("STRIMZI_SASL_MECHANISM", "scram-sha-512"),
            ("STRIMZI_SASL_USERNAME", "topic-operator-user"),
            ("STRIMZI_SASL_PASSWORD", "sasl-s3cret"),
            ("STRIMZI_CRUISE_CONTROL_ENABLED", "true"),
            ("STRIMZI_CRUISE_CONTROL_AUTH_ENABLED", "true"),
            ("STRIMZI_CRUISE_CONTROL_API_USER_PATH", &cc_user),
            ("STRIMZI_CRUISE_CONTROL_API_PASS_PATH", &cc_password),
        ])
        .unwrap();
        let line = strimzi_operator_common::logging::start_line(crate::NAME, &config);
        assert!(
            line.starts_with(&format!(
                "strimzi-topic-operator {}, configuration: TopicOperatorConfig {{",
                strimzi_operator_common::VERSION
            )),
            "{line}"
        );
        assert!(!line.contains("s3cret"), "{line}");
        assert!(!line.contains('\n'), "{line}");
        for shown in [
            "max_batch_size: 77",
            "username: \"topic-operator-user\", password: <redacted>",
            "client_identity_pem: Some(<redacted>)",
            "user: \"topic-operator-cc\", password: <redacted>",
        ] {
            assert!(line.contains(shown), "{shown}: {line}");
        }
    }

    /// Runs a tool that makes a store, and panics with its output when it fails.
    fn make_store(program: &str, args: &[&str]) {
        let output = std::process::Command::new(program)
            .args(args)
            .output()
            .unwrap_or_else(|error| panic!("{program} must be installed: {error}"));
        assert!(
            output.status.success(),
            "{program} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The base64 of a PEM text's blocks, without their framing, for comparing certificates.
    fn pem_body(pem: &str) -> String {
        pem.lines()
            .filter(|line| !line.starts_with("-----"))
            .collect()
    }

    /// Strimzi 1.2's standalone bundle with the cluster CA's `ca.p12` and a KafkaUser's
    /// `user.p12` with their passwords, and OAuth through Strimzi OAuth's client.
    #[test]
    fn the_standalone_bundles_pkcs12_stores_and_oauth_settings_are_read() {
        let folder = tempfile::tempdir().unwrap();
        let file = |name: &str| folder.path().join(name).to_str().unwrap().to_owned();
        let ca = strimzi_tests::certs::TestCa::new("my-cluster-cluster-ca").unwrap();
        let user = ca.client("my-topic-operator", None).unwrap();
        std::fs::write(file("ca.crt"), ca.cert_pem()).unwrap();
        std::fs::write(file("user.crt"), &user.cert).unwrap();
        std::fs::write(file("user.key"), &user.key).unwrap();
        make_store(
            "keytool",
            &[
                "-importcert",
                "-noprompt",
                "-alias",
                "ca",
                "-file",
                &file("ca.crt"),
                "-keystore",
                &file("ca.p12"),
                "-storetype",
                "PKCS12",
                "-storepass",
                "ca-password",
            ],
        );
        make_store(
            "openssl",
            &[
                "pkcs12",
                "-export",
                "-name",
                "my-topic-operator",
                "-in",
                &file("user.crt"),
                "-inkey",
                &file("user.key"),
                "-out",
                &file("user.p12"),
                "-passout",
                "pass:user-password",
            ],
        );
        let oauth = r#"{
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required oauth.token.endpoint.uri=\"http://sso.example:8080/realms/kafka/protocol/openid-connect/token\" oauth.client.id=\"topic-operator\" oauth.client.secret=\"secret\" ;",
            "sasl.login.callback.handler.class": "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler"
        }"#;
        let config = read(&[
            (
                "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
                "my-cluster-kafka-bootstrap:9093",
            ),
            ("STRIMZI_TLS_ENABLED", "true"),
            ("STRIMZI_SECURITY_PROTOCOL", "SASL_SSL"),
            ("STRIMZI_TRUSTSTORE_LOCATION", &file("ca.p12")),
            ("STRIMZI_TRUSTSTORE_PASSWORD", "ca-password"),
            ("STRIMZI_KEYSTORE_LOCATION", &file("user.p12")),
            ("STRIMZI_KEYSTORE_PASSWORD", "user-password"),
            ("STRIMZI_SASL_ENABLED", "true"),
            ("STRIMZI_SASL_CUSTOM_CONFIG_JSON", oauth),
        ])
        .unwrap();
        let kafka = config.kafka;
        assert_eq!(kafka.security_protocol, SecurityProtocol::SaslSsl);
        let tls = kafka.tls.unwrap();
        assert_eq!(pem_body(&tls.ca_pem), pem_body(&ca.cert_pem()));
        let identity = tls.client_identity_pem.unwrap();
        assert!(identity.starts_with(&format!(
            "-----BEGIN CERTIFICATE-----\n{}",
            &pem_body(&user.cert)[..64]
        )));
        assert!(identity.contains("-----BEGIN PRIVATE KEY-----"));
        let Some(SaslConfig::OAuthBearer(OAuthBearerConfig::ClientCredentials(grant))) = kafka.sasl
        else {
            panic!(
                "expected the client-credentials grant, got {:?}",
                kafka.sasl
            );
        };
        assert_eq!(grant.endpoint.host, "sso.example");
        assert_eq!(grant.client_id, "topic-operator");
    }

    #[test]
    fn bad_values_name_the_variable() {
        let error = read(&[("STRIMZI_MAX_BATCH_SIZE", "0")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("STRIMZI_MAX_BATCH_SIZE"), "{error}");
        let error = read(&[("STRIMZI_USE_FINALIZERS", "yes")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("STRIMZI_USE_FINALIZERS"), "{error}");
        let error = read(&[("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("STRIMZI_KAFKA_BOOTSTRAP_SERVERS"), "{error}");
    }
}
