//! Annotation keys that users set on Strimzi resources to ask an operator for something, and
//! that operators set to record what they did.

/// `"true"` stops the operator from changing the resource's cluster until removed.
pub const PAUSE_RECONCILIATION: &str = "strimzi.io/pause-reconciliation";
/// `"true"` on a StrimziPodSet or pod asks for its pods to be restarted one by one.
pub const MANUAL_ROLLING_UPDATE: &str = "strimzi.io/manual-rolling-update";
/// On a KafkaNodePool: node IDs (ranges like `[10-19, 30]`) to use first when scaling up.
pub const NEXT_NODE_IDS: &str = "strimzi.io/next-node-ids";
/// On a KafkaNodePool: node IDs (ranges like `[10-19, 30]`) to remove first when scaling down.
pub const REMOVE_NODE_IDS: &str = "strimzi.io/remove-node-ids";
/// Accepted on a Kafka for compatibility; node pools are always used in the `v1` API.
pub const NODE_POOLS: &str = "strimzi.io/node-pools";
/// `"true"` on a pod deletes the pod together with its PersistentVolumeClaims.
pub const DELETE_POD_AND_PVC: &str = "strimzi.io/delete-pod-and-pvc";
/// `"true"` on a CA certificate Secret renews the CA certificate (same key).
pub const FORCE_RENEW: &str = "strimzi.io/force-renew";
/// `"true"` on a CA key Secret replaces the CA key (and certificate).
pub const FORCE_REPLACE: &str = "strimzi.io/force-replace";
/// `"true"` on a Kafka skips the check that brokers being removed hold no partitions.
pub const SKIP_BROKER_SCALEDOWN_CHECK: &str = "strimzi.io/skip-broker-scaledown-check";
/// `"dynamic"` on a Kafka moves its KRaft controller quorum to the dynamic form (KIP-853,
/// `kraft.version` 1), whose controllers can then be scaled. Not in Strimzi, and one-way:
/// Strimzi 1.2 cannot change the controllers of a dynamic quorum.
pub const KRAFT_QUORUM: &str = "strimzi.io/kraft-quorum";
/// `"true"` on a KafkaConnect lets KafkaConnector resources manage its connectors.
pub const USE_CONNECTOR_RESOURCES: &str = "strimzi.io/use-connector-resources";
/// `"true"` on a KafkaConnect rebuilds its image even when the build did not change.
pub const FORCE_REBUILD: &str = "strimzi.io/force-rebuild";
/// `"true"` on a KafkaConnector restarts the connector.
pub const RESTART: &str = "strimzi.io/restart";
/// A task number on a KafkaConnector restarts that task.
pub const RESTART_TASK: &str = "strimzi.io/restart-task";
/// A connector name on a KafkaMirrorMaker2 restarts that connector.
pub const RESTART_CONNECTOR: &str = "strimzi.io/restart-connector";
/// `<connector>:<task>` on a KafkaMirrorMaker2 restarts that connector task.
pub const RESTART_CONNECTOR_TASK: &str = "strimzi.io/restart-connector-task";
/// `list`, `alter` or `reset` on a KafkaConnector acts on its offsets.
pub const CONNECTOR_OFFSETS: &str = "strimzi.io/connector-offsets";
/// The connector of a KafkaMirrorMaker2 that [`CONNECTOR_OFFSETS`] applies to.
pub const MIRRORMAKER_CONNECTOR: &str = "strimzi.io/mirrormaker-connector";
/// `approve`, `stop`, `refresh` or `template` on a KafkaRebalance drives the rebalance.
pub const REBALANCE: &str = "strimzi.io/rebalance";
/// `"true"` on a KafkaRebalance marks it as a template for automatic rebalances rather than a
/// rebalance to run.
pub const REBALANCE_TEMPLATE: &str = "strimzi.io/rebalance-template";
/// `"true"` on a KafkaRebalance approves its proposal without waiting for a person.
pub const REBALANCE_AUTO_APPROVAL: &str = "strimzi.io/rebalance-auto-approval";
/// `"false"` on a KafkaTopic stops the topic operator from managing the topic.
pub const MANAGED: &str = "strimzi.io/managed";

