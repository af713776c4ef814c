//! Observed state of a Kafka cluster.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::cruise_control::KafkaAutoRebalanceMode;
use crate::common::Condition;

/// What the operator last observed and did for a Kafka cluster.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaStatus {
    /// Conditions of the resource, such as `Ready`.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last reconciled.
    pub observed_generation: Option<i64>,
    /// Addresses and certificates of each listener.
    pub listeners: Option<Vec<ListenerStatus>>,
    /// The `KafkaNodePool`s that make up the cluster.
    pub kafka_node_pools: Option<Vec<UsedNodePoolStatus>>,
    /// The Kafka cluster ID.
    pub cluster_id: Option<String>,
    /// Version of the operator that last reconciled the cluster successfully.
    pub operator_last_successful_version: Option<String>,
    /// Kafka version the cluster runs.
    pub kafka_version: Option<String>,
    /// KRaft `metadata.version` the cluster uses.
    pub kafka_metadata_version: Option<String>,
    /// Progress of automatic rebalancing after scaling.
    pub auto_rebalance: Option<KafkaAutoRebalanceStatus>,
    /// The security settings currently in force in the cluster.
    pub cluster_security: Option<crate::schema::FreeFormMap>,
}

/// How clients reach one listener.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListenerStatus {
    /// Name of the listener.
    pub name: Option<String>,
    /// Bootstrap addresses of the listener.
    pub addresses: Option<Vec<ListenerAddress>>,
    /// Comma-separated `host:port` list to bootstrap clients with.
    pub bootstrap_servers: Option<String>,
    /// Certificates (PEM) clients can use to verify the brokers on TLS listeners.
    pub certificates: Option<Vec<String>>,
}

/// One bootstrap address of a listener.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListenerAddress {
    /// DNS name or IP address.
    pub host: Option<String>,
    /// Port.
    pub port: Option<i32>,
}

/// A `KafkaNodePool` that belongs to the cluster.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsedNodePoolStatus {
    /// Name of the `KafkaNodePool`.
    pub name: Option<String>,
}

/// Where automatic rebalancing after scaling stands.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaAutoRebalanceStatus {
    /// Current state.
    pub state: Option<KafkaAutoRebalanceState>,
    /// When the state last changed.
    pub last_transition_time: Option<String>,
    /// Rebalances running or queued, per mode, with the brokers involved.
    pub modes: Option<Vec<KafkaAutoRebalanceStatusBrokers>>,
}

/// State of automatic rebalancing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum KafkaAutoRebalanceState {
    /// Nothing running: the starting state, and the state after a rebalance ends or fails.
    Idle,
    /// Rebalancing before brokers are removed.
    RebalanceOnScaleDown,
    /// Rebalancing after brokers were added.
    RebalanceOnScaleUp,
}

/// Brokers involved in a running or queued automatic rebalance of one mode.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaAutoRebalanceStatusBrokers {
    /// The mode.
    pub mode: Option<KafkaAutoRebalanceMode>,
    /// Node IDs of the brokers being, or waiting to be, rebalanced.
    pub brokers: Option<Vec<i32>>,
}
