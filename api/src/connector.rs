//! The `KafkaConnector` custom resource: one connector running in a Kafka Connect cluster that
//! is managed by the operator.
//!
//! Several building blocks here (state, automatic restarts, offset listing and altering, the
//! restart status) are shared with the connectors of [`KafkaMirrorMaker2`](crate::mirror_maker2).

use k8s_openapi::api::core::v1::LocalObjectReference;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::Condition;
use crate::schema::FreeFormMap;

/// The desired state of a KafkaConnector.
#[skip_serializing_none]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    derive = "PartialEq",
    kind = "KafkaConnector",
    namespaced,
    status = "KafkaConnectorStatus",
    shortname = "kctr",
    category = "strimzi"
)]
#[serde(rename_all = "camelCase")]
pub struct KafkaConnectorSpec {
    /// Fully qualified Java class of the connector implementation.
    pub class: Option<String>,
    /// Upper limit on the number of tasks the connector may start.
    #[schemars(range(min = 1))]
    pub tasks_max: Option<i32>,
    /// Whether and how often the operator restarts the connector and its tasks after failures.
    pub auto_restart: Option<AutoRestart>,
    /// Version of the connector plugin to use, when several versions are installed.
    pub version: Option<String>,
    /// Connector configuration passed to Kafka Connect. Options the operator sets itself,
    /// such as `connector.class` and `tasks.max`, are taken from the dedicated fields.
    pub config: Option<FreeFormMap>,
    /// Whether the connector should be running, paused or stopped. Defaults to `running`.
    pub state: Option<ConnectorState>,
    /// Where to write the connector's current offsets when a listing is requested.
    pub list_offsets: Option<ListOffsets>,
    /// Where to read new offsets from when altering the connector's offsets is requested.
    pub alter_offsets: Option<AlterOffsets>,
}

/// The state a connector is asked to be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ConnectorState {
    /// Tasks stay assigned but stop processing records.
    #[serde(rename = "paused")]
    Paused,
    /// The connector and its tasks are shut down, keeping only its configuration.
    #[serde(rename = "stopped")]
    Stopped,
    /// The connector and its tasks process records.
    #[serde(rename = "running")]
    Running,
}

/// Automatic restarting of a failed connector and its failed tasks.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutoRestart {
    /// Turns automatic restarts on or off.
    pub enabled: Option<bool>,
    /// How many restarts are attempted before giving up; unlimited when not set.
    pub max_restarts: Option<i32>,
}

/// Request to list a connector's offsets into a ConfigMap.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListOffsets {
    /// The ConfigMap that receives the listed offsets.
    pub to_config_map: LocalObjectReference,
}

/// Request to alter a connector's offsets from a ConfigMap.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlterOffsets {
    /// The ConfigMap that holds the new offsets.
    pub from_config_map: LocalObjectReference,
}

/// Progress of automatic restarts of one connector.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutoRestartStatus {
    /// Number of automatic restarts done so far.
    pub count: Option<i32>,
    /// Name of the connector being restarted.
    pub connector_name: Option<String>,
    /// When the last automatic restart happened, as an RFC 3339 timestamp.
    pub last_restart_timestamp: Option<String>,
}

/// The observed state of a KafkaConnector.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaConnectorStatus {
    /// Observations about the connector, such as whether it is ready.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// Progress of automatic restarts.
    pub auto_restart: Option<AutoRestartStatus>,
    /// The connector's status as reported by the Kafka Connect REST API.
    pub connector_status: Option<FreeFormMap>,
    /// The task limit currently in effect.
    pub tasks_max: Option<i32>,
    /// Topics the connector uses.
    pub topics: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DocumentError, from_value, unknown_fields};
    use serde_json::json;

    #[test]
    fn connector_round_trips() {
        let document = json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaConnector",
            "metadata": {"name": "source", "labels": {"strimzi.io/cluster": "my-connect"}},
            "spec": {
                "class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "tasksMax": 2,
                "version": "4.0.0",
                "state": "stopped",
                "autoRestart": {"enabled": true, "maxRestarts": 5},
                "listOffsets": {"toConfigMap": {"name": "offsets-out"}},
                "alterOffsets": {"fromConfigMap": {"name": "offsets-in"}},
                "config": {"file": "/etc/passwd", "topic": "t", "batch.size": 10}
            },
            "status": {
                "observedGeneration": 3,
                "conditions": [{"type": "Ready", "status": "True"}],
                "autoRestart": {"count": 1, "connectorName": "source",
                                "lastRestartTimestamp": "2025-01-01T00:00:00Z"},
                "connectorStatus": {"connector": {"state": "RUNNING"}, "tasks": []},
                "tasksMax": 2,
                "topics": ["t"]
            }
        });
        assert!(
            unknown_fields::<KafkaConnector>(&document)
                .unwrap()
                .is_empty()
        );
        let connector: KafkaConnector = from_value(document.clone()).unwrap();
        assert_eq!(connector.spec.state, Some(ConnectorState::Stopped));
        assert_eq!(
            connector
                .spec
                .alter_offsets
                .as_ref()
                .unwrap()
                .from_config_map
                .name,
            "offsets-in"
        );
        assert_eq!(serde_json::to_value(&connector).unwrap(), document);
    }

    #[test]
    fn every_state_parses() {
        for (text, state) in [
            ("paused", ConnectorState::Paused),
            ("stopped", ConnectorState::Stopped),
            ("running", ConnectorState::Running),
        ] {
            let parsed: ConnectorState = serde_json::from_value(json!(text)).unwrap();
            assert_eq!(parsed, state);
        }
    }

    #[test]
    fn wrong_state_names_its_path() {
        let error = from_value::<KafkaConnector>(json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaConnector",
            "metadata": {"name": "c"},
            "spec": {"state": "sleeping"}
        }))
        .unwrap_err();
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "spec.state");
    }

    #[test]
    fn tasks_max_has_a_lower_bound() {
        let schema = serde_json::to_value(schemars::schema_for!(KafkaConnectorSpec)).unwrap();
        assert_eq!(schema["properties"]["tasksMax"]["minimum"], json!(1));
        assert_eq!(
            schema["properties"]["config"]["x-kubernetes-preserve-unknown-fields"],
            json!(true)
        );
    }
}
