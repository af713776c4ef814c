//! `KafkaTopic`: a Kafka topic managed declaratively by the Topic Operator.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::Condition;
use crate::schema::FreeFormMap;

/// The desired state of a Kafka topic.
#[skip_serializing_none]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    kind = "KafkaTopic",
    namespaced,
    status = "KafkaTopicStatus",
    shortname = "kt",
    category = "strimzi",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct KafkaTopicSpec {
    /// Name of the topic in Kafka, for names that are not valid Kubernetes names. Defaults to
    /// the resource's name and cannot change later.
    pub topic_name: Option<String>,
    /// Number of partitions. It can grow but never shrink. Defaults to the broker's
    /// `num.partitions`.
    #[schemars(range(min = 1))]
    pub partitions: Option<i32>,
    /// Number of replicas of each partition. Defaults to the broker's
    /// `default.replication.factor`.
    #[schemars(range(min = 1, max = 32767))]
    pub replicas: Option<i32>,
    /// Topic-level Kafka configuration, such as `retention.ms`.
    pub config: Option<FreeFormMap>,
}

/// Progress of a replication-factor change carried out through Cruise Control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ReplicasChangeState {
    /// The change is waiting to be submitted.
    #[serde(rename = "pending")]
    Pending,
    /// The change has been submitted and is running.
    #[serde(rename = "ongoing")]
    Ongoing,
}

/// A change of the topic's replication factor that is not finished yet.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicasChangeStatus {
    /// The replication factor being moved to.
    pub target_replicas: Option<i32>,
    /// Whether the change waits or runs.
    pub state: Option<ReplicasChangeState>,
    /// Why the last attempt failed, if it did.
    pub message: Option<String>,
    /// Cruise Control's identifier of the running change.
    pub session_id: Option<String>,
}

/// The observed state of a Kafka topic.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaTopicStatus {
    /// The operator's latest observations, such as `Ready`.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// Name of the topic in Kafka.
    pub topic_name: Option<String>,
    /// Kafka's unique identifier of the topic.
    pub topic_id: Option<String>,
    /// A replication-factor change that is in progress.
    pub replicas_change: Option<ReplicasChangeStatus>,
}

impl KafkaTopic {
    /// The topic's name in Kafka: `spec.topicName` when set, else `metadata.name`.
    pub fn topic_name(&self) -> Option<&str> {
        self.spec
            .topic_name
            .as_deref()
            .or(self.metadata.name.as_deref())
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
            "kind": "KafkaTopic",
            "metadata": {"name": "my-topic", "labels": {"strimzi.io/cluster": "my-cluster"}},
            "spec": {
                "topicName": "My.Topic",
                "partitions": 3,
                "replicas": 2,
                "config": {"retention.ms": 7200000, "cleanup.policy": "delete"}
            },
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "observedGeneration": 2,
                "topicName": "My.Topic",
                "topicId": "abc",
                "replicasChange": {
                    "targetReplicas": 3,
                    "state": "ongoing",
                    "message": "m",
                    "sessionId": "s"
                }
            }
        })
    }

    #[test]
    fn round_trips() {
        let topic: KafkaTopic = from_value(document()).unwrap();
        assert_eq!(topic.topic_name(), Some("My.Topic"));
        let state = topic
            .status
            .as_ref()
            .and_then(|status| status.replicas_change.as_ref())
            .and_then(|change| change.state);
        assert_eq!(state, Some(ReplicasChangeState::Ongoing));
        assert_eq!(serde_json::to_value(&topic).unwrap(), document());
    }

    #[test]
    fn topic_name_falls_back_to_metadata_name() {
        let topic: KafkaTopic = from_value(json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaTopic",
            "metadata": {"name": "my-topic"},
            "spec": {"partitions": 1}
        }))
        .unwrap();
        assert_eq!(topic.topic_name(), Some("my-topic"));
        let status: KafkaTopicStatus =
            from_value(json!({"replicasChange": {"state": "pending"}})).unwrap();
        assert_eq!(
            status.replicas_change.and_then(|change| change.state),
            Some(ReplicasChangeState::Pending)
        );
    }

    #[test]
    fn wrong_state_names_the_field() {
        let error = from_value::<KafkaTopicStatus>(json!({"replicasChange": {"state": "done"}}))
            .expect_err("unknown state");
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "replicasChange.state");
    }

    #[test]
    fn schema_has_bounds() {
        let schema = serde_json::to_value(schemars::schema_for!(KafkaTopicSpec)).unwrap();
        let properties = &schema["properties"];
        assert_eq!(properties["partitions"]["minimum"], 1);
        assert_eq!(properties["replicas"]["maximum"], 32767);
        assert_eq!(
            properties["config"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
    }
}
