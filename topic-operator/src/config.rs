//! The topic operator's configuration, from Strimzi's environment variables: the shared
//! operator settings (with `STRIMZI_RESOURCE_LABELS` as the KafkaTopic selector), the Kafka
//! connection, finalizers, batching, alterable configs and the cluster config review.
//!
//! In the entity operator, the cluster operator sets `STRIMZI_TLS_ENABLED` and mounts the
//! certificates, as Strimzi's does, without naming the files: when TLS is on and
//! `STRIMZI_TRUSTSTORE_LOCATION` / `STRIMZI_KEYSTORE_LOCATION` are unset, the operator uses the
//! mounted cluster CA certificate ([`ENTITY_OPERATOR_TRUSTSTORE`]) and its own certificate and
//! key ([`ENTITY_OPERATOR_CERTS`]) when they exist.

use strimzi_operator_common::config::{self as common, OperatorConfig};
use strimzi_operator_common::kafka::{AdminConfig, AdminError};

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
            kafka,
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
        })
    }
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
