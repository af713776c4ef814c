//! The per-node ConfigMaps (`server.config`, `log4j2.properties`, metrics configuration).
//! Owner: configuration.

use k8s_openapi::api::core::v1::ConfigMap;

use super::KafkaCluster;
use super::listeners::ListenerAddresses;

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

impl KafkaCluster {
    /// One ConfigMap per node, named after its pod.
    pub fn config_maps(
        &self,
        _addresses: &ListenerAddresses,
        _external: &ExternalConfiguration,
    ) -> Vec<ConfigMap> {
        todo!("config_maps")
    }
}
