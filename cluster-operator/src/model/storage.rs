//! PersistentVolumeClaims of the nodes' persistent and JBOD volumes. Owner: nodes and pods.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;

use super::KafkaCluster;

impl KafkaCluster {
    /// The claims every current node needs.
    pub fn persistent_volume_claims(&self) -> Vec<PersistentVolumeClaim> {
        todo!("persistent_volume_claims")
    }
}
