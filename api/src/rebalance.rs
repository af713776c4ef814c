//! `KafkaRebalance`: asks Cruise Control for a plan to move partition replicas and, once
//! approved, carries it out.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::Condition;
use crate::schema::FreeFormMap;

/// What a rebalance moves and between which brokers or disks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum KafkaRebalanceMode {
    /// Spread replicas over every broker of the cluster.
    #[serde(rename = "full")]
    Full,
    /// Move replicas onto the brokers listed in `brokers`, typically just added.
    #[serde(rename = "add-brokers")]
    AddBrokers,
    /// Move replicas away from the brokers listed in `brokers` before they are removed.
    #[serde(rename = "remove-brokers")]
    RemoveBrokers,
    /// Move replicas off the disks listed in `moveReplicasOffVolumes`, within each broker.
    #[serde(rename = "remove-disks")]
    RemoveDisks,
}

impl KafkaRebalanceMode {
    /// The mode as written in the resource, such as `add-brokers`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::AddBrokers => "add-brokers",
            Self::RemoveBrokers => "remove-brokers",
            Self::RemoveDisks => "remove-disks",
        }
    }
}

/// The disks of one broker whose replicas should move elsewhere.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrokerAndVolumeIds {
    /// Node ID of the broker.
    pub broker_id: Option<i32>,
    /// IDs of the broker's JBOD volumes to empty.
    #[schemars(length(min = 1))]
    pub volume_ids: Option<Vec<i32>>,
}

/// The desired rebalance.
#[skip_serializing_none]
#[derive(
    CustomResource, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    kind = "KafkaRebalance",
    namespaced,
    status = "KafkaRebalanceStatus",
    shortname = "kr",
    category = "strimzi",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct KafkaRebalanceSpec {
    /// What to rebalance. Defaults to `full`.
    pub mode: Option<KafkaRebalanceMode>,
    /// Node IDs of the brokers being added or removed; used by the `add-brokers` and
    /// `remove-brokers` modes only.
    pub brokers: Option<Vec<i32>>,
    /// Cruise Control goals in decreasing priority. Empty or unset means Cruise Control's
    /// `default.goals`.
    pub goals: Option<Vec<String>>,
    /// Whether the plan may ignore hard goals that cannot be met. Defaults to `false`.
    pub skip_hard_goal_check: Option<bool>,
    /// Balance disk usage between the JBOD volumes of each broker instead of between brokers.
    /// Defaults to `false`.
    pub rebalance_disk: Option<bool>,
    /// A Java regular expression; matching topics are left out of the plan.
    pub excluded_topics: Option<String>,
    /// Most replica movements into or out of one broker at a time. Defaults to 5.
    #[schemars(range(min = 0))]
    pub concurrent_partition_movements_per_broker: Option<i32>,
    /// Most replica movements between the disks of one broker at a time. Defaults to 2.
    #[schemars(range(min = 0))]
    pub concurrent_intra_broker_partition_movements: Option<i32>,
    /// Most leadership movements at a time. Defaults to 1000.
    #[schemars(range(min = 0))]
    pub concurrent_leader_movements: Option<i32>,
    /// Bandwidth cap for moving replicas, in bytes per second. Unlimited when unset.
    #[schemars(range(min = 0))]
    pub replication_throttle: Option<i64>,
    /// Class names of the strategies that order replica movements.
    pub replica_movement_strategies: Option<Vec<String>>,
    /// Volumes to empty in the `remove-disks` mode.
    #[schemars(length(min = 1))]
    pub move_replicas_off_volumes: Option<Vec<BrokerAndVolumeIds>>,
}

/// Where the progress of a running rebalance is published.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaRebalanceProgress {
    /// Name of the ConfigMap holding the progress details.
    pub rebalance_progress_config_map: Option<String>,
}

/// The observed state of a rebalance.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaRebalanceStatus {
    /// The operator's latest observations; the rebalance's state is the `type` of one of them.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// Cruise Control's identifier of the current request.
    pub session_id: Option<String>,
    /// Where progress details of a running rebalance can be read.
    pub progress: Option<KafkaRebalanceProgress>,
    /// Summary of the proposed plan as reported by Cruise Control.
    pub optimization_result: Option<FreeFormMap>,
}

impl KafkaRebalanceSpec {
    /// The requested mode, `full` when unset.
    pub fn mode_or_default(&self) -> KafkaRebalanceMode {
        self.mode.unwrap_or(KafkaRebalanceMode::Full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DocumentError, from_value};
    use serde_json::json;

    fn document() -> serde_json::Value {
        json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaRebalance",
            "metadata": {"name": "my-rebalance"},
            "spec": {
                "mode": "remove-disks",
                "brokers": [3, 4],
                "goals": ["CpuCapacityGoal"],
                "skipHardGoalCheck": true,
                "rebalanceDisk": false,
                "excludedTopics": "test-.*",
                "concurrentPartitionMovementsPerBroker": 5,
                "concurrentIntraBrokerPartitionMovements": 2,
                "concurrentLeaderMovements": 1000,
                "replicationThrottle": 10_000_000_000_i64,
                "replicaMovementStrategies": ["PrioritizeSmallReplicaMovementStrategy"],
                "moveReplicasOffVolumes": [{"brokerId": 0, "volumeIds": [1, 2]}]
            },
            "status": {
                "conditions": [{"type": "ProposalReady", "status": "True"}],
                "observedGeneration": 1,
                "sessionId": "abc",
                "progress": {"rebalanceProgressConfigMap": "my-rebalance"},
                "optimizationResult": {"numReplicaMovements": 10, "excludedTopics": []}
            }
        })
    }

    #[test]
    fn round_trips() {
        let rebalance: KafkaRebalance = from_value(document()).unwrap();
        assert_eq!(
            rebalance.spec.mode_or_default(),
            KafkaRebalanceMode::RemoveDisks
        );
        assert_eq!(serde_json::to_value(&rebalance).unwrap(), document());
    }

    #[test]
    fn every_mode_parses() {
        for mode in [
            KafkaRebalanceMode::Full,
            KafkaRebalanceMode::AddBrokers,
            KafkaRebalanceMode::RemoveBrokers,
            KafkaRebalanceMode::RemoveDisks,
        ] {
            let parsed: KafkaRebalanceSpec = from_value(json!({"mode": mode.as_str()})).unwrap();
            assert_eq!(parsed.mode, Some(mode));
        }
        assert_eq!(
            KafkaRebalanceSpec::default().mode_or_default(),
            KafkaRebalanceMode::Full
        );
    }

    #[test]
    fn wrong_mode_names_the_field() {
        let error = from_value::<KafkaRebalance>(json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaRebalance",
            "metadata": {"name": "r"},
            "spec": {"mode": "partial"}
        }))
        .expect_err("unknown mode");
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "spec.mode");
    }

    #[test]
    fn schema_has_bounds() {
        let schema = serde_json::to_value(schemars::schema_for!(KafkaRebalanceSpec)).unwrap();
        let properties = &schema["properties"];
        assert_eq!(properties["replicationThrottle"]["minimum"], 0);
        assert_eq!(properties["moveReplicasOffVolumes"]["minItems"], 1);
    }
}
