//! The commands that set Strimzi's annotations: `pause`, `resume`, `roll`, `rebalance`.

use crate::cli::{RebalanceAction, RollTarget};
use crate::connection::Cluster;
use crate::error::PluginError;

/// Sets (`paused`) or removes `strimzi.io/pause-reconciliation` on Kafka `kafka`.
pub async fn pause(cluster: &Cluster, kafka: &str, paused: bool) -> Result<String, PluginError> {
    todo!()
}

/// Sets `strimzi.io/manual-rolling-update=true` on what `target` and `name` say.
pub async fn roll(
    cluster: &Cluster,
    target: RollTarget,
    name: &str,
) -> Result<String, PluginError> {
    todo!()
}

/// Sets `strimzi.io/rebalance` on KafkaRebalance `name`.
pub async fn rebalance(
    cluster: &Cluster,
    action: RebalanceAction,
    name: &str,
) -> Result<String, PluginError> {
    todo!()
}
