//! The per-node ConfigMaps (`server.config`, `log4j2.properties`, metrics configuration,
//! cluster ID and metadata version), the configuration hash that rolls a node when its static
//! configuration changes, and the configuration warnings. Owner: configuration.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sha2::{Digest, Sha512};
use strimzi_api::common::MetricsConfig;
use strimzi_api::labels;

use super::broker_config::UserOptions;
use super::listeners::ListenerAddresses;
use super::logging::default_logging_configuration;
use super::{KafkaCluster, KafkaNode, ModelError, ModelWarning, NodePool, user_config};

/// Key of the node configuration in the ConfigMap.
pub const SERVER_CONFIG_KEY: &str = "server.config";
/// Key of the Log4j2 configuration in the ConfigMap.
pub const LOGGING_KEY: &str = "log4j2.properties";
/// Key of the JMX Prometheus exporter rules (JSON) in the ConfigMap.
pub const METRICS_KEY: &str = "metrics-config.json";
/// Key of the cluster ID in the ConfigMap.
pub const CLUSTER_ID_KEY: &str = "cluster.id";
/// Key of the KRaft metadata version in the ConfigMap.
pub const METADATA_VERSION_KEY: &str = "metadata.version";
/// Label naming the pod a ConfigMap belongs to.
pub const POD_NAME_LABEL: &str = "strimzi.io/pod-name";

/// Content the caller read from user ConfigMaps the Kafka refers to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExternalConfiguration {
    /// The value of `spec.kafka.logging.valueFrom.configMapKeyRef`, when external logging is
    /// used and the ConfigMap exists.
    pub logging: Option<String>,
    /// The value of `spec.kafka.metricsConfig.valueFrom.configMapKeyRef`, when the JMX
    /// exporter is used and the ConfigMap exists.
    pub metrics: Option<String>,
}

/// Kafka broker options that Kafka can change while the broker runs (cluster-wide dynamic
/// options); changing them does not need a restart, so they stay out of the configuration
/// hash.
const DYNAMIC_OPTIONS: &[&str] = &[
    "background.threads",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.type",
    "compression.zstd.level",
    "follower.replication.throttled.rate",
    "leader.replication.throttled.rate",
    "log.cleaner.backoff.ms",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.delete.retention.ms",
    "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio",
    "log.cleaner.min.compaction.lag.ms",
    "log.cleaner.threads",
    "log.cleanup.policy",
    "log.flush.interval.messages",
    "log.flush.interval.ms",
    "log.index.interval.bytes",
    "log.index.size.max.bytes",
    "log.local.retention.bytes",
    "log.local.retention.ms",
    "log.message.timestamp.after.max.ms",
    "log.message.timestamp.before.max.ms",
    "log.message.timestamp.type",
    "log.preallocate",
    "log.retention.bytes",
    "log.retention.ms",
    "log.roll.jitter.ms",
    "log.roll.ms",
    "log.segment.bytes",
    "log.segment.delete.delay.ms",
    "max.connection.creation.rate",
    "max.connections",
    "max.connections.per.ip",
    "max.connections.per.ip.overrides",
    "message.max.bytes",
    "metric.reporters",
    "min.insync.replicas",
    "num.io.threads",
    "num.network.threads",
    "num.recovery.threads.per.data.dir",
    "num.replica.fetchers",
    "producer.id.expiration.ms",
    "remote.fetch.max.wait.ms",
    "remote.list.offsets.request.timeout.ms",
    "remote.log.index.file.cache.total.size.bytes",
    "remote.log.manager.copier.thread.pool.size",
    "remote.log.manager.copy.max.bytes.per.second",
    "remote.log.manager.expiration.thread.pool.size",
    "remote.log.manager.fetch.max.bytes.per.second",
    "remote.log.reader.threads",
    "transaction.partition.verification.enable",
    "unclean.leader.election.enable",
];

/// Whether Kafka can change `key` while running (so it needs no rolling restart).
pub fn is_dynamic_option(key: &str) -> bool {
    DYNAMIC_OPTIONS.contains(&key)
}

