//! The `KafkaConnect` custom resource: a Kafka Connect cluster, optionally with a custom image
//! built by the operator and with connector plugins mounted from OCI images.

pub mod build;
pub mod template;

use k8s_openapi::api::core::v1::ResourceRequirements;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{
    ClientTls, Condition, JvmOptions, KafkaClientAuthentication, KafkaJmxOptions, Logging,
    MetricsConfig, Probe, Rack, Tracing,
};
use crate::schema::FreeFormMap;

pub use build::{
    Build, BuildArtifact, BuildOutput, BuildPlugin, DockerOutput, DownloadableArtifact,
    ImageArtifact, ImageStreamOutput, MavenArtifact, MavenMirror, MavenScope, MountedArtifact,
    MountedPlugin, OtherArtifact,
};
pub use template::{BuildConfigTemplate, KafkaConnectTemplate};

/// The desired state of a Kafka Connect cluster.
#[skip_serializing_none]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    derive = "PartialEq",
    kind = "KafkaConnect",
    namespaced,
    status = "KafkaConnectStatus",
    shortname = "kc",
    category = "strimzi"
)]
#[serde(rename_all = "camelCase")]
pub struct KafkaConnectSpec {
    /// Kafka Connect version; the operator's default Kafka version when unset.
    pub version: Option<String>,
    /// Number of Connect worker pods.
    pub replicas: i32,
    /// Container image for the workers, overriding the operator's choice for `version`.
    pub image: Option<String>,
    /// Bootstrap addresses (`host:port` list) of the Kafka cluster to connect to.
    pub bootstrap_servers: String,
    /// Consumer group id of the Connect cluster (`group.id`).
    pub group_id: String,
    /// Topic that stores connector configurations.
    pub config_storage_topic: String,
    /// Topic that stores connector and task statuses.
    pub status_storage_topic: String,
    /// Topic that stores source connector offsets.
    pub offset_storage_topic: String,
    /// TLS settings for the connection to Kafka.
    pub tls: Option<ClientTls>,
    /// How the workers authenticate to Kafka.
    pub authentication: Option<KafkaClientAuthentication>,
    /// Kafka Connect worker configuration. Options the operator manages itself are not allowed.
    pub config: Option<FreeFormMap>,
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
    /// Builds a custom worker image with extra connector plugins.
    pub build: Option<Build>,
    /// Connector plugins mounted into the pods from OCI images.
    pub plugins: Option<Vec<MountedPlugin>>,
}

/// The observed state of a Kafka Connect cluster.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaConnectStatus {
    /// Observations about the cluster, such as whether it is ready.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// URL of the Connect REST API.
    pub url: Option<String>,
    /// Connector plugins the workers offer.
    pub connector_plugins: Option<Vec<ConnectorPlugin>>,
    /// Number of pods currently running the cluster.
    pub replicas: Option<i32>,
    /// Label selector of the pods, for the scale subresource.
    pub label_selector: Option<String>,
}

/// A connector plugin installed in a Connect cluster, as reported by its REST API.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorPlugin {
    /// Java class of the plugin.
    pub class: Option<String>,
    /// Kind of plugin, such as `source` or `sink`.
    pub r#type: Option<String>,
    /// Version of the plugin.
    pub version: Option<String>,
}

#[cfg(test)]
pub(crate) mod tests;
