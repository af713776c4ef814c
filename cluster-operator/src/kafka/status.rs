//! What the reconciliation reports: the Kafka's status (listeners, node pools, cluster ID,
//! versions, warnings) and each KafkaNodePool's status (node IDs, roles, replicas, selector,
//! cluster ID).

use base64::Engine;
use kube::ResourceExt;

use strimzi_api::kafka::{KafkaStatus, UsedNodePoolStatus};
use strimzi_operator_common::controller::Reconciled;
use strimzi_operator_common::status;

use super::{ClusterCas, ReconcileError, Reconciliation, Waiting};
use crate::model::KafkaCluster;
use crate::model::desired::DesiredObjects;
use crate::model::security::cluster_security::cluster_security_status;

/// A new Kafka cluster ID: 16 random bytes in unpadded URL-safe base64, as Kafka's
/// `Uuid.randomUuid()` prints them.
pub fn new_cluster_id() -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 16]>())
}

impl Reconciliation<'_> {
    /// The Kafka's status after a successful reconciliation, with the warnings collected.
    pub(super) fn kafka_status(
        &self,
        cluster: &KafkaCluster,
        desired: &DesiredObjects,
        cas: &ClusterCas,
    ) -> Reconciled<KafkaStatus> {
        let listeners = cluster.listener_status(
            &desired.addresses,
            &cas.cluster.authority.certificate().to_pem(),
            &desired.custom_certificates,
        );
        let status = KafkaStatus {
            listeners: Some(listeners),
            kafka_node_pools: Some(
                cluster
                    .pools
                    .iter()
                    .map(|pool| UsedNodePoolStatus {
                        name: Some(pool.name.clone()),
                    })
                    .collect(),
            ),
            cluster_id: Some(cluster.cluster_id.clone()),
            kafka_version: Some(cluster.version.version.clone()),
            // What the brokers reported now, else to this operator before (the cached status
            // may not show the last write yet), else the status's, else the desired one.
            kafka_metadata_version: self
                .metadata_version
                .clone()
                .or_else(|| self.reported_metadata_version())
                .or_else(|| {
                    self.kafka
                        .status
                        .as_ref()
                        .and_then(|status| status.kafka_metadata_version.clone())
                })
                .or_else(|| Some(cluster.version.metadata_version.clone())),
            operator_last_successful_version: Some(
                crate::model::nodes::images::STRIMZI_VERSION.to_owned(),
            ),
            auto_rebalance: Some(self.auto_rebalance_status()),
            cluster_security: Some(cluster_security_status()),
            ..KafkaStatus::default()
        };
        // One `Warning` condition per warning, as Strimzi writes them.
        self.warnings
            .iter()
            .fold(Reconciled::new(status), |reconciled, (reason, message)| {
                reconciled.warn(reason, message)
            })
    }

    /// The Kafka's status while the reconciliation waits for something: `status` as far as
    /// it is known (or the Kafka's previous status, with the cluster ID, when the listeners
    /// are not known yet), `operatorLastSuccessfulVersion` as before (this reconciliation
    /// has not succeeded yet), the warnings collected, and what is awaited.
    pub(super) fn pending_status(
        &self,
        cluster: &KafkaCluster,
        status: Option<KafkaStatus>,
        waiting: Waiting,
    ) -> Reconciled<KafkaStatus> {
        let previous = self.kafka.status.clone().unwrap_or_default();
        let status = match status {
            Some(status) => KafkaStatus {
                operator_last_successful_version: previous.operator_last_successful_version,
                ..status
            },
            None => KafkaStatus {
                cluster_id: Some(cluster.cluster_id.clone()),
                auto_rebalance: Some(self.auto_rebalance_status()),
                ..previous
            },
        };
        let Waiting {
            reason,
            message,
            recheck_after,
            stalled,
        } = waiting;
        let waiting = if stalled {
            Reconciled::stalled
        } else {
            Reconciled::pending
        };
        self.warnings.iter().fold(
            waiting(status, reason, &message, recheck_after),
            |reconciled, (reason, message)| reconciled.warn(reason, message),
        )
    }

    /// Writes each node pool's status where it changed.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn write_pool_statuses(
        &self,
        cluster: &KafkaCluster,
    ) -> Result<(), ReconcileError> {
        for pool in &cluster.pools {
            let Some(resource) = self
                .pools
                .iter()
                .find(|found| found.name_any() == pool.name)
            else {
                continue;
            };
            let next = cluster.pool_status(pool);
            let previous = resource.status.as_ref();
            let next =
                status::with_conditions(next, previous, Vec::new(), resource.metadata.generation);
            if status::changed(previous, &next) {
                self.operator
                    .runtime
                    .applier()
                    .write_status(resource, &next)
                    .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_ids_look_like_kafka_uuids() {
        let id = new_cluster_id();
        assert_eq!(id.len(), 22);
        assert_ne!(id, new_cluster_id());
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
    }
}