/// Strimzi's hash stub: the first eight hex digits of the SHA-512 digest of `text`.
pub fn hash_stub(text: &str) -> String {
    let digest = Sha512::digest(text.as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    // Strimzi formats the digest as a number, which drops a leading zero digit.
    let trimmed = hex.trim_start_matches('0');
    let padded = format!("{trimmed:0>40}");
    padded.chars().take(8).collect()
}

impl KafkaCluster {
    /// One ConfigMap per node, named after its pod.
    pub fn config_maps(
        &self,
        addresses: &ListenerAddresses,
        external: &ExternalConfiguration,
    ) -> Vec<ConfigMap> {
        let logging = self
            .logging_configuration(external.logging.as_deref())
            .unwrap_or_else(|_| default_logging_configuration());
        let metrics = self
            .metrics_json(external.metrics.as_deref())
            .ok()
            .flatten();
        self.pools
            .iter()
            .flat_map(|pool| {
                self.nodes()
                    .filter(move |node| node.pool == pool.name)
                    .map(move |node| (pool, node))
            })
            .map(|(pool, node)| {
                let mut data = BTreeMap::new();
                if let Some(metrics) = &metrics {
                    data.insert(METRICS_KEY.to_owned(), metrics.clone());
                }
                data.insert(LOGGING_KEY.to_owned(), logging.clone());
                data.insert(
                    SERVER_CONFIG_KEY.to_owned(),
                    self.server_config(&node, addresses),
                );
                data.insert(CLUSTER_ID_KEY.to_owned(), self.cluster_id.clone());
                data.insert(
                    METADATA_VERSION_KEY.to_owned(),
                    self.version.metadata_version.clone(),
                );
                ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(node.pod_name.clone()),
                        namespace: Some(self.namespace.clone()),
                        labels: Some(self.node_labels(pool, &node)),
                        owner_references: self.owner.clone().map(|owner| vec![owner]),
                        ..ObjectMeta::default()
                    },
                    data: Some(data),
                    ..ConfigMap::default()
                }
            })
            .collect()
    }

    /// Checks that the user ConfigMaps the Kafka refers to (external logging, JMX exporter
    /// rules) were found and are usable; [`KafkaCluster::config_maps`] falls back to defaults
    /// when they are not, so the caller should check first and report the error.
    pub fn validate_external_configuration(
        &self,
        external: &ExternalConfiguration,
    ) -> Result<(), ModelError> {
        self.logging_configuration(external.logging.as_deref())?;
        self.metrics_json(external.metrics.as_deref())?;
        Ok(())
    }

    /// The JMX Prometheus exporter rules as JSON, when the exporter is configured.
    fn metrics_json(&self, external: Option<&str>) -> Result<Option<String>, ModelError> {
        let Some(MetricsConfig::JmxPrometheusExporter(exporter)) = &self.spec.metrics_config else {
            return Ok(None);
        };
        let reference = exporter
            .value_from
            .as_ref()
            .and_then(|value_from| value_from.config_map_key_ref.as_ref());
        let missing = || {
            let (name, key) = reference
                .map(|reference| (reference.name.as_str(), reference.key.as_str()))
                .unwrap_or_default();
            ModelError::InvalidConfiguration(format!(
                "ConfigMap {name} does not exist or doesn't contain the configuration under the {key} key."
            ))
        };
        let content = external.ok_or_else(missing)?;
        let rules: serde_json::Value = serde_yaml_ng::from_str(content).map_err(|error| {
            ModelError::InvalidConfiguration(format!(
                "The JMX Prometheus exporter configuration is not valid YAML: {error}"
            ))
        })?;
        Ok(Some(rules.to_string()))
    }

    /// Labels of a node's ConfigMap: the pool's labels and the pod name.
    fn node_labels(&self, pool: &NodePool, node: &KafkaNode) -> BTreeMap<String, String> {
        let mut result = self
            .component_labels()
            .labels(&pool.resource_labels, &self.config.label_exclusion);
        result.insert(labels::POOL_NAME.to_owned(), pool.name.clone());
        result.insert(labels::BROKER_ROLE.to_owned(), node.is_broker().to_string());
        result.insert(
            labels::CONTROLLER_ROLE.to_owned(),
            node.is_controller().to_string(),
        );
        result.insert(POD_NAME_LABEL.to_owned(), node.pod_name.clone());
        result
    }

    /// `strimzi.io/broker-configuration-hash` of every node by pod name.
    pub fn configuration_hashes(&self, addresses: &ListenerAddresses) -> BTreeMap<String, String> {
        self.nodes()
            .map(|node| {
                let hash = self.configuration_hash(&node, addresses);
                (node.pod_name, hash)
            })
            .collect()
    }

    /// `strimzi.io/broker-configuration-hash` of `node`: a hash of its `server.config`
    /// without the options Kafka can change while running, so the node rolls exactly when
    /// its static configuration (listeners, advertised addresses, security, plugins and
    /// static user options) changes.
    pub fn configuration_hash(&self, node: &KafkaNode, addresses: &ListenerAddresses) -> String {
        hash_stub(&self.render_server_config(node, addresses, UserOptions::StaticOnly))
    }

    /// Warnings about `spec.kafka.config`: dropped forbidden options, replication settings
    /// left at Kafka's unsafe defaults and options that do nothing in KRaft clusters.
    pub fn configuration_warnings(&self) -> Vec<ModelWarning> {
        let (_, mut warnings) = user_config::user_configuration(self.spec.config.as_ref());
        let config = self.spec.config.as_ref();
        let is_set = |key: &str| config.is_some_and(|config| config.contains_key(key));
        let brokers = self.brokers().count();
        if brokers > 1 && !is_set("default.replication.factor") {
            warnings.push(ModelWarning::new(
                "KafkaDefaultReplicationFactor",
                "default.replication.factor option is not configured. It defaults to 1 which does not guarantee reliability and availability. You should configure this option in .spec.kafka.config.",
            ));
        }
        if brokers > 1 && !is_set("min.insync.replicas") {
            warnings.push(ModelWarning::new(
                "KafkaMinInsyncReplicas",
                "min.insync.replicas option is not configured. It defaults to 1 which does not guarantee reliability and availability. You should configure this option in .spec.kafka.config.",
            ));
        }
        for (key, reason) in [
            (
                "inter.broker.protocol.version",
                "KafkaInterBrokerProtocolVersionInKRaft",
            ),
            (
                "log.message.format.version",
                "KafkaLogMessageFormatVersionInKRaft",
            ),
        ] {
            if is_set(key) {
                warnings.push(ModelWarning::new(
                    reason,
                    format!("{key} is not used in KRaft-based Kafka clusters and should be removed from the Kafka custom resource."),
                ));
            }
        }
        warnings
    }
}
