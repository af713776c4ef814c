//! The finalizers Strimzi's operators put on resources, each where a deletion needs work
//! outside Kubernetes before the resource may go.

/// On a KafkaTopic (with finalizers enabled): deleting it deletes its topic in Kafka first.
pub const TOPIC_OPERATOR: &str = "strimzi.io/topic-operator";

/// On an automatic rebalance (KafkaRebalance): the Kafka reconciler removes it once it no
/// longer follows the rebalance, so that the rebalance is not lost while it still matters.
pub const AUTO_REBALANCING: &str = "strimzi.io/auto-rebalancing";
