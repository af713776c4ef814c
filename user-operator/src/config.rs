//! The user operator's configuration, from Strimzi's environment variables with Strimzi's
//! defaults: the shared operator settings (with `STRIMZI_LABELS` as the KafkaUser selector),
//! where the clients CA lives and how user certificates are issued, how Kafka is reached
//! (bootstrap servers, the cluster CA and the operator's own certificate in Secrets, extra
//! admin client properties), passwords, batching, caches and the ignored users.
//!
//! A bad value is a [`ConfigError`] naming the variable; the binary prints it on one line and
//! exits 1.

use std::collections::BTreeMap;
use std::time::Duration;

use strimzi_certificate_manager::maintenance::MaintenanceWindows;
use strimzi_operator_common::batch::BatchSettings;
use strimzi_operator_common::config::{self as common, OperatorConfig, WatchedNamespaces};
use strimzi_operator_common::redact::{REDACTED, RedactedProperties, is_secret_property};

/// Label selector of the KafkaUsers to manage (`key=value,...`).
pub const LABELS: &str = "STRIMZI_LABELS";
/// Name of the Secret with the clients CA certificate (`ca.crt`); required.
pub const CA_CERT_NAME: &str = "STRIMZI_CA_CERT_NAME";
/// Name of the Secret with the clients CA key (`ca.key`); required.
pub const CA_KEY_NAME: &str = "STRIMZI_CA_KEY_NAME";
/// Namespace of the CA Secrets; defaults to the (first) watched namespace.
pub const CA_NAMESPACE: &str = "STRIMZI_CA_NAMESPACE";
/// Name of the Secret with the cluster CA certificate, to reach Kafka over TLS.
pub const CLUSTER_CA_CERT_SECRET_NAME: &str = "STRIMZI_CLUSTER_CA_CERT_SECRET_NAME";
/// Name of the Secret with the operator's own certificate and key, for mutual TLS to Kafka.
pub const EO_KEY_SECRET_NAME: &str = "STRIMZI_EO_KEY_SECRET_NAME";
/// The health and metrics port when `STRIMZI_HTTP_PORT` is unset, as in Strimzi.
pub const DEFAULT_HTTP_PORT: u16 = 8081;
/// Kafka bootstrap servers (default `localhost:9091`).
pub const KAFKA_BOOTSTRAP_SERVERS: &str = "STRIMZI_KAFKA_BOOTSTRAP_SERVERS";
/// Prefix of the names of the users' Secrets (default empty).
pub const SECRET_PREFIX: &str = "STRIMZI_SECRET_PREFIX";
/// Validity of user certificates in days (default 365).
pub const CA_VALIDITY: &str = "STRIMZI_CA_VALIDITY";
/// Days before expiry in which user certificates are renewed (default 30).
pub const CA_RENEWAL: &str = "STRIMZI_CA_RENEWAL";
/// Length of generated SCRAM-SHA-512 passwords (default 32).
pub const SCRAM_SHA_PASSWORD_LENGTH: &str = "STRIMZI_SCRAM_SHA_PASSWORD_LENGTH";
/// Whether Kafka's Admin API manages ACLs (default `true`).
pub const ACLS_ADMIN_API_SUPPORTED: &str = "STRIMZI_ACLS_ADMIN_API_SUPPORTED";
/// Queued reconciliations at most (default 1024); also bounds the reconciliations run at once.
pub const WORK_QUEUE_SIZE: &str = "STRIMZI_WORK_QUEUE_SIZE";
/// Reconciliations run at once (default 50).
pub const CONTROLLER_THREAD_POOL_SIZE: &str = "STRIMZI_CONTROLLER_THREAD_POOL_SIZE";
/// Milliseconds between refreshes of the ACL, quota and SCRAM caches (default 15000).
pub const CACHE_REFRESH_INTERVAL_MS: &str = "STRIMZI_CACHE_REFRESH_INTERVAL_MS";
/// Requests queued per Kafka operation before reconciliations wait (default 1024).
pub const BATCH_QUEUE_SIZE: &str = "STRIMZI_BATCH_QUEUE_SIZE";
/// Items per Kafka request at most (default 100).
pub const BATCH_MAXIMUM_BLOCK_SIZE: &str = "STRIMZI_BATCH_MAXIMUM_BLOCK_SIZE";
/// Milliseconds a batch waits to fill (default 100).
pub const BATCH_MAXIMUM_BLOCK_TIME_MS: &str = "STRIMZI_BATCH_MAXIMUM_BLOCK_TIME_MS";
/// Kafka requests of one kind in flight at once (default 4).
pub const USER_OPERATIONS_THREAD_POOL_SIZE: &str = "STRIMZI_USER_OPERATIONS_THREAD_POOL_SIZE";
/// Extra admin client properties, one `key=value` per line.
pub const KAFKA_ADMIN_CLIENT_CONFIGURATION: &str = "STRIMZI_KAFKA_ADMIN_CLIENT_CONFIGURATION";
/// Cron expressions, separated by `;`, of the windows in which certificates are renewed.
pub const MAINTENANCE_TIME_WINDOWS: &str = "STRIMZI_MAINTENANCE_TIME_WINDOWS";
/// Regular expression of Kafka user names the operator leaves alone (default: none).
pub const IGNORED_USERS_PATTERN: &str = "STRIMZI_IGNORED_USERS_PATTERN";

