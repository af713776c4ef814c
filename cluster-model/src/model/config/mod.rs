//! The per-node ConfigMaps (`server.config`, `log4j2.properties`, metrics configuration,
//! cluster ID and metadata version), the configuration hash of each node (see [`hash`]), and
//! the configuration warnings.

pub mod broker;
pub mod hash;
pub mod logging;
pub mod options;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sha1::{Digest, Sha1};
use strimzi_api::common::MetricsConfig;
use strimzi_api::kafka::KafkaListenerAuthentication;
use strimzi_api::labels;

use crate::model::listeners::ListenerAddresses;
use crate::model::{KafkaCluster, KafkaNode, ModelError, ModelWarning, NodePool};
use logging::default_logging_configuration;

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

/// The user ConfigMap keys a Kafka's external configuration comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExternalConfigurationSources<'a> {
    /// `spec.kafka.logging.valueFrom`, when logging is `external`.
    pub logging: Option<&'a strimzi_api::common::ExternalConfigurationReference>,
    /// `spec.kafka.metricsConfig.valueFrom`, when metrics are `jmxPrometheusExporter`.
    pub metrics: Option<&'a strimzi_api::common::ExternalConfigurationReference>,
}

impl KafkaCluster {
    /// Where [`ExternalConfiguration`]'s values are to be read from.
    pub fn external_configuration_sources(&self) -> ExternalConfigurationSources<'_> {
        use strimzi_api::common::{Logging, MetricsConfig};
        ExternalConfigurationSources {
            logging: match &self.spec.logging {
                Some(Logging::External(external)) => external.value_from.as_ref(),
                _ => None,
            },
            metrics: match &self.spec.metrics_config {
                Some(MetricsConfig::JmxPrometheusExporter(exporter)) => {
                    exporter.value_from.as_ref()
                }
                _ => None,
            },
        }
    }
}

/// Strimzi's hash stub: the first eight hex digits of the SHA-1 digest of `text` in
/// US-ASCII, where a character outside ASCII counts as `?` (as Java encodes it).
pub fn hash_stub(text: &str) -> String {
    let ascii: Vec<u8> = text
        .chars()
        .map(|character| {
            u8::try_from(character)
                .ok()
                .filter(u8::is_ascii)
                .unwrap_or(b'?')
        })
        .collect();
    let digest = Sha1::digest(&ascii);
    digest
        .iter()
        .take(4)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

impl KafkaCluster {
    /// Each node's `server.config`, by pod name.
    pub fn server_configs(&self, addresses: &ListenerAddresses) -> BTreeMap<String, String> {
        self.nodes()
            .map(|node| {
                let config = self.server_config(&node, addresses);
                (node.pod_name, config)
            })
            .collect()
    }

    /// One ConfigMap per node, named after its pod.
    pub fn config_maps(
        &self,
        addresses: &ListenerAddresses,
        external: &ExternalConfiguration,
    ) -> Vec<ConfigMap> {
        self.config_maps_of(&self.server_configs(addresses), external)
    }

    /// [`KafkaCluster::config_maps`], with each node's `server.config` as
    /// [`KafkaCluster::server_configs`] gave it.
    pub fn config_maps_of(
        &self,
        server_configs: &BTreeMap<String, String>,
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
                if let Some(server_config) = server_configs.get(&node.pod_name) {
                    data.insert(SERVER_CONFIG_KEY.to_owned(), server_config.clone());
                }
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
                        owner_references: pool.owner.clone().map(|owner| vec![owner]),
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
        metrics_json(self.spec.metrics_config.as_ref(), external)
    }

    /// Labels of a node's ConfigMap: the pool's propagated user labels, Strimzi's labels with
    /// the pool name, and the pod name (no role labels: only pods carry them).
    fn node_labels(&self, pool: &NodePool, node: &KafkaNode) -> BTreeMap<String, String> {
        let mut result = self
            .component_labels()
            .labels(&pool.resource_labels, &self.config.label_exclusion);
        result.insert(labels::POOL_NAME.to_owned(), pool.name.clone());
        result.insert(labels::POD_NAME.to_owned(), node.pod_name.clone());
        result
    }

    /// Warnings about `spec.kafka.config`: dropped forbidden options and options that do
    /// nothing in KRaft clusters. (Replication settings are checked by [`super::resolve`].)
    pub fn configuration_warnings(&self) -> Vec<ModelWarning> {
        let mut warnings = self.user_options.warnings.clone();
        for listener in &self.spec.listeners {
            let Some(KafkaListenerAuthentication::Custom(custom)) = &listener.authentication else {
                continue;
            };
            let options = custom
                .listener_config
                .iter()
                .flat_map(|config| config.keys());
            for key in options.filter(|key| options::is_forbidden_listener_option(key)) {
                warnings.push(ModelWarning::new(
                    options::FORBIDDEN_OPTION_REASON,
                    format!(
                        "Configuration option \"{key}\" of listener {} is forbidden and will be ignored",
                        listener.name
                    ),
                ));
            }
        }
        let config = self.spec.config.as_ref();
        let is_set = |key: &str| config.is_some_and(|config| config.contains_key(key));
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

/// The JMX Prometheus exporter rules of a `metricsConfig` section as JSON (`external` is the
/// content of the ConfigMap it names), `None` without the exporter.
pub(crate) fn metrics_json(
    metrics_config: Option<&MetricsConfig>,
    external: Option<&str>,
) -> Result<Option<String>, ModelError> {
    let Some(MetricsConfig::JmxPrometheusExporter(exporter)) = metrics_config else {
        return Ok(None);
    };
    let reference = exporter
        .value_from
        .as_ref()
        .and_then(|value_from| value_from.config_map_key_ref.as_ref())
        .ok_or_else(|| {
            ModelError::InvalidConfiguration(
                "Metrics configuration is invalid: [ConfigMap reference is missing]".to_owned(),
            )
        })?;
    let content = external.ok_or_else(|| {
        ModelError::InvalidConfiguration(format!(
            "ConfigMap {} does not exist or does not contain specified key {}",
            reference.name, reference.key
        ))
    })?;
    if content.is_empty() {
        return Ok(Some("{}".to_owned()));
    }
    let rules: serde_json::Value =
        serde_yaml_ng::from_str(content).map_err(ModelError::MetricsConfiguration)?;
    Ok(Some(rules.to_string()))
}
