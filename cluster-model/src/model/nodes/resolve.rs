//! Resolving a Kafka and its node pools into a [`KafkaCluster`].

use strimzi_api::node_pool::{KafkaNodePool, KafkaNodePoolStatus, ProcessRole};
use strimzi_api::selectors::{owner_reference, selector_string};
use strimzi_api::storage::{SingleVolumeStorage, Storage};

use crate::model::config::options::UserOptions;
use crate::model::nodes::images::resolve_version;
use crate::model::nodes::node_ids::assign_node_ids;
use crate::model::nodes::storage::validate_storage;
use crate::model::{KafkaCluster, ModelError, ModelInput, ModelWarning, NodePool};

/// Warning reason: an even number of KRaft controllers.
pub const KRAFT_CONTROLLER_NODE_COUNT: &str = "KafkaKRaftControllerNodeCount";
/// Warning reason: `default.replication.factor` left at Kafka's default of 1.
pub const DEFAULT_REPLICATION_FACTOR: &str = "KafkaDefaultReplicationFactor";
/// Warning reason: `min.insync.replicas` left at Kafka's default of 1.
pub const MIN_INSYNC_REPLICAS: &str = "KafkaMinInsyncReplicas";
/// Warning reason: a storage choice that loses data.
pub const KAFKA_STORAGE: &str = "KafkaStorage";

/// See [`crate::model::resolve`].
pub fn resolve(input: &ModelInput<'_>) -> Result<KafkaCluster, ModelError> {
    let kafka = input.kafka;
    let name = kafka.metadata.name.clone().unwrap_or_default();
    let namespace = kafka.metadata.namespace.clone().unwrap_or_default();
    validate_pools(&name, input.pools)?;

    let (assignments, mut warnings) = assign_node_ids(input.pools)?;
    let current_metadata_version = input.metadata_version_in_use.or_else(|| {
        kafka
            .status
            .as_ref()
            .and_then(|status| status.kafka_metadata_version.as_deref())
    });
    let version = resolve_version(
        &kafka.spec.kafka,
        &input.config.images,
        current_metadata_version,
    )?;

    let mut pools: Vec<NodePool> = input
        .pools
        .iter()
        .map(|pool| {
            let pool_name = pool.metadata.name.clone().unwrap_or_default();
            let ids = assignments.get(&pool_name).cloned().unwrap_or_default();
            NodePool {
                owner: owner_reference(pool),
                resource_labels: pool.metadata.labels.clone().unwrap_or_default(),
                roles: pool.spec.roles.iter().copied().collect(),
                node_ids: ids.desired,
                removed_node_ids: ids.removed,
                storage: pool.spec.storage.clone(),
                resources: pool.spec.resources.clone(),
                jvm_options: pool
                    .spec
                    .jvm_options
                    .clone()
                    .or_else(|| kafka.spec.kafka.jvm_options.clone()),
                template: pool.spec.template.clone(),
                name: pool_name,
            }
        })
        .collect();
    pools.sort_by(|a, b| a.name.cmp(&b.name));

    let cluster = KafkaCluster {
        owner: owner_reference(kafka),
        resource_labels: kafka.metadata.labels.clone().unwrap_or_default(),
        spec: kafka.spec.kafka.clone(),
        user_options: UserOptions::of(&kafka.spec.kafka),
        kafka: kafka.clone(),
        cluster_id: input.cluster_id.to_owned(),
        version,
        pools,
        config: input.config.clone(),
        warnings: Vec::new(),
        quorum_voters: None,
        name,
        namespace,
    };
    cluster.validate_configuration()?;
    cluster.validate_listeners()?;
    warnings.extend(spec_warnings(&cluster));
    Ok(KafkaCluster {
        warnings,
        ..cluster
    })
}

/// Whether any of `pools` has nodes (at least one replica) with `role`: a KRaft cluster
/// needs controllers and brokers.
pub fn has_nodes_with(pools: &[KafkaNodePool], role: ProcessRole) -> bool {
    pools
        .iter()
        .any(|pool| pool.spec.has_role(role) && pool.spec.replicas > 0)
}

