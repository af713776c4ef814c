//! The `KafkaMirrorMaker2` custom resource: a Kafka Connect cluster that runs MirrorMaker 2
//! connectors to replicate topics and consumer group offsets from source clusters into a
//! target cluster.

use k8s_openapi::api::core::v1::ResourceRequirements;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{
    ClientTls, Condition, JvmOptions, KafkaClientAuthentication, KafkaJmxOptions, Logging,
    MetricsConfig, Probe, Rack, Tracing,
};
use crate::connect::{ConnectorPlugin, KafkaConnectTemplate};
use crate::connector::{AlterOffsets, AutoRestart, AutoRestartStatus, ConnectorState, ListOffsets};
use crate::schema::FreeFormMap;

/// The desired state of a MirrorMaker 2 deployment.
#[skip_serializing_none]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    derive = "PartialEq",
    kind = "KafkaMirrorMaker2",
    namespaced,
    status = "KafkaMirrorMaker2Status",
    shortname = "kmm2",
    category = "strimzi"
)]
#[serde(rename_all = "camelCase")]
pub struct KafkaMirrorMaker2Spec {
    /// Kafka Connect version; the operator's default Kafka version when unset.
    pub version: Option<String>,
    /// Number of Connect worker pods.
    pub replicas: i32,
    /// Container image for the workers, overriding the operator's choice for `version`.
    pub image: Option<String>,
    /// The cluster data is copied into; the Connect cluster itself also uses it.
    pub target: KafkaMirrorMaker2TargetClusterSpec,
    /// The source clusters and what to copy from each.
    pub mirrors: Vec<KafkaMirrorMaker2MirrorSpec>,
    /// CPU and memory for each worker container.
    pub resources: Option<ResourceRequirements>,
    /// Liveness check of the worker container.
    pub liveness_probe: Option<Probe>,
    /// Readiness check of the worker container.
    pub readiness_probe: Option<Probe>,
    /// JVM settings of the workers.
    pub jvm_options: Option<JvmOptions>,
    /// JMX settings of the workers.
    pub jmx_options: Option<KafkaJmxOptions>,
    /// Logging configuration of the workers.
    pub logging: Option<Logging>,
    /// Image of the init container that determines the rack; the operator's default when unset.
    pub client_rack_init_image: Option<String>,
    /// Rack awareness: sets `client.rack` of the workers' consumers.
    pub rack: Option<Rack>,
    /// How metrics are exposed.
    pub metrics_config: Option<MetricsConfig>,
    /// Distributed tracing of the workers.
    pub tracing: Option<Tracing>,
    /// Overrides for the Kubernetes resources the operator creates.
    pub template: Option<KafkaConnectTemplate>,
}

/// The target Kafka cluster, which also hosts the Connect cluster's internal topics.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaMirrorMaker2TargetClusterSpec {
    /// Name by which connectors and replicated topics refer to the cluster.
    #[schemars(regex(pattern = r"^[a-zA-Z0-9\._\-]{1,100}$"))]
    pub alias: String,
    /// Bootstrap addresses (`host:port` list) of the cluster.
    pub bootstrap_servers: String,
    /// Consumer group id of the Connect cluster (`group.id`).
    pub group_id: String,
    /// Topic that stores connector configurations.
    pub config_storage_topic: String,
    /// Topic that stores connector and task statuses.
    pub status_storage_topic: String,
    /// Topic that stores source connector offsets.
    pub offset_storage_topic: String,
    /// TLS settings for the connection to the cluster.
    pub tls: Option<ClientTls>,
    /// How to authenticate to the cluster.
    pub authentication: Option<KafkaClientAuthentication>,
    /// Kafka Connect worker configuration. Options the operator manages itself are not allowed.
    pub config: Option<FreeFormMap>,
}

/// A source Kafka cluster data is copied from.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaMirrorMaker2ClusterSpec {
    /// Name by which connectors and replicated topics refer to the cluster.
    #[schemars(regex(pattern = r"^[a-zA-Z0-9\._\-]{1,100}$"))]
    pub alias: String,
    /// Bootstrap addresses (`host:port` list) of the cluster.
    pub bootstrap_servers: String,
    /// TLS settings for the connection to the cluster.
    pub tls: Option<ClientTls>,
    /// How to authenticate to the cluster.
    pub authentication: Option<KafkaClientAuthentication>,
    /// Client configuration for the connections to this cluster.
    pub config: Option<FreeFormMap>,
}

/// Replication from one source cluster into the target cluster.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaMirrorMaker2MirrorSpec {
    /// The source cluster.
    pub source: KafkaMirrorMaker2ClusterSpec,
    /// The connector that copies topics and their data.
    pub source_connector: Option<KafkaMirrorMaker2ConnectorSpec>,
    /// The connector that translates and syncs consumer group offsets.
    pub checkpoint_connector: Option<KafkaMirrorMaker2ConnectorSpec>,
    /// Regular expression (or comma-separated list) of the topics to copy.
    pub topics_pattern: Option<String>,
    /// Regular expression (or comma-separated list) of topics not to copy.
    pub topics_exclude_pattern: Option<String>,
    /// Regular expression (or comma-separated list) of the consumer groups to copy.
    pub groups_pattern: Option<String>,
    /// Regular expression (or comma-separated list) of consumer groups not to copy.
    pub groups_exclude_pattern: Option<String>,
}

