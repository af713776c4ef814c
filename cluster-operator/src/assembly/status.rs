//! What the reconciliation reports: the Kafka's status (listeners, node pools, cluster ID,
//! versions, warnings) and each KafkaNodePool's status (node IDs, roles, replicas, selector,
//! cluster ID).

use base64::Engine;
use kube::ResourceExt;
use std::collections::BTreeMap;

use strimzi_api::kafka::{KafkaStatus, UsedNodePoolStatus};
use strimzi_api::labels;
use strimzi_api::node_pool::KafkaNodePoolStatus;
use strimzi_operator_common::controller::Reconciled;
use strimzi_operator_common::status;

use super::{ClusterCas, ReconcileError, Reconciliation};
use crate::model::KafkaCluster;
use crate::model::listeners::ListenerAddresses;

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
        addresses: &ListenerAddresses,
        cas: &ClusterCas,
    ) -> Reconciled<KafkaStatus> {
        let listeners = cluster.listener_status(
            addresses,
            &cas.cluster.authority.certificate().to_pem(),
            &BTreeMap::new(),
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
            kafka_metadata_version: Some(cluster.version.metadata_version.clone()),
            operator_last_successful_version: Some(
                crate::model::images::STRIMZI_VERSION.to_owned(),
            ),
            ..KafkaStatus::default()
        };
        self.warnings
            .iter()
            .fold(Reconciled::new(status), |reconciled, (reason, message)| {
                reconciled.warn(reason, message)
            })
    }

    /// Writes each node pool's status where it changed.
    pub(super) async fn write_pool_statuses(
        &self,
        cluster: &KafkaCluster,
    ) -> Result<(), ReconcileError> {
        let selector = cluster.component_labels().selector();
        for pool in &cluster.pools {
            let Some(resource) = self
                .pools
                .iter()
                .find(|found| found.name_any() == pool.name)
            else {
                continue;
            };
            let mut pool_selector = selector.clone();
            pool_selector.insert(labels::POOL_NAME.to_owned(), pool.name.clone());
            let next = KafkaNodePoolStatus {
                node_ids: Some(pool.node_ids.iter().copied().collect()),
                roles: Some(pool.roles.iter().copied().collect()),
                replicas: Some(i32::try_from(pool.node_ids.len()).unwrap_or(i32::MAX)),
                label_selector: Some(strimzi_operator_common::labels::selector_string(
                    &pool_selector,
                )),
                cluster_id: Some(cluster.cluster_id.clone()),
                ..KafkaNodePoolStatus::default()
            };
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