/// Checks what a KRaft cluster needs from its pools: at least one, each with a role, valid
/// storage, and nodes with the controller and broker roles.
fn validate_pools(cluster: &str, pools: &[KafkaNodePool]) -> Result<(), ModelError> {
    if pools.is_empty() {
        return Err(ModelError::InvalidNodePools(format!(
            "No KafkaNodePools found for Kafka cluster {cluster}: at least one KafkaNodePool \
             labelled strimzi.io/cluster={cluster} is required"
        )));
    }
    for pool in pools {
        let pool_name = pool.metadata.name.as_deref().unwrap_or_default();
        if pool.spec.roles.is_empty() {
            return Err(ModelError::InvalidNodePools(format!(
                "KafkaNodePool {pool_name} has no role defined in .spec.roles"
            )));
        }
        validate_storage(pool_name, &pool.spec.storage)?;
    }
    for role in [ProcessRole::Controller, ProcessRole::Broker] {
        if !has_nodes_with(pools, role) {
            return Err(ModelError::InvalidNodePools(format!(
                "At least one KafkaNodePool with the {role} role and at least one replica is \
                 required when KRaft mode is enabled"
            )));
        }
    }
    Ok(())
}

/// A key of `spec.kafka.config` as text, if set.
fn config_value(cluster: &KafkaCluster, key: &str) -> Option<String> {
    let value = cluster.spec.config.as_ref()?.get(key)?;
    Some(match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    })
}

/// The warnings Strimzi's spec checker reports about a valid but risky cluster.
fn spec_warnings(cluster: &KafkaCluster) -> Vec<ModelWarning> {
    let mut warnings = Vec::new();
    let controllers = cluster.controllers().count();
    if controllers == 2 {
        warnings.push(ModelWarning::new(
            KRAFT_CONTROLLER_NODE_COUNT,
            "Running KRaft controller quorum with two nodes is not advisable as both nodes will \
             be needed to avoid downtime. It is recommended that a minimum of three nodes are used.",
        ));
    } else if controllers.is_multiple_of(2) {
        warnings.push(ModelWarning::new(
            KRAFT_CONTROLLER_NODE_COUNT,
            "Running KRaft controller quorum with an odd number of nodes is recommended.",
        ));
    }
    let brokers = cluster.brokers().count();
    if brokers > 1 {
        for (key, reason) in [
            ("default.replication.factor", DEFAULT_REPLICATION_FACTOR),
            ("min.insync.replicas", MIN_INSYNC_REPLICAS),
        ] {
            if config_value(cluster, key).is_none() {
                warnings.push(ModelWarning::new(
                    reason,
                    format!(
                        "{key} option is not configured. It defaults to 1 which does not \
                         guarantee reliability and availability. You should configure this \
                         option in .spec.kafka.config."
                    ),
                ));
            }
        }
    }
    let broker_storage_is_ephemeral = cluster
        .pools
        .iter()
        .filter(|pool| pool.roles.contains(&ProcessRole::Broker) && !pool.node_ids.is_empty())
        .all(|pool| is_ephemeral(&pool.storage));
    if brokers == 1 && broker_storage_is_ephemeral {
        warnings.push(ModelWarning::new(
            KAFKA_STORAGE,
            "A Kafka cluster with a single broker node and ephemeral storage will lose topic \
             messages after any restart or rolling update.",
        ));
    }
    warnings
}

/// Whether every volume of `storage` is ephemeral.
fn is_ephemeral(storage: &Storage) -> bool {
    match storage {
        Storage::Ephemeral(_) => true,
        Storage::PersistentClaim(_) => false,
        Storage::Jbod(jbod) => jbod
            .volumes
            .iter()
            .flatten()
            .all(|volume| matches!(volume, SingleVolumeStorage::Ephemeral(_))),
    }
}

impl KafkaCluster {
    /// The status of pool `pool` after this reconciliation (without conditions, which the
    /// caller adds): its node IDs, roles, replicas, the selector of its pods and the cluster ID.
    pub fn pool_status(&self, pool: &NodePool) -> KafkaNodePoolStatus {
        KafkaNodePoolStatus {
            node_ids: Some(pool.node_ids.iter().copied().collect()),
            roles: Some(pool.roles.iter().copied().collect()),
            replicas: i32::try_from(pool.node_ids.len()).ok(),
            label_selector: Some(selector_string(&self.pool_selector(pool))),
            cluster_id: Some(self.cluster_id.clone()),
            ..KafkaNodePoolStatus::default()
        }
    }
}