/// Settings of one MirrorMaker 2 connector; the connector class is chosen by the operator.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaMirrorMaker2ConnectorSpec {
    /// Upper limit on the number of tasks the connector may start.
    #[schemars(range(min = 1))]
    pub tasks_max: Option<i32>,
    /// Version of the connector plugin to use, when several versions are installed.
    pub version: Option<String>,
    /// Connector configuration passed to Kafka Connect.
    pub config: Option<FreeFormMap>,
    /// Whether the connector should be running, paused or stopped. Defaults to `running`.
    pub state: Option<ConnectorState>,
    /// Whether and how often the operator restarts the connector and its tasks after failures.
    pub auto_restart: Option<AutoRestart>,
    /// Where to write the connector's current offsets when a listing is requested.
    pub list_offsets: Option<ListOffsets>,
    /// Where to read new offsets from when altering the connector's offsets is requested.
    pub alter_offsets: Option<AlterOffsets>,
}

/// The observed state of a MirrorMaker 2 deployment.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaMirrorMaker2Status {
    /// Observations about the deployment, such as whether it is ready.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// URL of the Connect REST API.
    pub url: Option<String>,
    /// Status of each MirrorMaker 2 connector as reported by the Connect REST API.
    pub connectors: Option<Vec<FreeFormMap>>,
    /// Progress of automatic restarts, one entry per connector.
    pub auto_restart_statuses: Option<Vec<AutoRestartStatus>>,
    /// Connector plugins the workers offer.
    pub connector_plugins: Option<Vec<ConnectorPlugin>>,
    /// Label selector of the pods, for the scale subresource.
    pub label_selector: Option<String>,
    /// Number of pods currently running the deployment.
    pub replicas: Option<i32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DocumentError, from_value, unknown_fields};
    use serde_json::json;

    fn full_document() -> serde_json::Value {
        json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaMirrorMaker2",
            "metadata": {"name": "mm2"},
            "spec": {
                "version": "4.0.0",
                "replicas": 2,
                "image": "example/kafka:1",
                "target": {
                    "alias": "cluster-b",
                    "bootstrapServers": "b:9093",
                    "groupId": "mm2",
                    "configStorageTopic": "c",
                    "statusStorageTopic": "s",
                    "offsetStorageTopic": "o",
                    "tls": {"trustedCertificates": [{"secretName": "ca", "pattern": "*.crt"}]},
                    "authentication": {"type": "scram-sha-512", "username": "u",
                                       "passwordSecret": {"secretName": "p", "password": "pw"}},
                    "config": {"config.storage.replication.factor": -1}
                },
                "mirrors": [{
                    "source": {
                        "alias": "cluster-a",
                        "bootstrapServers": "a:9093",
                        "authentication": {"type": "tls",
                            "certificateAndKey": {"secretName": "u", "certificate": "c.crt", "key": "k.key"}},
                        "config": {"consumer.fetch.max.bytes": 1000}
                    },
                    "sourceConnector": {
                        "tasksMax": 3, "version": "4.0.0", "state": "paused",
                        "autoRestart": {"enabled": true, "maxRestarts": 2},
                        "listOffsets": {"toConfigMap": {"name": "list"}},
                        "alterOffsets": {"fromConfigMap": {"name": "alter"}},
                        "config": {"replication.factor": -1}
                    },
                    "checkpointConnector": {"tasksMax": 1, "state": "running"},
                    "topicsPattern": ".*",
                    "topicsExcludePattern": "internal.*",
                    "groupsPattern": ".*",
                    "groupsExcludePattern": "tmp.*"
                }],
                "resources": {"requests": {"memory": "1Gi"}},
                "clientRackInitImage": "example/init:1",
                "rack": {"topologyKey": "topology.kubernetes.io/zone"},
                "tracing": {"type": "opentelemetry"},
                "logging": {"type": "inline", "loggers": {"rootLogger.level": "INFO"}},
                "template": {"buildConfig": {"pullSecret": "pull"}}
            },
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "observedGeneration": 1,
                "url": "http://mm2-mirrormaker2-api:8083",
                "connectors": [{"name": "cluster-a->cluster-b.MirrorSourceConnector",
                                "connector": {"state": "RUNNING"}}],
                "autoRestartStatuses": [{"count": 1, "connectorName": "x",
                                         "lastRestartTimestamp": "2025-01-01T00:00:00Z"}],
                "connectorPlugins": [{"class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
                                      "type": "source", "version": "4.0.0"}],
                "labelSelector": "strimzi.io/cluster=mm2",
                "replicas": 2
            }
        })
    }

    #[test]
    fn mirror_maker2_round_trips() {
        let document = full_document();
        assert!(
            unknown_fields::<KafkaMirrorMaker2>(&document)
                .unwrap()
                .is_empty()
        );
        let mm2: KafkaMirrorMaker2 = from_value(document.clone()).unwrap();
        let mirror = &mm2.spec.mirrors[0];
        assert_eq!(
            mirror.source_connector.as_ref().and_then(|c| c.state),
            Some(ConnectorState::Paused)
        );
        assert_eq!(serde_json::to_value(&mm2).unwrap(), document);
    }

    #[test]
    fn wrong_authentication_type_names_its_path() {
        let mut document = full_document();
        document["spec"]["mirrors"][0]["source"]["authentication"]["type"] = json!("kerberos");
        let error = from_value::<KafkaMirrorMaker2>(document).unwrap_err();
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "spec.mirrors[0].source.authentication");
    }

    #[test]
    fn schema_has_alias_pattern_and_free_form_connectors() {
        let schema = serde_json::to_value(schemars::schema_for!(KafkaMirrorMaker2)).unwrap();
        let text = schema.to_string();
        assert!(text.contains(r"^[a-zA-Z0-9\\._\\-]{1,100}$"));
        let status = schema["$defs"]["KafkaMirrorMaker2Status"].clone();
        assert_eq!(
            status["properties"]["connectors"]["items"]["x-kubernetes-preserve-unknown-fields"],
            json!(true)
        );
    }
}