/// On a CA certificate Secret: how many times the CA certificate has been (re)issued.
pub const CA_CERT_GENERATION: &str = "strimzi.io/ca-cert-generation";
/// On a CA key Secret: how many times the CA key has been replaced.
pub const CA_KEY_GENERATION: &str = "strimzi.io/ca-key-generation";
/// On pods: the cluster CA certificate generation the pod was started with.
pub const CLUSTER_CA_CERT_GENERATION: &str = "strimzi.io/cluster-ca-cert-generation";
/// On pods: the cluster CA key generation the pod was started with.
pub const CLUSTER_CA_KEY_GENERATION: &str = "strimzi.io/cluster-ca-key-generation";
/// On pods: the clients CA certificate generation the pod was started with.
pub const CLIENTS_CA_CERT_GENERATION: &str = "strimzi.io/clients-ca-cert-generation";
/// On pods: a hash of the server certificate the pod was started with.
pub const SERVER_CERT_HASH: &str = "strimzi.io/server-cert-hash";
/// On pods of a StrimziPodSet: a hash of the pod definition, used to detect outdated pods.
pub const REVISION: &str = "strimzi.io/revision";
/// On pods of a StrimziPodSet: a hash of the containers' resources, which
/// [`REVISION`] leaves out.
pub const RESOURCE_REVISION: &str = "strimzi.io/resource-revision";
/// On PersistentVolumeClaims: whether to delete the claim when its node is removed.
pub const DELETE_CLAIM: &str = "strimzi.io/delete-claim";
/// On Kafka node pods and pod sets, and on Connect and MirrorMaker 2 pods: the Kafka version
/// they run.
pub const KAFKA_VERSION: &str = "strimzi.io/kafka-version";
/// On pods: a digest of the configuration generated for them (a Kafka node's options, a
/// Connect or bridge configuration); a change rolls them.
pub const CONFIGURATION_HASH: &str = "strimzi.io/configuration-hash";
/// On Connect, MirrorMaker 2, bridge and Cruise Control pods: a digest of the Secrets the
/// configuration uses and of the trusted certificates; a new password or certificate rolls
/// them.
pub const AUTH_HASH: &str = "strimzi.io/auth-hash";
/// On broker pods: the thumbprints of the custom listener certificates they serve.
pub const CUSTOM_LISTENER_CERT_THUMBPRINTS: &str = "strimzi.io/custom-listener-cert-thumbprints";
/// On Kafka node pod sets: the storage the pods were built for.
pub const STORAGE: &str = "strimzi.io/storage";
/// On Connect pods: the build (a hash of the Dockerfile) whose image they expect.
pub const CONNECT_BUILD_REVISION: &str = "strimzi.io/connect-build-revision";
/// On the Cruise Control pod: a digest of its server configuration.
pub const SERVER_CONFIGURATION_HASH: &str = "strimzi.io/server-configuration-hash";
/// On the Cruise Control pod: a digest of its broker capacities.
pub const CAPACITY_CONFIGURATION_HASH: &str = "strimzi.io/capacity-configuration-hash";
/// On the Cruise Control pod: a digest of its logging configuration.
pub const LOGGING_HASH: &str = "strimzi.io/logging-hash";

/// Whether an annotation holds the string `true`, as Strimzi reads boolean annotations
/// (case-insensitive; anything else, or a missing annotation, is `false`).
pub fn is_true(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
    key: &str,
) -> bool {
    annotations
        .and_then(|annotations| annotations.get(key))
        .is_some_and(|value| value.eq_ignore_ascii_case("true"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn boolean_annotations_read_like_strimzi() {
        let mut annotations = BTreeMap::new();
        annotations.insert(PAUSE_RECONCILIATION.to_owned(), "TRUE".to_owned());
        annotations.insert(FORCE_RENEW.to_owned(), "yes".to_owned());
        assert!(is_true(Some(&annotations), PAUSE_RECONCILIATION));
        assert!(!is_true(Some(&annotations), FORCE_RENEW));
        assert!(!is_true(Some(&annotations), MANAGED));
        assert!(!is_true(None, PAUSE_RECONCILIATION));
    }
}