/// A configuration value is missing or invalid; its message names the variable.
pub use strimzi_operator_common::config::ConfigError;

/// Where the clients CA lives and how user certificates are issued.
#[derive(Debug, Clone)]
pub struct CaConfig {
    /// Secret with `ca.crt`.
    pub cert_secret: String,
    /// Secret with `ca.key`.
    pub key_secret: String,
    /// Namespace of both.
    pub namespace: String,
    /// Validity of user certificates, in days.
    pub validity_days: u32,
    /// Renewal period of user certificates, in days.
    pub renewal_days: u32,
    /// Whether `user.p12` and `user.password` are written.
    pub pkcs12: bool,
    /// When time-driven renewals may happen; empty means always.
    pub maintenance_windows: MaintenanceWindows,
}

/// How the operator reaches Kafka, before the Secrets it names are read. `Debug` prints the
/// admin client properties that can hold secrets as `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct KafkaConnection {
    /// `host:port,...`.
    pub bootstrap_servers: String,
    /// Secret with the cluster CA certificate (`ca.crt`) in the CA namespace: TLS when set.
    pub cluster_ca_cert_secret: Option<String>,
    /// Secret with the operator's certificate and key in the CA namespace: mutual TLS.
    pub operator_key_secret: Option<String>,
    /// Extra admin client properties.
    pub admin_properties: BTreeMap<String, String>,
}

impl std::fmt::Debug for KafkaConnection {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self {
            bootstrap_servers,
            cluster_ca_cert_secret,
            operator_key_secret,
            admin_properties,
        } = self;
        formatter
            .debug_struct("KafkaConnection")
            .field("bootstrap_servers", bootstrap_servers)
            .field("cluster_ca_cert_secret", cluster_ca_cert_secret)
            .field("operator_key_secret", operator_key_secret)
            .field("admin_properties", &RedactedProperties(admin_properties))
            .finish()
    }
}

/// Everything the user operator is configured with.
#[derive(Debug, Clone)]
pub struct UserOperatorConfig {
    /// Namespaces, selector, intervals, logging, HTTP port, leader election.
    pub operator: OperatorConfig,
    /// The clients CA and user certificates.
    pub ca: CaConfig,
    /// How to reach Kafka.
    pub kafka: KafkaConnection,
    /// Prefix of the users' Secret names.
    pub secret_prefix: String,
    /// Length of generated passwords.
    pub password_length: usize,
    /// Whether ACLs are managed through the Admin API.
    pub acls_admin_api_supported: bool,
    /// Reconciliations at once.
    pub concurrency: usize,
    /// How often the ACL, quota and SCRAM caches are read again from Kafka.
    pub cache_refresh_interval: Duration,
    /// How Kafka requests are batched.
    pub batching: BatchSettings,
    /// Kafka user names left alone by the cleanup of users without a KafkaUser.
    pub ignored_users: Option<fancy_regex::Regex>,
}

