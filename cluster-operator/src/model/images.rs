//! Kafka container images by Kafka version (`STRIMZI_KAFKA_IMAGES`) and the supported versions.
//! Owner: nodes and pods.

use std::collections::BTreeMap;

/// The Kafka image of each supported Kafka version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KafkaImages {
    /// Image by Kafka version.
    pub by_version: BTreeMap<String, String>,
}
