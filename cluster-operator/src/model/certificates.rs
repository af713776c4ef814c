//! The server certificate each node needs, and the per-node certificate Secrets. Owner:
//! listeners and services.

use strimzi_certificate_manager::leaf::LeafSpec;

use super::KafkaCluster;
use super::listeners::ListenerAddresses;

impl KafkaCluster {
    /// The certificate request of every node: its pod name, Service names and, for brokers,
    /// the external addresses of the listeners.
    pub fn node_certificate_specs(&self, _addresses: &ListenerAddresses) -> Vec<LeafSpec> {
        todo!("node_certificate_specs")
    }
}