impl UserOperatorConfig {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the configuration through `lookup` (variable name to value).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        // The user operator selects its resources with STRIMZI_LABELS.
        let operator = OperatorConfig::from_lookup(|name| {
            if name == common::CUSTOM_RESOURCE_SELECTOR {
                get(LABELS)
            } else if name == common::HTTP_PORT {
                // Strimzi's user operator listens on 8081, next to the topic operator's 8080
                // in the entity operator's pod.
                get(name).or_else(|| Some(DEFAULT_HTTP_PORT.to_string()))
            } else {
                get(name)
            }
        })?;
        let required = |variable: &'static str| {
            get(variable)
                .map(|value| value.trim().to_owned())
                .ok_or(ConfigError::Missing {
                    variable,
                    expected: "the name of a Secret".to_owned(),
                })
        };
        let ca_namespace = match get(CA_NAMESPACE) {
            Some(namespace) => namespace.trim().to_owned(),
            None => match &operator.namespaces {
                WatchedNamespaces::List(namespaces) if !namespaces.is_empty() => {
                    namespaces[0].clone()
                }
                _ => {
                    return Err(ConfigError::Missing {
                        variable: CA_NAMESPACE,
                        expected:
                            "the namespace of the clients CA Secrets when STRIMZI_NAMESPACE is *"
                                .to_owned(),
                    });
                }
            },
        };
        let windows_text = get(MAINTENANCE_TIME_WINDOWS).unwrap_or_default();
        let windows: Vec<&str> = windows_text
            .split(';')
            .map(str::trim)
            .filter(|window| !window.is_empty())
            .collect();
        let maintenance_windows =
            MaintenanceWindows::parse(&windows).map_err(|error| ConfigError::Invalid {
                variable: MAINTENANCE_TIME_WINDOWS,
                value: windows_text.clone(),
                expected: format!("cron expressions separated by ; ({error})"),
            })?;
        let validity_days = common::positive(CA_VALIDITY, get(CA_VALIDITY), 365)?;
        let renewal_days = common::positive(CA_RENEWAL, get(CA_RENEWAL), 30)?;
        let pkcs12 = strimzi_certificate_manager::pkcs12_generation(
            get(strimzi_certificate_manager::PKCS12_KEYSTORE_GENERATION_ENV).as_deref(),
        )
        .map_err(|message| ConfigError::Invalid {
            variable: strimzi_certificate_manager::PKCS12_KEYSTORE_GENERATION_ENV,
            value: get(strimzi_certificate_manager::PKCS12_KEYSTORE_GENERATION_ENV)
                .unwrap_or_default(),
            expected: message,
        })?;
        let work_queue = common::positive(WORK_QUEUE_SIZE, get(WORK_QUEUE_SIZE), 1024)?;
        let threads = common::positive(
            CONTROLLER_THREAD_POOL_SIZE,
            get(CONTROLLER_THREAD_POOL_SIZE),
            50,
        )?;
        let ignored_users = get(IGNORED_USERS_PATTERN)
            .map(|pattern| {
                fancy_regex::Regex::new(&pattern).map_err(|error| ConfigError::Invalid {
                    variable: IGNORED_USERS_PATTERN,
                    value: pattern.clone(),
                    expected: format!("a regular expression ({error})"),
                })
            })
            .transpose()?;
        let bootstrap_servers = get(KAFKA_BOOTSTRAP_SERVERS)
            .map(|servers| servers.trim().to_owned())
            .unwrap_or_else(|| "localhost:9091".to_owned());
        let admin_text = get(KAFKA_ADMIN_CLIENT_CONFIGURATION).unwrap_or_default();
        Ok(Self {
            operator,
            ca: CaConfig {
                cert_secret: required(CA_CERT_NAME)?,
                key_secret: required(CA_KEY_NAME)?,
                namespace: ca_namespace,
                validity_days: u32::try_from(validity_days).unwrap_or(u32::MAX),
                renewal_days: u32::try_from(renewal_days).unwrap_or(u32::MAX),
                pkcs12,
                maintenance_windows,
            },
            kafka: KafkaConnection {
                bootstrap_servers,
                cluster_ca_cert_secret: get(CLUSTER_CA_CERT_SECRET_NAME)
                    .map(|name| name.trim().to_owned()),
                operator_key_secret: get(EO_KEY_SECRET_NAME).map(|name| name.trim().to_owned()),
                admin_properties: parse_properties(&admin_text)?,
            },
            secret_prefix: lookup(SECRET_PREFIX).unwrap_or_default().trim().to_owned(),
            password_length: common::positive(
                SCRAM_SHA_PASSWORD_LENGTH,
                get(SCRAM_SHA_PASSWORD_LENGTH),
                32,
            )?,
            acls_admin_api_supported: common::flag(
                ACLS_ADMIN_API_SUPPORTED,
                get(ACLS_ADMIN_API_SUPPORTED),
                true,
            )?,
            concurrency: threads.min(work_queue),
            cache_refresh_interval: common::millis(
                CACHE_REFRESH_INTERVAL_MS,
                get(CACHE_REFRESH_INTERVAL_MS),
                15_000,
            )?,
            batching: BatchSettings {
                max_queue_size: common::positive(BATCH_QUEUE_SIZE, get(BATCH_QUEUE_SIZE), 1024)?,
                max_batch_size: common::positive(
                    BATCH_MAXIMUM_BLOCK_SIZE,
                    get(BATCH_MAXIMUM_BLOCK_SIZE),
                    100,
                )?,
                max_linger: common::millis(
                    BATCH_MAXIMUM_BLOCK_TIME_MS,
                    get(BATCH_MAXIMUM_BLOCK_TIME_MS),
                    100,
                )?,
                max_in_flight: common::positive(
                    USER_OPERATIONS_THREAD_POOL_SIZE,
                    get(USER_OPERATIONS_THREAD_POOL_SIZE),
                    4,
                )?,
            },
            ignored_users,
        })
    }

    /// Whether the Kafka user name `name` (as Kafka has it, e.g. `CN=alice`) is ignored.
    pub fn is_ignored(&self, name: &str) -> bool {
        self.ignored_users
            .as_ref()
            .is_some_and(|pattern| pattern.is_match(name).unwrap_or(false))
    }
}

