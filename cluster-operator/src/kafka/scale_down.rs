//! The broker scale-down check: removing brokers (scaling a pool down, deleting it, or taking
//! the broker role from it) is refused while they still hold partition replicas, unless the
//! Kafka says `strimzi.io/skip-broker-scaledown-check: "true"`. Nothing is applied then: the
//! reconciliation fails with Strimzi's `InvalidResourceException` until the replicas have
//! moved, and is retried with backoff. With a `remove-brokers` auto-rebalance configured, a
//! pool's scale-down instead waits: the brokers are reported as blocked, kept running, and
//! a rebalance moves their replicas off (module `auto_rebalance`).
//!
//! A check that cannot run refuses as well: when the operator's client certificate Secret
//! (`<cluster>-cluster-operator-certs`) is missing, or the brokers cannot be asked, the
//! brokers stay and the reconciliation fails with a message saying why, until the check can
//! run or the Kafka says to skip it.

use std::collections::BTreeSet;

use strimzi_api::annotations;
use strimzi_api::kafka::KafkaAutoRebalanceMode;

use super::objects::LiveObjects;
use super::{ClusterCas, ReconcileError, Reconciliation};
use crate::model::KafkaCluster;

/// The brokers of `removed` that host a replica of a partition of `topics`.
pub(super) fn hosting_replicas(
    removed: &BTreeSet<i32>,
    topics: &[strimzi_operator_common::kafka::TopicDescription],
) -> BTreeSet<i32> {
    topics
        .iter()
        .flat_map(|topic| &topic.partitions)
        .flat_map(|partition| &partition.replicas)
        .filter(|id| removed.contains(id))
        .copied()
        .collect()
}

/// The node IDs of a list, as Strimzi prints them: `[3, 4]`.
fn ids(ids: &BTreeSet<i32>) -> String {
    format!(
        "[{}]",
        ids.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

impl Reconciliation<'_> {
    /// Refuses to remove brokers that the live StrimziPodSets run and `cluster` no longer
    /// has while they host partition replicas (or while the operator cannot tell); returns
    /// them instead (blocked: to be kept until a rebalance empties them) when a
    /// `remove-brokers` auto-rebalance is configured and their pools still list them.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn check_broker_removal(
        &self,
        cluster: &KafkaCluster,
        live: &LiveObjects,
        cas: &ClusterCas,
    ) -> Result<BTreeSet<i32>, ReconcileError> {
        let desired: BTreeSet<i32> = cluster.brokers().map(|node| node.node_id).collect();
        let removed: BTreeSet<i32> = live
            .broker_node_ids()
            .difference(&desired)
            .copied()
            .collect();
        let skip = annotations::is_true(
            self.kafka.metadata.annotations.as_ref(),
            annotations::SKIP_BROKER_SCALEDOWN_CHECK,
        );
        if removed.is_empty() || skip {
            return Ok(BTreeSet::new());
        }
        // Every way the check cannot run ends in a refusal, never in a removal.
        let hosting = match live.operator_secret() {
            None => Err(format!(
                "the Secret {} with the operator's client certificate is missing",
                strimzi_api::naming::cluster_operator_certs_secret(&self.name)
            )),
            Some(identity) => match self.admin_client(cluster, identity, cas) {
                Ok(admin) => super::roll::describe_all_topics(&admin)
                    .await
                    .map(|topics| hosting_replicas(&removed, &topics))
                    .map_err(|error| error.to_string()),
                Err(error) => Err(error.to_string()),
            },
        };
        let in_pools: BTreeSet<i32> = self
            .pools
            .iter()
            .filter_map(|pool| pool.status.as_ref()?.node_ids.as_ref())
            .flatten()
            .copied()
            .collect();
        let rebalanced_first = self
            .auto_rebalance_configured(KafkaAutoRebalanceMode::RemoveBrokers)
            .is_some()
            && removed.is_subset(&in_pools);
        match hosting {
            Ok(hosting) if hosting.is_empty() => Ok(BTreeSet::new()),
            Ok(_) if rebalanced_first => Ok(removed),
            Ok(hosting) => Err(ReconcileError::ScaleDownBlocked(format!(
                "Cannot scale down brokers {} because brokers {} are not empty",
                ids(&removed),
                ids(&hosting)
            ))),
            Err(error) => Err(ReconcileError::ScaleDownBlocked(format!(
                "Cannot scale down brokers {}: whether they still hold partition replicas cannot be checked ({error}); annotate the Kafka with {}: \"true\" to remove them anyway",
                ids(&removed),
                annotations::SKIP_BROKER_SCALEDOWN_CHECK
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strimzi_operator_common::kafka::{PartitionDescription, TopicDescription};

    #[test]
    fn only_removed_brokers_with_replicas_block() {
        let topics = [TopicDescription {
            name: "t".to_owned(),
            topic_id: Default::default(),
            internal: false,
            partitions: vec![PartitionDescription {
                partition: 0,
                leader: 0,
                replicas: vec![0, 1],
                isr: vec![0, 1],
            }],
        }];
        let removed = BTreeSet::from([1, 2]);
        assert_eq!(hosting_replicas(&removed, &topics), BTreeSet::from([1]));
        assert!(hosting_replicas(&BTreeSet::from([2]), &topics).is_empty());
        assert_eq!(ids(&removed), "[1, 2]");
    }
}
