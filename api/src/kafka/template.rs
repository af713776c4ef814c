//! Customization of the Kubernetes resources the operator creates for the Kafka cluster.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{
    ContainerTemplate, InternalServiceTemplate, PodDisruptionBudgetTemplate, PodSetPodTemplate,
    ResourceTemplate,
};

/// Templates for the resources of the Kafka brokers and controllers.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaClusterTemplate {
    /// The Kafka pods.
    pub pod: Option<PodSetPodTemplate>,
    /// The internal bootstrap service.
    pub bootstrap_service: Option<InternalServiceTemplate>,
    /// The headless service covering every broker.
    pub brokers_service: Option<InternalServiceTemplate>,
    /// The bootstrap services of external listeners.
    pub external_bootstrap_service: Option<ResourceTemplate>,
    /// The per-broker services of external listeners.
    pub per_pod_service: Option<ResourceTemplate>,
    /// The bootstrap routes of route listeners.
    pub external_bootstrap_route: Option<ResourceTemplate>,
    /// The per-broker routes of route listeners.
    pub per_pod_route: Option<ResourceTemplate>,
    /// The bootstrap ingresses of ingress listeners.
    pub external_bootstrap_ingress: Option<ResourceTemplate>,
    /// The per-broker ingresses of ingress listeners.
    pub per_pod_ingress: Option<ResourceTemplate>,
    /// The persistent volume claims of the Kafka nodes.
    pub persistent_volume_claim: Option<ResourceTemplate>,
    /// The pod disruption budget of the Kafka pods.
    pub pod_disruption_budget: Option<PodDisruptionBudgetTemplate>,
    /// The Kafka container.
    pub kafka_container: Option<ContainerTemplate>,
    /// The init container that works out the broker rack.
    pub init_container: Option<ContainerTemplate>,
    /// The Secret holding the cluster CA certificate.
    pub cluster_ca_cert: Option<ResourceTemplate>,
    /// The service account of the Kafka pods.
    pub service_account: Option<ResourceTemplate>,
    /// The Secret holding the JMX credentials.
    pub jmx_secret: Option<ResourceTemplate>,
    /// The cluster role binding used by the rack init container.
    pub cluster_role_binding: Option<ResourceTemplate>,
    /// The `StrimziPodSet`s of the Kafka nodes.
    pub pod_set: Option<ResourceTemplate>,
}