/// Java properties text (`key=value` or `key: value` per line, `#` and `!` comments) as a
/// map; a line without a separator is an error naming the variable (and the line, unless its
/// first word names a secret property).
fn parse_properties(text: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut properties = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let Some(split) = line.find(['=', ':']) else {
            let key = line.split_whitespace().next().unwrap_or_default();
            return Err(ConfigError::Invalid {
                variable: KAFKA_ADMIN_CLIENT_CONFIGURATION,
                value: if is_secret_property(key) {
                    REDACTED.to_owned()
                } else {
                    line.to_owned()
                },
                expected: "Java properties, one key=value per line".to_owned(),
            });
        };
        let (key, value) = line.split_at(split);
        properties.insert(key.trim().to_owned(), value[1..].trim().to_owned());
    }
    Ok(properties)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<UserOperatorConfig, ConfigError> {
        let mut variables: BTreeMap<&str, &str> = BTreeMap::from([
            ("STRIMZI_NAMESPACE", "users"),
            ("STRIMZI_CA_CERT_NAME", "my-cluster-clients-ca-cert"),
            ("STRIMZI_CA_KEY_NAME", "my-cluster-clients-ca"),
        ]);
        variables.extend(pairs.iter().copied());
        UserOperatorConfig::from_lookup(|name| variables.get(name).map(|v| (*v).to_owned()))
    }

    #[test]
    fn strimzi_defaults() {
        let config = read(&[]).unwrap();
        assert_eq!(config.ca.namespace, "users");
        assert_eq!(config.ca.validity_days, 365);
        assert_eq!(config.ca.renewal_days, 30);
        assert!(config.ca.pkcs12);
        assert_eq!(config.kafka.bootstrap_servers, "localhost:9091");
        assert_eq!(config.kafka.cluster_ca_cert_secret, None);
        assert_eq!(config.secret_prefix, "");
        assert_eq!(config.password_length, 32);
        assert!(config.acls_admin_api_supported);
        assert_eq!(config.concurrency, 50);
        assert_eq!(config.cache_refresh_interval, Duration::from_secs(15));
        assert_eq!(config.batching.max_queue_size, 1024);
        assert_eq!(config.batching.max_batch_size, 100);
        assert_eq!(config.batching.max_linger, Duration::from_millis(100));
        assert_eq!(config.batching.max_in_flight, 4);
        assert!(config.ignored_users.is_none());
        assert!(!config.is_ignored("ANONYMOUS"));
        assert_eq!(
            config.operator.full_reconciliation_interval,
            Duration::from_secs(120)
        );
        // Next to the topic operator's 8080 in the entity operator's pod, as in Strimzi.
        assert_eq!(config.operator.http_port, 8081);
        let moved = read(&[("STRIMZI_HTTP_PORT", "9000")]).unwrap();
        assert_eq!(moved.operator.http_port, 9000);
    }

    #[test]
    fn reads_every_variable() {
        let config = read(&[
            ("STRIMZI_NAMESPACE", "a,b"),
            ("STRIMZI_LABELS", "strimzi.io/cluster=my-cluster"),
            ("STRIMZI_CA_NAMESPACE", "kafka"),
            (
                "STRIMZI_CLUSTER_CA_CERT_SECRET_NAME",
                "my-cluster-cluster-ca-cert",
            ),
            (
                "STRIMZI_EO_KEY_SECRET_NAME",
                "my-cluster-entity-user-operator-certs",
            ),
            (
                "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
                "my-cluster-kafka-bootstrap:9091",
            ),
            ("STRIMZI_SECRET_PREFIX", "kafka-"),
            ("STRIMZI_CA_VALIDITY", "10"),
            ("STRIMZI_CA_RENEWAL", "5"),
            ("STRIMZI_SCRAM_SHA_PASSWORD_LENGTH", "12"),
            ("STRIMZI_ACLS_ADMIN_API_SUPPORTED", "false"),
            ("STRIMZI_WORK_QUEUE_SIZE", "20"),
            ("STRIMZI_CONTROLLER_THREAD_POOL_SIZE", "30"),
            ("STRIMZI_CACHE_REFRESH_INTERVAL_MS", "1000"),
            ("STRIMZI_BATCH_QUEUE_SIZE", "7"),
            ("STRIMZI_BATCH_MAXIMUM_BLOCK_SIZE", "3"),
            ("STRIMZI_BATCH_MAXIMUM_BLOCK_TIME_MS", "9"),
            ("STRIMZI_USER_OPERATIONS_THREAD_POOL_SIZE", "2"),
            (
                "STRIMZI_KAFKA_ADMIN_CLIENT_CONFIGURATION",
                "# comment\nsecurity.protocol=SASL_SSL\nsasl.mechanism: SCRAM-SHA-512\n",
            ),
            (
                "STRIMZI_MAINTENANCE_TIME_WINDOWS",
                "* * 8-10 * * ?;* * 14-15 * * ?",
            ),
            ("STRIMZI_IGNORED_USERS_PATTERN", "^(ANONYMOUS|\\*)$"),
            ("STRIMZI_PKCS12_KEYSTORE_GENERATION", "false"),
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
        assert_eq!(config.ca.namespace, "kafka");
        assert_eq!(config.ca.validity_days, 10);
        assert_eq!(config.ca.renewal_days, 5);
        assert!(!config.ca.pkcs12);
        assert_eq!(
            config.kafka.operator_key_secret.as_deref(),
            Some("my-cluster-entity-user-operator-certs")
        );
        assert_eq!(
            config
                .kafka
                .admin_properties
                .get("sasl.mechanism")
                .map(String::as_str),
            Some("SCRAM-SHA-512")
        );
        assert_eq!(config.secret_prefix, "kafka-");
        assert_eq!(config.password_length, 12);
        assert!(!config.acls_admin_api_supported);
        assert_eq!(config.concurrency, 20);
        assert_eq!(config.cache_refresh_interval, Duration::from_secs(1));
        assert_eq!(config.batching.max_batch_size, 3);
        assert_eq!(config.batching.max_in_flight, 2);
        assert!(config.is_ignored("ANONYMOUS"));
        assert!(config.is_ignored("*"));
        assert!(!config.is_ignored("CN=ANONYMOUS"));
    }

    #[test]
    fn the_start_line_shows_the_settings_but_not_the_secrets() {
        let config = read(&[
            ("STRIMZI_SECRET_PREFIX", "kafka-"),
            (
                "STRIMZI_KAFKA_ADMIN_CLIENT_CONFIGURATION",
                "security.protocol=SASL_SSL\n\
                 sasl.mechanism=SCRAM-SHA-512\n\
                 sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"uo\" password=\"jaas-s3cret\";\n\
                 ssl.truststore.password=truststore-s3cret\n",
            ),
        ])
        .unwrap();
        let line = strimzi_operator_common::logging::start_line(crate::NAME, &config);
        assert!(
            line.starts_with(&format!(
                "strimzi-user-operator {}, configuration: UserOperatorConfig {{",
                strimzi_operator_common::VERSION
            )),
            "{line}"
        );
        assert!(!line.contains("s3cret"), "{line}");
        assert!(!line.contains('\n'), "{line}");
        for shown in [
            "secret_prefix: \"kafka-\"",
            "\"security.protocol\": \"SASL_SSL\"",
            "\"sasl.jaas.config\": <redacted>",
            "\"ssl.truststore.password\": <redacted>",
        ] {
            assert!(line.contains(shown), "{shown}: {line}");
        }
    }

    #[test]
    fn bad_values_name_the_variable() {
        for (variable, value) in [
            ("STRIMZI_CA_VALIDITY", "0"),
            ("STRIMZI_ACLS_ADMIN_API_SUPPORTED", "yes"),
            ("STRIMZI_IGNORED_USERS_PATTERN", "("),
            ("STRIMZI_MAINTENANCE_TIME_WINDOWS", "not cron"),
            ("STRIMZI_KAFKA_ADMIN_CLIENT_CONFIGURATION", "no separator"),
            ("STRIMZI_BATCH_MAXIMUM_BLOCK_SIZE", "-1"),
        ] {
            let error = read(&[(variable, value)]).unwrap_err().to_string();
            assert!(error.contains(variable), "{variable}: {error}");
        }
        let error = read(&[(
            "STRIMZI_KAFKA_ADMIN_CLIENT_CONFIGURATION",
            "ssl.keystore.password ks-s3cret",
        )])
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("STRIMZI_KAFKA_ADMIN_CLIENT_CONFIGURATION=\"<redacted>\""),
            "{error}"
        );
        let error = UserOperatorConfig::from_lookup(|name| {
            (name == "STRIMZI_NAMESPACE").then(|| "users".to_owned())
        })
        .unwrap_err()
        .to_string();
        assert!(error.contains("STRIMZI_CA_CERT_NAME"), "{error}");
    }
}
