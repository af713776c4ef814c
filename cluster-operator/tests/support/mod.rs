//! What the model tests and the model benchmark share: the operator settings of a default
//! installation in namespace `strimzi`.

use strimzi_cluster_operator::model::ModelConfig;
use strimzi_cluster_operator::model::images::{DEFAULT_KAFKA_INIT_IMAGE, KafkaImages};
use strimzi_operator_common::config::DEFAULT_LABELS_EXCLUSION_PATTERN;
use strimzi_operator_common::labels::LabelExclusion;

/// The model settings of an operator installed with Strimzi's defaults in namespace
/// `strimzi`.
pub fn default_model_config() -> ModelConfig {
    ModelConfig {
        images: KafkaImages::strimzi_defaults(),
        cluster_domain: "cluster.local".into(),
        operator_namespace: "strimzi".into(),
        operator_namespace_labels: None,
        network_policy_generation: true,
        image_pull_policy: None,
        image_pull_secrets: Vec::new(),
        label_exclusion: LabelExclusion::new(DEFAULT_LABELS_EXCLUSION_PATTERN)
            .unwrap_or_else(|error| panic!("the default label exclusion is valid: {error}")),
        managed_by: "strimzi-cluster-operator".into(),
        kafka_init_image: DEFAULT_KAFKA_INIT_IMAGE.into(),
    }
}
