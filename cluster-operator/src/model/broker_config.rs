//! Each node's `server.config`. Owner: configuration.

use super::listeners::ListenerAddresses;
use super::{KafkaCluster, KafkaNode};

impl KafkaCluster {
    /// The `server.config` of `node`.
    pub fn server_config(&self, _node: &KafkaNode, _addresses: &ListenerAddresses) -> String {
        todo!("server_config")
    }
}
