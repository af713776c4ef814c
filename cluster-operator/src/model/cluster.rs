//! Resolving a Kafka and its node pools into a [`KafkaCluster`]. Owner: nodes and pods.

use super::{KafkaCluster, ModelError, ModelInput};

/// See [`super::resolve`].
pub fn resolve(_input: &ModelInput<'_>) -> Result<KafkaCluster, ModelError> {
    todo!("resolve")
}
