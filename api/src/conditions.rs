//! Condition types, statuses and reasons that Strimzi writes into resource statuses.

/// The resource is reconciled and its cluster matches the spec.
pub const READY: &str = "Ready";
/// The last reconciliation failed; the reason names the error category.
pub const NOT_READY: &str = "NotReady";
/// Something the user should fix that did not stop the reconciliation.
pub const WARNING: &str = "Warning";
/// Reconciliation is paused by the `strimzi.io/pause-reconciliation` annotation.
pub const RECONCILIATION_PAUSED: &str = "ReconciliationPaused";
/// Ours, not Strimzi's: the operator is still bringing the resource in line with its spec
/// (rolling pods, waiting for them to start); the reason says what it waits for. Present
/// only while that work goes on, next to `Ready` or `NotReady` as Strimzi reports them.
pub const RECONCILING: &str = "Reconciling";

/// Condition status: the condition holds.
pub const STATUS_TRUE: &str = "True";
/// Condition status: the condition does not hold.
pub const STATUS_FALSE: &str = "False";
/// Condition status: not known.
pub const STATUS_UNKNOWN: &str = "Unknown";

/// KafkaRebalance state: just created, no proposal asked for yet.
pub const REBALANCE_NEW: &str = "New";
/// KafkaRebalance state: waiting for Cruise Control to compute a proposal.
pub const REBALANCE_PENDING_PROPOSAL: &str = "PendingProposal";
/// KafkaRebalance state: a proposal is ready for approval.
pub const REBALANCE_PROPOSAL_READY: &str = "ProposalReady";
/// KafkaRebalance state: the approved proposal is being carried out.
pub const REBALANCE_REBALANCING: &str = "Rebalancing";
/// KafkaRebalance state: the rebalance was stopped by the user.
pub const REBALANCE_STOPPED: &str = "Stopped";

/// Reasons written into conditions.
pub mod reasons {
    /// The resource has fields the operator does not know (probably misspelt).
    pub const UNKNOWN_FIELDS: &str = "UnknownFields";
    /// The resource uses fields that are deprecated.
    pub const DEPRECATED_FIELDS: &str = "DeprecatedFields";
    /// The requested change cannot be made (e.g. fewer partitions).
    pub const NOT_SUPPORTED: &str = "NotSupported";
    /// Another resource already manages the same thing.
    pub const RESOURCE_CONFLICT: &str = "ResourceConflict";
    /// A configuration entry is invalid or may not be changed.
    pub const INVALID_CONFIG: &str = "InvalidConfig";
    /// Storage cannot be changed as requested (e.g. a volume would shrink).
    pub const KAFKA_STORAGE: &str = "KafkaStorage";
    /// `default.replication.factor` is not set to a safe value.
    pub const KAFKA_DEFAULT_REPLICATION_FACTOR: &str = "KafkaDefaultReplicationFactor";
    /// `min.insync.replicas` is not set to a safe value.
    pub const KAFKA_MIN_INSYNC_REPLICAS: &str = "KafkaMinInsyncReplicas";
    /// The number of KRaft controllers cannot form a safe quorum.
    pub const KAFKA_KRAFT_CONTROLLER_NODE_COUNT: &str = "KafkaKRaftControllerNodeCount";
    /// Reconciliation is paused by annotation.
    pub const RECONCILIATION_PAUSED: &str = "ReconciliationPaused";
    /// `NotReady` reason of a Kafka whose first reconciliation is still deploying it.
    pub const CREATING: &str = "Creating";
}
