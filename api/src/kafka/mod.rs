//! The `Kafka` custom resource (`kafka.strimzi.io/v1`): a KRaft-based Kafka cluster with its
//! listeners, security, certificate authorities and the optional Entity Operator, Cruise
//! Control and Kafka Exporter. Brokers and controllers themselves come from `KafkaNodePool`s.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{JvmOptions, KafkaJmxOptions, Logging, MetricsConfig, Probe, Rack};

pub mod authorization;
pub mod certificate_authority;
pub mod cruise_control;
pub mod entity_operator;
pub mod exporter;
pub mod listener;
pub mod quotas;
pub mod status;
pub mod template;
pub mod tiered_storage;

#[cfg(test)]
mod tests;

pub use authorization::{KafkaAuthorization, KafkaAuthorizationCustom, KafkaAuthorizationSimple};
pub use certificate_authority::{CertificateAuthority, CertificateExpirationPolicy};
pub use cruise_control::{
    ApiUsers, BrokerCapacity, BrokerCapacityOverride, CruiseControlSpec, CruiseControlTemplate,
    HashLoginServiceApiUsers, KafkaAutoRebalanceConfiguration, KafkaAutoRebalanceMode,
};
pub use entity_operator::{
    EntityOperatorSpec, EntityOperatorTemplate, EntityTopicOperatorSpec, EntityUserOperatorSpec,
};
pub use exporter::{KafkaExporterSpec, KafkaExporterTemplate};
pub use listener::{
    ExternalTrafficPolicy, GenericKafkaListener, GenericKafkaListenerConfiguration,
    GenericKafkaListenerConfigurationBootstrap, GenericKafkaListenerConfigurationBroker,
    KafkaListenerAuthentication, KafkaListenerAuthenticationCustom,
    KafkaListenerAuthenticationScramSha512, KafkaListenerAuthenticationTls, KafkaListenerType,
    NodeAddressType, ParentReference,
};
pub use quotas::{QuotasPlugin, QuotasPluginKafka, QuotasPluginStrimzi};
pub use status::{
    KafkaAutoRebalanceState, KafkaAutoRebalanceStatus, KafkaAutoRebalanceStatusBrokers,
    KafkaStatus, ListenerAddress, ListenerStatus, UsedNodePoolStatus,
};
pub use template::KafkaClusterTemplate;
pub use tiered_storage::{RemoteStorageManager, TieredStorage, TieredStorageCustom};

/// Desired state of a Kafka cluster.
#[skip_serializing_none]
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    derive = "PartialEq",
    kind = "Kafka",
    namespaced,
    status = "KafkaStatus",
    shortname = "k",
    category = "strimzi"
)]
#[serde(rename_all = "camelCase")]
pub struct KafkaSpec {
    /// The Kafka brokers and controllers: version, listeners, configuration and security.
    pub kafka: KafkaClusterSpec,
    /// The Topic and User Operators; not deployed when unset.
    pub entity_operator: Option<EntityOperatorSpec>,
    /// The cluster CA, which signs the certificates of the cluster's components.
    pub cluster_ca: Option<CertificateAuthority>,
    /// The clients CA, which signs the certificates of TLS-authenticated users.
    pub clients_ca: Option<CertificateAuthority>,
    /// Cruise Control; not deployed when unset.
    pub cruise_control: Option<CruiseControlSpec>,
    /// Kafka Exporter; not deployed when unset.
    pub kafka_exporter: Option<KafkaExporterSpec>,
    /// Cron expressions of the time windows in which maintenance such as certificate
    /// renewal may happen.
    pub maintenance_time_windows: Option<Vec<String>>,
}

/// Settings shared by all brokers and controllers of the cluster.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaClusterSpec {
    /// Kafka version; the newest supported one when unset. Changing it upgrades or downgrades
    /// the cluster.
    pub version: Option<String>,
    /// KRaft `metadata.version`; the one matching `version` when unset.
    pub metadata_version: Option<String>,
    /// Container image of the Kafka nodes; derived from `version` when unset.
    pub image: Option<String>,
    /// Listeners clients connect to. At least one.
    #[schemars(length(min = 1))]
    pub listeners: Vec<GenericKafkaListener>,
    /// Kafka broker properties. Keys with some prefixes are managed by the operator and may
    /// not be set.
    pub config: Option<crate::schema::FreeFormMap>,
    /// Authorization of client requests; none when unset.
    pub authorization: Option<KafkaAuthorization>,
    /// Rack awareness: how each broker's `broker.rack` is found.
    pub rack: Option<Rack>,
    /// Image of the init container that finds the broker rack.
    pub broker_rack_init_image: Option<String>,
    /// Liveness probe of the Kafka containers.
    pub liveness_probe: Option<Probe>,
    /// Readiness probe of the Kafka containers.
    pub readiness_probe: Option<Probe>,
    /// JVM options of the Kafka nodes.
    pub jvm_options: Option<JvmOptions>,
    /// JMX access to the Kafka nodes.
    pub jmx_options: Option<KafkaJmxOptions>,
    /// Metrics exposed by the Kafka nodes.
    pub metrics_config: Option<MetricsConfig>,
    /// Logging configuration of the Kafka nodes.
    pub logging: Option<Logging>,
    /// Templates for the Kubernetes resources of the Kafka nodes.
    pub template: Option<KafkaClusterTemplate>,
    /// Tiered storage of the brokers.
    pub tiered_storage: Option<TieredStorage>,
    /// Client quota plugin of the brokers; Kafka's built-in one when unset.
    pub quotas: Option<QuotasPlugin>,
}
